//! `[vswitch.cpu]`: the hosts' PMD cores (C2QoS), resolved, with each VM's
//! deployment coefficient, C_alloc, weight, HBS class and policer, and the
//! deployment rule that C2TB needs.

use super::Ctx;
use crate::scenario::keys::join;
use crate::scenario::ScenarioError;
use crate::vswitch::c2qos::{cost, CpuParams, CpuSetup, CpuSpec, PolicerUnit};
use crate::vswitch::{HostVswitch, Vm};

/// The CPU model of a scenario, if it has one. A VM's packets cost Π R_i times
/// their cycles: R_NUMA if its memory is remote, R_#VMs for its host's number of
/// VMs, and the host-wide `factor` (§III-C). C_alloc is its `cycles`, or what its
/// guarantee costs at its SLA preference (§IV-A-1). Its policer (ingress policing)
/// runs at its guarantee, in bytes or in packets of its preference's size. With
/// C2TB, the C_alloc of the VMs a core polls may not add up to more than the core's
/// cycles (§IV: "without these rules ... no strategy can work").
pub fn build(
    ctx: &Ctx,
    spec: Option<&CpuSpec>,
    vms: &[Vm],
    hosts: &[HostVswitch],
    vm_keys: &[String],
) -> Result<Option<CpuSetup>, ScenarioError> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let params = spec
        .resolve()
        .map_err(|(k, m)| ctx.err(&join("vswitch.cpu", &k), m))?;
    let mut on_host = vec![0usize; vms.len()];
    for h in hosts {
        for v in &h.vms {
            on_host[v.idx()] = h.vms.len();
        }
    }
    let factor: Vec<f64> = (vms.iter().zip(&on_host))
        .map(|(v, &n)| {
            let numa = if v.cpu.remote {
                params.numa_remote
            } else {
                1.0
            };
            params.factor * numa * params.vms_factor.of(n)
        })
        .collect();
    let preference = |v: &Vm| v.cpu.preference.unwrap_or(params.preference);
    let c_alloc: Vec<u64> = (vms.iter().zip(&factor))
        .map(|(v, &r)| {
            v.cpu.cycles.unwrap_or_else(|| {
                let (size, flows) = preference(v);
                cost::c_alloc(&params.costs, v.guarantee_bps, size, flows, r)
            })
        })
        .collect();
    let weights = vms
        .iter()
        .map(|v| {
            v.weight
                .map_or(v.guarantee_bps, |w| (w * 1e6).round() as u64)
                .max(1)
        })
        .collect();
    let (unit, burst) =
        (params.policer.as_ref()).map_or((PolicerUnit::Bytes, 0), |p| (p.unit, p.burst));
    let policer = vms
        .iter()
        .map(|v| match unit {
            PolicerUnit::Packets => {
                let s = preference(v).0 as u64;
                ((v.guarantee_bps / (8 * s)).max(1), (burst / s).max(1))
            }
            PolicerUnit::Bytes => (v.guarantee_bps, burst),
        })
        .collect();
    if params.c2tb.is_some() {
        deployment_rule(ctx, &params, &c_alloc, vms, hosts, vm_keys)?;
    }
    Ok(Some(CpuSetup {
        priority: vms.iter().map(|v| v.cpu.priority.unwrap_or(8)).collect(),
        params,
        c_alloc,
        weights,
        factor,
        policer,
        multiple: Vec::new(),
    }))
}

/// Σ C_alloc of the VMs each core polls fits the core.
fn deployment_rule(
    ctx: &Ctx,
    params: &CpuParams,
    c_alloc: &[u64],
    vms: &[Vm],
    hosts: &[HostVswitch],
    vm_keys: &[String],
) -> Result<(), ScenarioError> {
    for h in hosts {
        for core in 0..params.cores as usize {
            let polled: Vec<usize> = (h.vms.iter().skip(core))
                .step_by(params.cores as usize)
                .map(|v| v.idx())
                .collect();
            let sum: u64 = polled.iter().map(|&i| c_alloc[i]).sum();
            if sum > params.hz {
                let last = *polled.last().unwrap_or(&0);
                let m = format!(
                    "the VMs PMD core {core} of their host polls would be allocated {:.4} G \
                     cycles/s in all (C_alloc, from their `cycles` or their guarantees), more \
                     than the core's {:.4} G; expected allocations that fit (fewer or smaller \
                     guarantees, more cores, or explicit `cycles`)",
                    sum as f64 / 1e9,
                    params.hz as f64 / 1e9
                );
                let what = if vms[last].cpu.cycles.is_some() {
                    "cycles"
                } else {
                    "guarantee"
                };
                let key = join(vm_keys[last].trim_end_matches(".name"), what);
                return Err(ctx.err(&key, m));
            }
        }
    }
    Ok(())
}
