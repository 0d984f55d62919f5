//! From `[[tenants]]` and `[vswitch]` to the simulation's VMs and per-host
//! vswitches, with every check that needs the topology: hosts exist, guarantees
//! fit the capacity at every moment, weights are given for all VMs of a host or
//! none. Also resolves a workload's `src`/`dst` against its tenant's VMs.

use super::{glob, resolve_hosts, Ctx};
use crate::engine::Time;
use crate::net::{HostId, Network, VmId};
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::tenants::{PolicyTables, TenantSpec, VmSpec, VswitchSpec};
use crate::scenario::workloads::Hosts;
use crate::vswitch::partition::PairGuarantees;
use crate::vswitch::{HostVswitch, PolicyKind, Vm, VmChange, VmCpu, VswitchParams, DEFAULT_TICK};
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

/// A rate for messages: `12 Gb/s`, `100 Mb/s`.
pub(super) fn show(bps: u64) -> String {
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

/// The hosts' tick and the key that set it: `vswitch.interval`, else the shortest
/// period of the policies the hosts run (a table's, set or default), else
/// [`DEFAULT_TICK`]. The period of every policy in use must be a whole multiple of
/// it.
fn tick(
    ctx: &Ctx,
    vs: &VswitchSpec,
    tables: &PolicyTables,
) -> Result<(Time, String), ScenarioError> {
    // a policy no host runs does not constrain the tick, unless its period is set
    let used = |k: PolicyKind| vs.policy == k || vs.hosts.values().any(|h| *h == k);
    let periods: Vec<&(PolicyKind, String, Time, bool)> =
        tables.periods.iter().filter(|p| used(p.0) || p.3).collect();
    let shortest = periods.iter().min_by_key(|p| (p.2, !p.3));
    let (t, key) = match (vs.interval, shortest) {
        (Some(t), _) => (t.0, "vswitch.interval".to_string()),
        (None, Some((_, k, t, true))) => (*t, join("vswitch", k)),
        (None, Some((_, _, t, false))) => (*t, "vswitch.interval".to_string()),
        (None, None) => (DEFAULT_TICK, "vswitch.interval".to_string()),
    };
    if t < super::transport::MIN_TIMER {
        return Err(ctx.err(&key, crate::units::MIN_TIMER_TEXT));
    }
    for (_, k, p, _) in periods {
        if p % t != 0 {
            return Err(ctx.err(
                &join("vswitch", k),
                format!(
                    "expected a whole multiple of the hosts' tick ({key} = {}); set {} to one",
                    crate::units::format_duration(t),
                    join("vswitch", k)
                ),
            ));
        }
    }
    Ok((t, key))
}

/// The VMs declared so far, with where each was declared (for errors).
#[derive(Default)]
struct Declared {
    names: Vec<String>,
    vms_of: Vec<Vec<VmId>>,
    vms: Vec<Vm>,
    keys: Vec<String>,
    vm_names: std::collections::HashSet<String>,
    changes: Vec<(VmChange, String)>,
}

impl Declared {
    fn add(&mut self, ctx: &Ctx, vm: Vm, key: String) -> Result<VmId, ScenarioError> {
        if !self.vm_names.insert(vm.name.clone()) {
            return Err(ctx.err(
                &key,
                format!("VM name {} is used twice", crate::units::quoted(&vm.name)),
            ));
        }
        self.vms.push(vm);
        self.keys.push(key);
        Ok(VmId(self.vms.len() as u32 - 1))
    }

    /// Tenant `ti`'s VMs: one per host of `hosts`, then those listed.
    fn tenant(
        &mut self,
        ctx: &Ctx,
        net: &Network,
        ti: usize,
        t: &TenantSpec,
    ) -> Result<(), ScenarioError> {
        let tk = format!("tenants[{ti}]");
        if self.names.contains(&t.name) {
            return Err(ctx.err(&join(&tk, "name"), "tenant declared twice"));
        }
        self.names.push(t.name.clone());
        let mut mine = Vec::new();
        if let Some(sel) = &t.hosts {
            let key = join(&tk, "hosts");
            for h in resolve_hosts(ctx, net, sel, &key)? {
                let g = guarantee(ctx, t, None, &join(&tk, "guarantee"))?;
                let name = format!("{}/{}", t.name, net.host_name(h));
                mine.push(self.add(ctx, Vm::new(name, ti as u32, h, g), key.clone())?);
            }
        }
        for (j, v) in t.vms.iter().enumerate() {
            mine.push(self.vm(ctx, net, ti, t, j, v)?);
        }
        if t.size.is_some() && !mine.is_empty() {
            return Err(ctx.err(&join(&tk, "size"), "give either size or hosts and vms"));
        }
        if mine.is_empty() && t.size.is_none() {
            return Err(ctx.err(&tk, "a tenant needs VMs; expected hosts, vms or size"));
        }
        self.vms_of.push(mine);
        Ok(())
    }

    /// VM `j` listed by tenant `ti`, and its guarantee changes.
    fn vm(
        &mut self,
        ctx: &Ctx,
        net: &Network,
        ti: usize,
        t: &TenantSpec,
        j: usize,
        v: &VmSpec,
    ) -> Result<VmId, ScenarioError> {
        let vk = format!("tenants[{ti}].vms[{j}]");
        let h = one_host(ctx, net, &v.host, &join(&vk, "host"))?;
        let g = guarantee(ctx, t, v.guarantee, &join(&vk, "guarantee"))?;
        positive_weight(ctx, v.weight, &join(&vk, "weight"))?;
        let name = v
            .name
            .clone()
            .unwrap_or_else(|| format!("{}/vm{j}", t.name));
        let mut vm = Vm::new(name, ti as u32, h, g);
        vm.weight = v.weight;
        if let Some(p) = v.priority.filter(|p| !(1..=8).contains(p)) {
            return Err(ctx.err(
                &join(&vk, "priority"),
                format!("{p}; expected an HBS class from 1 (highest) to 8"),
            ));
        }
        let preference = (v.preference.as_ref())
            .map(|p| p.resolve())
            .transpose()
            .map_err(|m| ctx.err(&join(&vk, "preference.packet_size"), m))?;
        vm.cpu = VmCpu {
            cycles: v.cycles.map(|c| c.0),
            priority: v.priority,
            remote: v.numa == crate::vswitch::c2qos::Numa::Remote,
            preference,
        };
        let id = self.add(ctx, vm, join(&vk, "name"))?;
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
            let change = VmChange {
                at: ch.at.0,
                vm: id,
                guarantee_bps: ch.guarantee.0,
                weight: ch.weight,
            };
            self.changes.push((change, join(&ck, "guarantee")));
        }
        Ok(id)
    }
}

