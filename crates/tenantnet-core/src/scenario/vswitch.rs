//! From `[[tenants]]` and `[vswitch]` to the simulation's VMs and per-host
//! vswitches, with every check that needs the topology: hosts exist, guarantees
//! fit the capacity at every moment, weights are given for all VMs of a host or
//! none. Also resolves a workload's `src`/`dst` against its tenant's VMs.

use super::build::{glob, resolve_hosts, Ctx};
use super::parse::{join, ScenarioError};
use super::tenants::{MbfqSpec, PolicySpec, TenantSpec, VswitchSpec};
use super::workloads::Hosts;
use crate::net::{HostId, Network, VmId};
use crate::vswitch::{HostVswitch, MbfqParams, PolicyConfig, Vm, VmChange, VswitchParams};
use crate::workload::TrafficEnd;

/// The VMs a scenario declares.
pub struct BuiltTenants {
    /// Declared tenant names, in order (their tenant indices).
    pub names: Vec<String>,
    /// VMs of each declared tenant.
    pub vms_of: Vec<Vec<VmId>>,
    /// What the simulation gets.
    pub params: VswitchParams,
    /// Each VM's egress queue, bytes (`vswitch.queue`).
    pub vm_queue: u64,
}

/// A host's policy with its parameters: they travel with the variant.
fn policy(p: PolicySpec, mbfq: &MbfqParams) -> PolicyConfig {
    match p {
        PolicySpec::None => PolicyConfig::None(()),
        PolicySpec::Static => PolicyConfig::Static(()),
        PolicySpec::Mbfq => PolicyConfig::Mbfq(mbfq.clone()),
    }
}

fn mbfq_params(ctx: &Ctx, m: &MbfqSpec) -> Result<MbfqParams, ScenarioError> {
    let d = MbfqParams::default();
    let k = |f: &str| join("vswitch.mbfq", f);
    let p = MbfqParams {
        interval: m.interval.map_or(d.interval, |x| x.0),
        reclaim_after: m.reclaim_after.map_or(d.reclaim_after, |x| x.0),
        reclaim_below: m.reclaim_below.unwrap_or(d.reclaim_below),
        headroom: m.headroom.unwrap_or(d.headroom),
        full_use: m.full_use.unwrap_or(d.full_use),
        ramp: m.ramp.unwrap_or(d.ramp),
        ramp_cap: m.ramp_cap.unwrap_or(d.ramp_cap),
        ramp_final: m.ramp_final.unwrap_or(d.ramp_final),
        floor_bps: m.floor.map_or(d.floor_bps, |x| x.0 as f64),
        activate_above: m.activate_above.unwrap_or(d.activate_above),
    };
    if p.interval < super::transport::MIN_TIMER {
        return Err(ctx.err(
            &k("interval"),
            "expected at least 1us (the shortest timer tenantnet runs)",
        ));
    }
    for (f, v) in [
        ("reclaim_below", p.reclaim_below),
        ("full_use", p.full_use),
        ("ramp_cap", p.ramp_cap),
    ] {
        if !(v > 0.0 && v <= 1.0) {
            return Err(ctx.err(&k(f), "expected a fraction in (0, 1]"));
        }
    }
    if !(0.0..=1.0).contains(&p.activate_above) {
        return Err(ctx.err(&k("activate_above"), "expected a fraction in [0, 1]"));
    }
    for (f, v) in [
        ("headroom", p.headroom),
        ("ramp", p.ramp[0]),
        ("ramp", p.ramp[1]),
        ("ramp_final", p.ramp_final),
    ] {
        if !(v.is_finite() && v >= 1.0) {
            return Err(ctx.err(&k(f), "expected a multiplier of at least 1"));
        }
    }
    if p.floor_bps < 1.0 {
        return Err(ctx.err(&k("floor"), "expected a positive rate"));
    }
    Ok(p)
}

/// A rate for messages: `12 Gb/s`, `100 Mb/s`.
fn show(bps: u64) -> String {
    let (v, u) = if bps >= 1_000_000_000 {
        (bps as f64 / 1e9, "Gb/s")
    } else if bps >= 1_000_000 {
        (bps as f64 / 1e6, "Mb/s")
    } else {
        (bps as f64, "b/s")
    };
    format!("{} {u}", (v * 1000.0).round() / 1000.0)
}

fn one_host(ctx: &Ctx, net: &Network, name: &str, key: &str) -> Result<HostId, ScenarioError> {
    let found = resolve_hosts(ctx, net, &Hosts(vec![name.to_string()]), key)?;
    match found.as_slice() {
        [h] if net.host_name(*h) == name => Ok(*h),
        _ => Err(ctx.err(key, "expected the name of one host, not a pattern")),
    }
}

