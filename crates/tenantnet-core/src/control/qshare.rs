//! QShare's controller inside the packet simulation (Liu et al., §5, §7.1; spec
//! qshare-packet-level §4.1): every control interval T_c it reads each tenant's
//! inbound and outbound usage per hypervisor, computes U-factors (Eq. 1) and scores
//! (Eq. 2), runs Algorithm 2 over the tenants' TRs, and pushes what the binding
//! means for the fabric: per-port queue weights and DSCP → queue maps on both ends
//! of every TR link (a server's NIC included: the hypervisor's software WFQ, §6,
//! under `network.host_nic = "dscp"`), each tenant's DSCP tag at its hosts, and a cap at its
//! guarantee on every VM of a shared-queue tenant (§7.1: "allocate them at most
//! their guaranteed bandwidth"); D-tenants are uncapped.
//!
//! Choices where the paper is silent (documented in the README):
//! * the first interval starts at time 0 with the scenario's initial D-tenants
//!   (`qshare.dedicated`, default none): newly arrived tenants are served in the
//!   shared queue until the end of the first interval (§5.3);
//! * usage is wire bits per second over the last interval, from the VMs' byte
//!   counters (ACKs included: they cross the same NIC);
//! * only what changed is pushed (a port's weights and map, a tenant's tag, a
//!   VM's cap), so a steady binding leaves the schedulers alone;
//! * a configuration delay (`qshare.delay`, default 0; < 50 ms measured for 48
//!   ports, §7.4) applies each interval's changes that much later;
//! * ties in score are broken by a shuffle seeded by the run's seed and the
//!   interval's number;
//! * tenants arrive and depart as the scenario's timeline says (§5.3: "tenant
//!   departures will trigger network allocation state update as well. Newly
//!   arrived tenants are served in shared queues, and will be evaluated at the end
//!   of current interval"): the controller embeds or releases them at that time and
//!   pushes what changed at once (after the configuration delay). A departed
//!   D-tenant's queue waits for the next decision; a tenant's first U-factor is
//!   measured over the part of the interval it was present; a departing tenant's
//!   packets still in flight are tagged for the shared queue. At a decision's time,
//!   departures come before the decision and arrivals after it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::qshare_records::Records;
use super::{Action, Controller, FabricView, TagScope};
use crate::engine::{to_secs, Time};
use crate::net::host_nic::HostNic;
use crate::net::{Network, PortId, VmId};
use crate::qshare::binding::{
    allocate_queues, check_invariants, configure, score, u_factor, Binding, HypervisorUsage,
};
use crate::qshare::{LogOp, Placer};
use crate::switch::DscpMap;
use crate::table::Table;

/// The controller's settings (`[qshare]`).
#[derive(Clone, Debug, PartialEq)]
pub struct QShareParams {
    /// T_c, the control interval.
    pub interval: Time,
    /// How long after each decision its changes take effect.
    pub delay: Time,
    /// The largest queue weight the switches take (15 on the paper's, 100 SONiC).
    pub max_weight: u32,
    /// k, Eq. 2's pricing constant.
    pub k: f64,
    /// Whether shared-queue tenants' VMs are capped at their guarantees.
    pub cap_shared: bool,
    /// Seeds the tie-breaking shuffles.
    pub seed: u64,
}

/// A tenant the controller binds: its place in the run and in the placer.
#[derive(Clone, Debug)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Its tenant index in the run.
    pub tenant: u32,
    /// Its id in the placer.
    pub id: u32,
    /// Its VMs on each server it uses, in the placement's server order.
    pub servers: Vec<(u32, Vec<VmId>)>,
}

/// What one interval decided, waiting for the configuration delay.
struct Pending {
    at: Time,
    actions: Vec<Action>,
}

/// The QShare controller of a run.
pub struct QShare {
    p: QShareParams,
    placer: Placer,
    members: Vec<Member>,
    /// The DSCP-classified ports at the ends of each placer link.
    ends: Vec<Vec<PortId>>,
    held: BTreeSet<u32>,
    /// The next decision.
    next: Time,
    decisions: u64,
    last_at: Time,
    /// (tx, rx) wire bytes of every VM at the last decision.
    last_bytes: Vec<(u64, u64)>,
    weights: BTreeMap<PortId, Vec<u32>>,
    maps: BTreeMap<PortId, DscpMap>,
    tags: BTreeMap<u32, u8>,
    caps: BTreeMap<VmId, Option<u64>>,
    pending: VecDeque<Pending>,
    rec: Records,
    /// Arrivals and departures still to come, in order.
    timeline: VecDeque<(Time, LogOp)>,
    /// When each member last arrived (0 for those present from the start).
    since: Vec<Time>,
    /// Each member's U-factor and score at the last decision (0 until its first
    /// after it arrived).
    us: Vec<(f64, f64)>,
}