/// A VM's guarantee: its own, else its tenant's.
fn guarantee(
    ctx: &Ctx,
    t: &TenantSpec,
    own: Option<crate::units::Rate>,
    key: &str,
) -> Result<u64, ScenarioError> {
    match own.or(t.guarantee) {
        None => Err(ctx.err(
            key,
            "required key is missing; give the VM or its tenant a guarantee",
        )),
        Some(x) if x.0 == 0 => Err(ctx.err(key, "expected a positive rate")),
        Some(x) => Ok(x.0),
    }
}

/// One vswitch per host with VMs, in the order of their first VM, each with its
/// policy (`vswitch.hosts` or `vswitch.policy`) built for its VMs.
fn vswitches(
    ctx: &Ctx,
    net: &Network,
    vs: &VswitchSpec,
    tables: &PolicyTables,
    vms: &mut [Vm],
) -> Result<Vec<HostVswitch>, ScenarioError> {
    let mut hosts: Vec<HostVswitch> = Vec::new();
    let mut kinds: Vec<PolicyKind> = Vec::new();
    let mut vswitch_of: Vec<Option<usize>> = vec![None; net.hosts.len()];
    for (i, vm) in vms.iter_mut().enumerate() {
        let k = match vswitch_of[vm.host.idx()] {
            Some(k) => k,
            None => {
                let name = net.host_name(vm.host);
                let nic = net.host_rate(vm.host);
                let c = vs.capacity.map_or(nic, |r| r.0);
                if c == 0 || c > nic {
                    let m = format!(
                        "expected a positive rate at most host {name}'s NIC rate ({})",
                        show(nic)
                    );
                    return Err(ctx.err("vswitch.capacity", m));
                }
                kinds.push(*vs.hosts.get(name).unwrap_or(&vs.policy));
                hosts.push(HostVswitch {
                    host: vm.host,
                    policy: tables.config(PolicyKind::default()).build(&[]),
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
    for (h, kind) in hosts.iter_mut().zip(kinds) {
        h.policy = tables.config(kind).build(&h.vms);
    }
    Ok(hosts)
}

/// Host `h`'s VMs have weights all or none, and their guarantees fit its capacity
/// at the start and after every change.
fn check_host(
    ctx: &Ctx,
    net: &Network,
    h: &HostVswitch,
    d: &Declared,
) -> Result<(), ScenarioError> {
    let vms = &d.vms;
    if let Some(v) = h.vms.iter().find(|v| vms[v.idx()].weight.is_none()) {
        if h.vms.iter().any(|v| vms[v.idx()].weight.is_some()) {
            let m = format!(
                "give every VM on host {} a weight, or none",
                net.host_name(h.host)
            );
            return Err(ctx.err(&d.keys[v.idx()], m));
        }
    }
    let mut g: Vec<u64> = h.vms.iter().map(|v| vms[v.idx()].guarantee_bps).collect();
    let check = |g: &[u64], key: &str| -> Result<(), ScenarioError> {
        let sum: u64 = g.iter().sum();
        if sum <= h.capacity_bps {
            return Ok(());
        }
        Err(ctx.err(
            key,
            format!(
                "the VMs on host {} would be guaranteed {} in all, more than its capacity C = {}",
                net.host_name(h.host),
                show(sum),
                show(h.capacity_bps)
            ),
        ))
    };
    check(&g, &d.keys[h.vms[h.vms.len() - 1].idx()])?;
    for (c, key) in &d.changes {
        if let Some(i) = h.vms.iter().position(|v| *v == c.vm) {
            g[i] = c.guarantee_bps;
            check(&g, key)?;
        }
    }
    Ok(())
}

/// Dynamic guarantee partitioning runs on the per-pair channels of `trinity` and
/// `elasticswitch`: with no host on either it would never run.
fn check_partitioning(ctx: &Ctx, vs: &VswitchSpec) -> Result<(), ScenarioError> {
    let channels = |k: &PolicyKind| matches!(k, PolicyKind::Trinity | PolicyKind::ElasticSwitch);
    if vs.pair_guarantees != PairGuarantees::Dynamic
        || channels(&vs.policy)
        || vs.hosts.values().any(channels)
    {
        return Ok(());
    }
    Err(ctx.err(
        "vswitch.pair_guarantees",
        format!(
            "it re-partitions guarantees on the per-pair channels of \"trinity\" \
             and \"elasticswitch\", but vswitch.policy is \"{}\" and no host has either; \
             use \"hose\" for fixed shares",
            vs.policy.name()
        ),
    ))
}

/// Builds the VMs of `tenants` and the vswitches of their hosts.
pub fn build(
    ctx: &Ctx,
    net: &Network,
    tenants: &[TenantSpec],
    vs: &VswitchSpec,
    packet: u64,
) -> Result<BuiltTenants, ScenarioError> {
    let tables = PolicyTables::resolve(vs).map_err(|(k, m)| ctx.err(&join("vswitch", &k), m))?;
    check_partitioning(ctx, vs)?;
    let (tick, tick_key) = tick(ctx, vs, &tables)?;
    // whether packets fit is checked against each workload's transport by the caller
    let limit = vs.queue.0.bytes(packet);
    let burst = vs.burst.0.bytes(packet);
    for name in vs.hosts.keys() {
        one_host(ctx, net, name, &join("vswitch.hosts", name))?;
    }
    let mut d = Declared::default();
    for (ti, t) in tenants.iter().enumerate() {
        d.tenant(ctx, net, ti, t)?;
    }
    d.changes.sort_by_key(|c| c.0.at);
    let hosts = vswitches(ctx, net, vs, &tables, &mut d.vms)?;
    for h in &hosts {
        check_host(ctx, net, h, &d)?;
    }
    let pipes = super::pipes::pipes(ctx, net, tenants, &d.vms, &d.vms_of)?;
    let cpu = super::cpu::build(ctx, vs.cpu.as_ref(), &d.vms, &hosts, &d.keys)?;
    Ok(BuiltTenants {
        names: d.names,
        vms_of: d.vms_of,
        params: VswitchParams {
            vms: d.vms,
            hosts,
            changes: d.changes.into_iter().map(|c| c.0).collect(),
            tick,
            tick_key,
            queue: limit,
            burst,
            pipes,
            pair_guarantees: vs.pair_guarantees,
            cpu,
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