fn positive_weight(ctx: &Ctx, w: Option<f64>, key: &str) -> Result<(), ScenarioError> {
    match w {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(ctx.err(key, "expected a positive number")),
        _ => Ok(()),
    }
}

/// Builds the VMs of `tenants` and the vswitches of their hosts.
pub fn build(
    ctx: &Ctx,
    net: &Network,
    tenants: &[TenantSpec],
    vs: &VswitchSpec,
    packet: u64,
) -> Result<BuiltTenants, ScenarioError> {
    let mbfq = mbfq_params(ctx, &vs.mbfq)?;
    // whether packets fit is checked against each workload's transport by the caller
    let limit = vs.queue.0.bytes(packet);
    let burst = vs.burst.0.bytes(packet);
    for name in vs.hosts.keys() {
        one_host(ctx, net, name, &join("vswitch.hosts", name))?;
    }
    let mut names: Vec<String> = Vec::new();
    let mut vms_of = Vec::new();
    let mut vms: Vec<Vm> = Vec::new();
    let mut keys: Vec<String> = Vec::new(); // where each VM was declared
    let mut vm_names = std::collections::HashSet::new();
    let mut changes = Vec::new();
    for (ti, t) in tenants.iter().enumerate() {
        let tk = format!("tenants[{ti}]");
        if names.contains(&t.name) {
            return Err(ctx.err(&join(&tk, "name"), "tenant declared twice"));
        }
        names.push(t.name.clone());
        let mut mine = Vec::new();
        let mut add = |vm: Vm, key: String, vms: &mut Vec<Vm>| -> Result<VmId, ScenarioError> {
            if !vm_names.insert(vm.name.clone()) {
                return Err(ctx.err(&key, format!("VM name {:?} is used twice", vm.name)));
            }
            vms.push(vm);
            keys.push(key);
            Ok(VmId(vms.len() as u32 - 1))
        };
        let rate_of = |r: Option<crate::units::Rate>, key: &str| -> Result<u64, ScenarioError> {
            match r.or(t.guarantee) {
                None => Err(ctx.err(
                    key,
                    "required key is missing; give the VM or its tenant a guarantee",
                )),
                Some(x) if x.0 == 0 => Err(ctx.err(key, "expected a positive rate")),
                Some(x) => Ok(x.0),
            }
        };
        if let Some(sel) = &t.hosts {
            let key = join(&tk, "hosts");
            for h in resolve_hosts(ctx, net, sel, &key)? {
                let g = rate_of(None, &join(&tk, "guarantee"))?;
                let name = format!("{}/{}", t.name, net.host_name(h));
                mine.push(add(Vm::new(name, ti as u32, h, g), key.clone(), &mut vms)?);
            }
        }
        for (j, v) in t.vms.iter().enumerate() {
            let vk = format!("{tk}.vms[{j}]");
            let h = one_host(ctx, net, &v.host, &join(&vk, "host"))?;
            let g = rate_of(v.guarantee, &join(&vk, "guarantee"))?;
            positive_weight(ctx, v.weight, &join(&vk, "weight"))?;
            let name = v
                .name
                .clone()
                .unwrap_or_else(|| format!("{}/vm{j}", t.name));
            let mut vm = Vm::new(name, ti as u32, h, g);
            vm.weight = v.weight;
            let id = add(vm, join(&vk, "name"), &mut vms)?;
            mine.push(id);
            for (c, ch) in v.changes.iter().enumerate() {
                let ck = format!("{vk}.changes[{c}]");
                if ch.guarantee.0 == 0 {
                    return Err(ctx.err(&join(&ck, "guarantee"), "expected a positive rate"));
                }
                positive_weight(ctx, ch.weight, &join(&ck, "weight"))?;
                if ch.weight.is_some() != v.weight.is_some() {
                    return Err(ctx.err(
                        &join(&ck, "weight"),
                        "give a weight here exactly when the VM has one",
                    ));
                }
                changes.push((
                    VmChange {
                        at: ch.at.0,
                        vm: id,
                        guarantee_bps: ch.guarantee.0,
                        weight: ch.weight,
                    },
                    join(&ck, "guarantee"),
                ));
            }
        }
        if mine.is_empty() {
            return Err(ctx.err(&tk, "a tenant needs VMs; expected hosts or vms"));
        }
        vms_of.push(mine);
    }
    changes.sort_by_key(|c| c.0.at);

    // one vswitch per host with VMs
    let mut hosts: Vec<HostVswitch> = Vec::new();
    let mut configs: Vec<PolicyConfig> = Vec::new();
    let mut vswitch_of: Vec<Option<usize>> = vec![None; net.hosts.len()];
    for (i, vm) in vms.iter_mut().enumerate() {
        let k = match vswitch_of[vm.host.idx()] {
            Some(k) => k,
            None => {
                let name = net.host_name(vm.host);
                let nic = net.host_rate(vm.host);
                let c = vs.capacity.map_or(nic, |r| r.0);
                if c == 0 || c > nic {
                    return Err(ctx.err(
                        "vswitch.capacity",
                        format!(
                            "expected a positive rate at most host {name}'s NIC rate ({})",
                            show(nic)
                        ),
                    ));
                }
                configs.push(policy(*vs.hosts.get(name).unwrap_or(&vs.policy), &mbfq));
                hosts.push(HostVswitch {
                    host: vm.host,
                    policy: PolicyConfig::None(()).build(&[]),
                    service: Default::default(),
                    capacity_bps: c,
                    vms: Vec::new(),
                    nic_at_tick: 0,
                });
                vswitch_of[vm.host.idx()] = Some(hosts.len() - 1);
                hosts.len() - 1
            }
        };
        hosts[k].vms.push(VmId(i as u32));
        vm.vswitch = k as u32;
    }
    for (h, cfg) in hosts.iter_mut().zip(&configs) {
        h.policy = cfg.build(&h.vms);
    }
    for h in &hosts {
        let weighted = h
            .vms
            .iter()
            .filter(|v| vms[v.idx()].weight.is_some())
            .count();
        if weighted != 0 && weighted != h.vms.len() {
            let v = h
                .vms
                .iter()
                .find(|v| vms[v.idx()].weight.is_none())
                .unwrap();
            return Err(ctx.err(
                &keys[v.idx()],
                format!(
                    "give every VM on host {} a weight, or none",
                    net.host_name(h.host)
                ),
            ));
        }
        // guarantees must fit C at the start and after every change
        let mut g: Vec<u64> = h.vms.iter().map(|v| vms[v.idx()].guarantee_bps).collect();
        let check = |g: &[u64], key: &str| -> Result<(), ScenarioError> {
            let sum: u64 = g.iter().sum();
            if sum > h.capacity_bps {
                return Err(ctx.err(
                    key,
                    format!(
                        "the VMs on host {} would be guaranteed {} in all, more than its capacity C = {}",
                        net.host_name(h.host),
                        show(sum),
                        show(h.capacity_bps)
                    ),
                ));
            }
            Ok(())
        };
        check(&g, &keys[h.vms[h.vms.len() - 1].idx()])?;
        for (c, key) in &changes {
            if let Some(i) = h.vms.iter().position(|v| *v == c.vm) {
                g[i] = c.guarantee_bps;
                check(&g, key)?;
            }
        }
    }
    Ok(BuiltTenants {
        names,
        vms_of,
        params: VswitchParams {
            vms,
            hosts,
            changes: changes.into_iter().map(|c| c.0).collect(),
            // the period of MBFQ's macroscheduler is every host's tick
            tick: mbfq.interval,
            queue: limit,
            burst,
        },
        vm_queue: limit,
    })
}

