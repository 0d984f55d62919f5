//! `[qshare]`: the datacenter QShare's controller sees (from the topology before it
//! is wired), every declared tenant pinned where its VMs run, and the controller.

use std::collections::BTreeSet;

use super::lifetimes::Lifetime;
use super::tenants::BuiltTenants;
use super::Ctx;
use crate::control::qshare::{Member, QShare, QShareParams};
use crate::control::Controllers;
use crate::engine::Time;
use crate::net::host_nic::HostNic;
use crate::net::{HostId, Network, NetworkBuilder, VmId};
use crate::qshare::{Datacenter, Hose, LogOp, Placer, Request, Strategy};
use crate::scenario::parse::ScenarioError;
use crate::scenario::qshare::{QShareSpec, SharedRate};
use crate::scenario::spec::NetworkSpec;
use crate::scenario::tenants::{TenantSpec, VmSpec};
use crate::switch::sched::SchedulerKind;

/// The datacenter of the topology in `b` with `nw.queues` queues per port, after
/// checking that the ports can hold a binding.
pub fn datacenter(
    ctx: &Ctx,
    spec: &QShareSpec,
    nw: &NetworkSpec,
    b: &NetworkBuilder,
) -> Result<Datacenter, ScenarioError> {
    if nw.queues < 2 {
        return Err(ctx.err(
            "network.queues",
            "QShare binds tenants to a port's queues: expected 2 or more (the paper's switches have 8)",
        ));
    }
    if !matches!(
        nw.scheduler,
        SchedulerKind::Wfq | SchedulerKind::Dwrr | SchedulerKind::Wrr
    ) {
        return Err(ctx.err(
            "network.scheduler",
            "QShare sets queue weights: expected \"wfq\", \"dwrr\" or \"wrr\"",
        ));
    }
    if nw.host_nic != HostNic::Dscp {
        return Err(ctx.err(
            "network.host_nic",
            format!(
                "QShare schedules each D-tenant in its own queue on the servers' NICs too \
                 (software WFQ in the hypervisor, §6), which \"{}\" cannot: expected \"dscp\"",
                nw.host_nic.name()
            ),
        ));
    }
    if spec.interval.0 < crate::units::MIN_TIMER {
        return Err(ctx.err("qshare.interval", crate::units::MIN_TIMER_TEXT));
    }
    if !(1..=100).contains(&spec.max_weight) {
        return Err(ctx.err("qshare.max_weight", "expected a weight from 1 to 100"));
    }
    if !(spec.k.is_finite() && spec.k > 0.0) {
        return Err(ctx.err("qshare.k", "expected a positive number"));
    }
    if spec.ha.is_some_and(|f| !(0.0..1.0).contains(&f)) {
        return Err(ctx.err("qshare.ha", "expected a survival ratio from 0 to below 1"));
    }
    if !(0.0..=1.0).contains(&spec.cq_weight) {
        return Err(ctx.err("qshare.cq_weight", "expected a weight from 0 to 1"));
    }
    Datacenter::from_builder(b, 0, nw.queues).map_err(|e| ctx.err("topology", e))
}

/// VM slots per server when `qshare.slots` is absent and no host runs more: the
/// paper's testbed (§7: "10 servers with 10 VM slots each").
pub const DEFAULT_SLOTS: u32 = 10;

/// Where QShare embedded the tenants: the placer, each tenant's id in it (`None`:
/// a tenant without VMs), and the tenants with every one given by its `size` turned
/// into the VMs Algorithm 1 placed (`<tenant>/vm<i>`, in server order).
pub struct Embedded {
    /// The placer after every arrival and departure.
    pub placer: Placer,
    /// Each tenant's placer id.
    pub ids: Vec<Option<u32>>,
    /// The tenants as the run builds them.
    pub tenants: Vec<TenantSpec>,
    /// Every change of the placer, in order, with its time: replayed on a placer
    /// over `empty`, it rebuilds the datacenter at any time of the run.
    pub timeline: Vec<(Time, LogOp)>,
    /// The datacenter before any tenant arrived.
    pub empty: Datacenter,
}

/// What happens to a tenant at a time: it departs, it is pinned where its VMs
/// run, or it is placed by Algorithm 1 (in this order at the same time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    Depart,
    Pin,
    Place,
}

