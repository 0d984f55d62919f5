//! `[vswitch.cpu]`: the hosts' PMD cores (C2QoS), resolved, with each VM's C_alloc
//! and weight, and the deployment rule that C2TB needs.

use super::Ctx;
use crate::scenario::keys::join;
use crate::scenario::ScenarioError;
use crate::vswitch::c2qos::{cost, CpuSetup, CpuSpec};
use crate::vswitch::{HostVswitch, Vm};

/// The CPU model of a scenario, if it has one: C_alloc of each VM is its `cycles`,
/// or what its guarantee costs at the SLA preference (§IV-A-1). With C2TB, the
/// C_alloc of the VMs a core polls may not add up to more than the core's cycles
/// (§IV: "without these rules ... no strategy can work").
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
    let (size, flows) = params.preference;
    let c_alloc: Vec<u64> = vms
        .iter()
        .map(|v| {
            v.cycles.unwrap_or_else(|| {
                cost::c_alloc(&params.costs, v.guarantee_bps, size, flows, params.factor)
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
    if params.c2tb.is_some() {
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
                    let what = if vms[last].cycles.is_some() {
                        "cycles"
                    } else {
                        "guarantee"
                    };
                    let key = join(vm_keys[last].trim_end_matches(".name"), what);
                    return Err(ctx.err(&key, m));
                }
            }
        }
    }
    Ok(Some(CpuSetup {
        params,
        c_alloc,
        weights,
    }))
}
