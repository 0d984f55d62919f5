//! `[qshare]`: the datacenter QShare's controller sees (from the topology before it
//! is wired), every declared tenant pinned where its VMs run, and the controller.

use std::collections::BTreeSet;

use super::tenants::BuiltTenants;
use super::Ctx;
use crate::control::qshare::{Member, QShare, QShareParams};
use crate::control::Controllers;
use crate::net::host_nic::HostNic;
use crate::net::{Network, NetworkBuilder, VmId};
use crate::qshare::{Datacenter, Hose, Placer, Request, Strategy};
use crate::scenario::parse::ScenarioError;
use crate::scenario::qshare::{QShareSpec, SharedRate};
use crate::scenario::spec::{NetworkSpec, SchedulerSpec};

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
        SchedulerSpec::Wfq | SchedulerSpec::Dwrr | SchedulerSpec::Wrr
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
    if spec.interval.0 == 0 {
        return Err(ctx.err("qshare.interval", "expected a positive control interval"));
    }
    if !(1..=100).contains(&spec.max_weight) {
        return Err(ctx.err("qshare.max_weight", "expected a weight from 1 to 100"));
    }
    if !(spec.k.is_finite() && spec.k > 0.0) {
        return Err(ctx.err("qshare.k", "expected a positive number"));
    }
    if !(0.0..=1.0).contains(&spec.cq_weight) {
        return Err(ctx.err("qshare.cq_weight", "expected a weight from 0 to 1"));
    }
    Datacenter::from_builder(b, 0, nw.queues).map_err(|e| ctx.err("topology", e))
}

/// The controller: each declared tenant with VMs pinned on its VMs' hosts (an
/// error names the tenant and the server or link that cannot hold it), the
/// initial D-tenants checked against Algorithm 2's invariants.
pub fn controller(
    ctx: &Ctx,
    spec: &QShareSpec,
    mut dc: Datacenter,
    net: &Network,
    declared: &BuiltTenants,
    seed: u64,
) -> Result<Controllers, ScenarioError> {
    let vms = &declared.params.vms;
    let mut per_host = vec![0u32; dc.servers.len()];
    for v in vms {
        per_host[v.host.idx()] += 1;
    }
    let most = per_host.iter().copied().max().unwrap_or(0);
    let slots = spec.slots.unwrap_or(most);
    if slots < most {
        return Err(ctx.err(
            "qshare.slots",
            format!("a host runs {most} VMs; expected at least that many slots"),
        ));
    }
    dc.slots = vec![slots; dc.servers.len()];
    dc.free = dc.slots.clone();
    let mut placer = Placer::new(
        dc,
        Strategy::Balanced {
            cq_weight: spec.cq_weight,
        },
    );
    let mut members = Vec::new();
    for (t, mine) in declared.vms_of.iter().enumerate() {
        if mine.is_empty() {
            continue;
        }
        let mut servers: Vec<(u32, Vec<VmId>)> = Vec::new();
        for &v in mine {
            let h = vms[v.idx()].host.0;
            match servers.iter_mut().find(|s| s.0 == h) {
                Some(s) => s.1.push(v),
                None => servers.push((h, vec![v])),
            }
        }
        servers.sort_by_key(|s| s.0);
        let hose = Hose::new(
            (servers.iter().flat_map(|s| s.1.iter()))
                .map(|v| vms[v.idx()].guarantee_bps)
                .collect(),
        );
        let counts: Vec<(u32, u32)> = servers.iter().map(|s| (s.0, s.1.len() as u32)).collect();
        let id = placer
            .pin(Request { hose, ha: None }, &counts)
            .map_err(|e| {
                ctx.err(
                    &format!("tenants[{t}]"),
                    format!(
                        "QShare cannot embed tenant {:?} where its VMs run: {}",
                        declared.names[t],
                        e.describe(&placer.dc)
                    ),
                )
            })?;
        members.push(Member {
            name: declared.names[t].clone(),
            tenant: t as u32,
            id,
            servers,
        });
    }
    if members.is_empty() {
        return Err(ctx.err(
            "qshare",
            "QShare binds tenants' VMs: expected [[tenants]] with VMs",
        ));
    }
    let mut dedicated = BTreeSet::new();
    for (i, name) in spec.dedicated.iter().enumerate() {
        let Some(m) = members.iter().find(|m| m.name == *name) else {
            return Err(ctx.err(
                &format!("qshare.dedicated[{i}]"),
                "expected the name of a [[tenants]] tenant with VMs",
            ));
        };
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
        .map_err(|e| ctx.err("qshare.dedicated", format!("not a valid binding: {e}")))?;
    Ok(Controllers::QShare(Box::new(c)))
}