/// The changes of the tenants with VMs (`pinned[t]`: whether tenant `t`'s VMs are
/// given) or a size, in the order they happen: by time, then departures first,
/// then pinned tenants before placed ones (the order without lifetimes), then
/// by tenant.
fn changes(
    tenants: &[TenantSpec],
    lives: &[Lifetime],
    pinned: &[bool],
) -> Vec<(Time, Change, usize)> {
    let mut out = Vec::new();
    for (t, ts) in tenants.iter().enumerate() {
        let arrive = match (pinned[t], ts.size) {
            (true, _) => Change::Pin,
            (false, Some(_)) => Change::Place,
            _ => continue,
        };
        out.push((lives[t].arrive, arrive, t));
        if let Some(d) = lives[t].depart {
            out.push((d, Change::Depart, t));
        }
    }
    out.sort();
    out
}

/// The most VMs of pinned tenants that one host runs at any time.
fn most_at_once(
    vms: &[crate::vswitch::Vm],
    vms_of: &[Vec<VmId>],
    order: &[(Time, Change, usize)],
    hosts: usize,
) -> u32 {
    let mut now = vec![0u32; hosts];
    let mut most = 0;
    for &(_, c, t) in order {
        for v in vms_of.get(t).map_or(&[][..], |v| v.as_slice()) {
            let h = &mut now[vms[v.idx()].host.idx()];
            match c {
                Change::Depart => *h -= 1,
                _ => *h += 1,
            }
            most = most.max(*h);
        }
    }
    most
}

/// Embeds the tenants in time order (all at 0 without lifetimes): a tenant with VMs
/// (`declared`, built without the sized ones) where its VMs run (an error names the
/// tenant and the server or link that cannot hold it), a tenant given by its `size`
/// by Algorithm 1 (an error names the tenant Algorithm 1 finds no room for), and a
/// departing tenant's slots and reservations released.
pub fn embed(
    ctx: &Ctx,
    spec: &QShareSpec,
    mut dc: Datacenter,
    net: &Network,
    (tenants, lives): (&[TenantSpec], &[Lifetime]),
    declared: &BuiltTenants,
) -> Result<Embedded, ScenarioError> {
    let vms = &declared.params.vms;
    let pinned: Vec<bool> = (0..tenants.len())
        .map(|t| declared.vms_of.get(t).is_some_and(|v| !v.is_empty()))
        .collect();
    let order = changes(tenants, lives, &pinned);
    let most = most_at_once(vms, &declared.vms_of, &order, dc.servers.len());
    let slots = spec.slots.unwrap_or(most.max(DEFAULT_SLOTS));
    if slots < most {
        return Err(ctx.err(
            "qshare.slots",
            format!("a host runs {most} VMs at once; expected at least that many slots"),
        ));
    }
    dc.slots = vec![slots; dc.servers.len()];
    dc.free = dc.slots.clone();
    let empty = dc.clone();
    let strategy = Strategy::Balanced {
        cq_weight: spec.cq_weight,
    };
    let mut placer = Placer::new(dc, strategy);
    let mut ids = vec![None; tenants.len()];
    let mut out = tenants.to_vec();
    let mut timeline = Vec::new();
    for (at, change, t) in order {
        let logged = placer.log.len();
        match change {
            Change::Depart => {
                placer.depart(ids[t].expect("a tenant departs after it arrived"));
            }
            Change::Pin => ids[t] = Some(pin(ctx, &mut placer, declared, t)?),
            Change::Place => {
                let n = tenants[t].size.expect("a sized tenant");
                let (id, vms) = place(ctx, spec, &mut placer, net, (t, &tenants[t]), n)?;
                ids[t] = Some(id);
                out[t].size = None;
                out[t].vms = vms;
            }
        }
        timeline.extend(placer.log[logged..].iter().map(|op| (at, op.clone())));
    }
    Ok(Embedded {
        placer,
        ids,
        tenants: out,
        timeline,
        empty,
    })
}

/// Declared tenant `t` pinned where its VMs run: its id.
fn pin(
    ctx: &Ctx,
    placer: &mut Placer,
    declared: &BuiltTenants,
    t: usize,
) -> Result<u32, ScenarioError> {
    let vms = &declared.params.vms;
    let servers = by_server(vms, &declared.vms_of[t]);
    let hose = Hose::new(
        (servers.iter().flat_map(|s| s.1.iter()))
            .map(|v| vms[v.idx()].guarantee_bps)
            .collect(),
    );
    let counts: Vec<(u32, u32)> = servers.iter().map(|s| (s.0, s.1.len() as u32)).collect();
    placer
        .pin(Request { hose, ha: None }, &counts)
        .map_err(|e| {
            ctx.err(
                &format!("tenants[{t}]"),
                format!(
                    "QShare cannot embed tenant {} where its VMs run: {}",
                    crate::units::quoted(&declared.names[t]),
                    e.describe(&placer.dc)
                ),
            )
        })
}