/// The endpoints a workload's `src`/`dst` selector names. For a tenant with VMs,
/// a pattern selects the tenant's VMs whose name or host it matches (`"all"`: all of
/// them); a pattern that matches none of them names hosts, which take part as
/// themselves (an external client, say). Without VMs every pattern names hosts.
pub fn resolve_ends(
    ctx: &Ctx,
    net: &Network,
    vms: &[Vm],
    mine: &[VmId],
    sel: &Hosts,
    key: &str,
) -> Result<Vec<TrafficEnd>, ScenarioError> {
    let mut chosen_vms = vec![false; mine.len()];
    let mut chosen = vec![false; net.hosts.len()];
    for pat in &sel.0 {
        let mut any = false;
        for (i, v) in mine.iter().enumerate() {
            let vm = &vms[v.idx()];
            if pat == "all" || glob(pat, &vm.name) || glob(pat, net.host_name(vm.host)) {
                chosen_vms[i] = true;
                any = true;
            }
        }
        if !any {
            for h in resolve_hosts(ctx, net, &Hosts(vec![pat.clone()]), key)? {
                chosen[h.idx()] = true;
            }
        }
    }
    let chosen_hosts = (0..net.hosts.len())
        .filter(|&i| chosen[i])
        .map(|i| HostId(i as u32));
    let mut ends: Vec<TrafficEnd> = mine
        .iter()
        .zip(&chosen_vms)
        .filter(|(_, c)| **c)
        .map(|(v, _)| TrafficEnd {
            host: vms[v.idx()].host,
            vm: Some(*v),
        })
        .collect();
    ends.extend(chosen_hosts.map(|h| TrafficEnd { host: h, vm: None }));
    Ok(ends)
}