impl QShare {
    /// The controller over `placer`'s pinned `members`, with their first D-tenants
    /// `dedicated` (placer ids), on `net` (the placer's datacenter built from the
    /// same topology: link `l` is the network's link `l`). An error says why the
    /// initial binding breaks Algorithm 2's invariants.
    pub fn new(
        p: QShareParams,
        placer: Placer,
        members: Vec<Member>,
        dedicated: BTreeSet<u32>,
        net: &Network,
    ) -> Result<Self, String> {
        check_invariants(&placer, &configure(&placer, &dedicated, p.max_weight))?;
        let ends = net
            .links
            .iter()
            .map(|ps| {
                let classified = |port: &PortId| {
                    net.host_nic == HostNic::Dscp || net.is_switch(net.ports[port.idx()].node())
                };
                ps.iter().copied().filter(classified).collect()
            })
            .collect();
        let vms = members
            .iter()
            .flat_map(|m| m.servers.iter())
            .map(|s| s.1.len());
        Ok(QShare {
            rec: Records::new(&members, &placer),
            p,
            placer,
            ends,
            held: dedicated,
            next: 0,
            decisions: 0,
            last_at: 0,
            last_bytes: vec![(0, 0); vms.sum::<usize>()],
            weights: BTreeMap::new(),
            maps: BTreeMap::new(),
            tags: BTreeMap::new(),
            caps: BTreeMap::new(),
            pending: VecDeque::new(),
            timeline: VecDeque::new(),
            since: vec![0; members.len()],
            us: vec![(0.0, 0.0); members.len()],
            members,
        })
    }

    /// The same controller with the arrivals and departures after time 0 (a
    /// placer log with times, starting from the placer's state).
    pub fn with_timeline(mut self, timeline: Vec<(Time, LogOp)>) -> Self {
        self.timeline = timeline.into();
        self
    }

    /// Applies the timeline's changes due by now: departures only (`arrivals`
    /// false) or everything. Whether any applied.
    fn lifecycle(&mut self, now: Time, arrivals: bool) -> Result<bool, String> {
        let mut any = false;
        while let Some((at, op)) = self.timeline.front() {
            let departs = matches!(op, LogOp::Depart { .. });
            if *at > now || (!arrivals && !departs) {
                break;
            }
            let (_, op) = self.timeline.pop_front().unwrap();
            self.placer
                .apply(&op)
                .map_err(|e| format!("QShare's timeline at {} s: {e}", to_secs(now)))?;
            match op {
                LogOp::Depart { id } => {
                    self.held.remove(&id);
                }
                LogOp::Place { id, .. } | LogOp::Pin { id, .. } => {
                    if let Some(i) = self.members.iter().position(|m| m.id == id) {
                        self.since[i] = now;
                        self.us[i] = (0.0, 0.0);
                    }
                }
            }
            any = true;
        }
        Ok(any)
    }

    /// Each member's U-factor and score over the interval that ends now.
    fn measure(&mut self, view: &FabricView) -> Vec<(f64, f64)> {
        let mut k = 0;
        let mut out = Vec::with_capacity(self.members.len());
        for (m, since) in self.members.iter().zip(&self.since) {
            let dt = to_secs(view.now - self.last_at.max(*since));
            let mut usage = Vec::with_capacity(m.servers.len());
            for (server, vms) in &m.servers {
                let (mut tx, mut rx) = (0u64, 0u64);
                for v in vms {
                    let vm = &view.vms[v.idx()];
                    let (t0, r0) = self.last_bytes[k];
                    tx += vm.tx_bytes - t0;
                    rx += vm.rx_bytes - r0;
                    self.last_bytes[k] = (vm.tx_bytes, vm.rx_bytes);
                    k += 1;
                }
                let bps = |b: u64| if dt > 0.0 { b as f64 * 8.0 / dt } else { 0.0 };
                usage.push(HypervisorUsage {
                    server: *server,
                    inbound: bps(rx),
                    outbound: bps(tx),
                });
            }
            out.push(match self.placer.tenants.get(&m.id) {
                Some(placed) => {
                    let u = u_factor(placed, &usage);
                    (u, score(placed, u, self.p.k))
                }
                None => (0.0, 0.0),
            });
        }
        self.last_at = view.now;
        out
    }