/// Tenant `t`, given by its size `n`, placed by Algorithm 1: its id and VMs.
fn place(
    ctx: &Ctx,
    spec: &QShareSpec,
    placer: &mut Placer,
    net: &Network,
    (t, ts): (usize, &TenantSpec),
    n: u32,
) -> Result<(u32, Vec<VmSpec>), ScenarioError> {
    let key = format!("tenants[{t}]");
    let Some(b) = ts.guarantee else {
        return Err(ctx.err(
            &format!("{key}.guarantee"),
            "a tenant given by its size needs the guarantee B of each of its VMs",
        ));
    };
    if n == 0 {
        return Err(ctx.err(&format!("{key}.size"), "expected at least 1 VM"));
    }
    let req = Request {
        hose: Hose::homogeneous(n, b.0),
        ha: spec.ha,
    };
    let id = placer.place(req).ok_or_else(|| {
        ctx.err(
            &key,
            format!(
                "Algorithm 1 finds no Tenant-Routing tree with room for tenant {}'s {n} VMs \
                 of {} each ({} free slots left)",
                crate::units::quoted(&ts.name),
                super::tenants::show(b.0),
                placer.dc.free_slots()
            ),
        )
    })?;
    let mut servers = placer.tenants[&id].servers.clone();
    servers.sort();
    let vms = (servers.iter())
        .flat_map(|&(s, k)| std::iter::repeat_n(s, k as usize))
        .enumerate()
        .map(|(i, s)| VmSpec::on(format!("{}/vm{i}", ts.name), net.host_name(HostId(s))))
        .collect();
    Ok((id, vms))
}

/// Tenant VMs `mine` grouped by host, hosts in order.
fn by_server(vms: &[crate::vswitch::Vm], mine: &[VmId]) -> Vec<(u32, Vec<VmId>)> {
    let mut servers: Vec<(u32, Vec<VmId>)> = Vec::new();
    for &v in mine {
        let h = vms[v.idx()].host.0;
        match servers.iter_mut().find(|s| s.0 == h) {
            Some(s) => s.1.push(v),
            None => servers.push((h, vec![v])),
        }
    }
    servers.sort_by_key(|s| s.0);
    servers
}

/// The controller over the embedded tenants (`declared`: the run's tenants, built
/// from `Embedded::tenants`), the initial D-tenants checked against Algorithm 2's
/// invariants.
pub fn controller(
    ctx: &Ctx,
    spec: &QShareSpec,
    embedded: Embedded,
    net: &Network,
    declared: &BuiltTenants,
    seed: u64,
) -> Result<Controllers, ScenarioError> {
    let Embedded {
        placer,
        ids,
        timeline,
        empty,
        ..
    } = embedded;
    let vms = &declared.params.vms;
    let mut members = Vec::new();
    for (t, mine) in declared.vms_of.iter().enumerate() {
        let Some(id) = ids[t] else { continue };
        members.push(Member {
            name: declared.names[t].clone(),
            tenant: t as u32,
            id,
            servers: by_server(vms, mine),
        });
    }
    if members.is_empty() {
        return Err(ctx.err(
            "qshare",
            "QShare binds tenants' VMs: expected [[tenants]] with VMs",
        ));
    }
    // the controller starts from the datacenter at time 0 and replays the rest
    let later = timeline.iter().position(|(at, _)| *at > 0);
    let (placer, timeline) = match later {
        None => (placer, Vec::new()),
        Some(k) => {
            let mut first = Placer::new(empty, placer.strategy);
            for (_, op) in &timeline[..k] {
                first.apply(op).map_err(|e| ctx.err("qshare", e))?;
            }
            (first, timeline[k..].to_vec())
        }
    };
    let mut dedicated = BTreeSet::new();
    for (i, name) in spec.dedicated.iter().enumerate() {
        let key = format!("qshare.dedicated[{i}]");
        let Some(m) = members.iter().find(|m| m.name == *name) else {
            return Err(ctx.err(&key, "expected the name of a [[tenants]] tenant with VMs"));
        };
        if !placer.tenants.contains_key(&m.id) {
            return Err(ctx.err(
                &key,
                "this tenant arrives after 0 s: expected a tenant present from the start \
                 (a newly arrived tenant is served in the shared queue, §5.3)",
            ));
        }
        dedicated.insert(m.id);
    }
    let params = QShareParams {
        interval: spec.interval.0,
        delay: spec.delay.0,
        max_weight: spec.max_weight,
        k: spec.k,
        cap_shared: spec.shared == SharedRate::Guarantee,
        seed,
    };
    let c = QShare::new(params, placer, members, dedicated, net)
        .map_err(|e| ctx.err("qshare.dedicated", format!("not a valid binding: {e}")))?
        .with_timeline(timeline);
    Ok(Controllers::QShare(Box::new(c)))
}