    /// The decision ending an interval: usage and scores of the tenants present,
    /// then Algorithm 2 (at time 0, the initial D-tenants stay); [`Self::bind`]
    /// configures what it decided.
    fn decide(&mut self, view: &FabricView) -> Result<(), String> {
        self.us = self.measure(view);
        if view.now > 0 {
            let scores = (self.members.iter().zip(&self.us))
                .filter(|(m, _)| self.placer.tenants.contains_key(&m.id))
                .map(|(m, &(_, s))| (m.id, s))
                .collect();
            let seed = self.p.seed.wrapping_add(self.decisions);
            self.held = allocate_queues(&self.placer, &self.held, &scores, seed);
        }
        self.decisions += 1;
        Ok(())
    }

    /// The binding of the current D-tenants over the tenants present, its
    /// invariants, and the changes it means.
    fn bind(&mut self, view: &FabricView) -> Result<Vec<Action>, String> {
        let b = configure(&self.placer, &self.held, self.p.max_weight);
        check_invariants(&self.placer, &b)
            .map_err(|e| format!("QShare's binding at {} s: {e}", to_secs(view.now)))?;
        self.held = b.dedicated.clone();
        self.rec.tenants(view.now, &self.members, &self.us, &b);
        let mut actions = self.port_actions(&b, view);
        self.tenant_actions(&b, view, &mut actions);
        Ok(actions)
    }

    /// Weights and DSCP maps of the switch ports on every TR link that changed.
    fn port_actions(&mut self, b: &Binding, view: &FabricView) -> Vec<Action> {
        let q = self.placer.dc.queues as usize;
        let mut out = Vec::new();
        for pq in &b.ports {
            let mut weights = vec![1u32; q];
            let mut pairs = Vec::new();
            for (qi, ts, w) in &pq.queues {
                weights[*qi as usize] = *w;
                for t in ts.iter().filter(|t| b.dedicated.contains(t)) {
                    pairs.push((b.dscp[t], *qi as u8));
                }
            }
            let map = DscpMap::from_pairs(&pairs);
            for &port in &self.ends[pq.link as usize] {
                if self.weights.get(&port) != Some(&weights) {
                    self.weights.insert(port, weights.clone());
                    out.push(Action::QueueWeights {
                        port,
                        weights: weights.clone(),
                    });
                }
                self.rec.port(view.now + self.p.delay, pq, port);
                if self.maps.get(&port) != Some(&map) {
                    self.maps.insert(port, map.clone());
                    out.push(Action::DscpMap {
                        port,
                        map: map.clone(),
                    });
                }
            }
        }
        out
    }

    /// Tags and caps of the tenants whose binding changed.
    fn tenant_actions(&mut self, b: &Binding, view: &FabricView, out: &mut Vec<Action>) {
        for m in &self.members {
            let Some(&d) = b.dscp.get(&m.id) else {
                // absent: a departed tenant's packets in flight go to the shared queue
                if self.tags.get(&m.tenant).is_some_and(|&d| d != 0) {
                    self.tags.insert(m.tenant, 0);
                    out.push(Action::TagDscp {
                        scope: TagScope::Tenant(m.tenant),
                        dscp: Some(0),
                    });
                }
                continue;
            };
            if self.tags.insert(m.tenant, d) != Some(d) {
                out.push(Action::TagDscp {
                    scope: TagScope::Tenant(m.tenant),
                    dscp: Some(d),
                });
            }
            let shared = !b.dedicated.contains(&m.id);
            for &v in m.servers.iter().flat_map(|s| s.1.iter()) {
                let cap = (shared && self.p.cap_shared).then(|| view.vms[v.idx()].guarantee_bps);
                if self.caps.insert(v, cap) != Some(cap) {
                    out.push(Action::VmCap {
                        vm: v,
                        cap_bps: cap,
                    });
                }
            }
        }
    }
}

impl Controller for QShare {
    fn next_wake(&self, _now: Time) -> Option<Time> {
        let due = self.pending.front().map_or(Time::MAX, |p| p.at);
        let change = self.timeline.front().map_or(Time::MAX, |c| c.0);
        Some(self.next.min(due).min(change))
    }

    fn wake(&mut self, view: &FabricView, actions: &mut Vec<Action>) -> Result<(), String> {
        let mut changed = self.lifecycle(view.now, false)?;
        let decides = view.now >= self.next;
        if decides {
            self.decide(view)?;
            self.next = view.now + self.p.interval;
        }
        changed |= self.lifecycle(view.now, true)?;
        if decides || changed {
            let bound = self.bind(view)?;
            self.pending.push_back(Pending {
                at: view.now + self.p.delay,
                actions: bound,
            });
        }
        while self.pending.front().is_some_and(|p| p.at <= view.now) {
            actions.extend(self.pending.pop_front().unwrap().actions);
        }
        Ok(())
    }

    fn tables(&self, net: &Network) -> Vec<Table> {
        self.rec.tables(net)
    }
}
