//! How a run is cut into partitions and put back together: whether it can be cut
//! (`plan`), each partition's copy (`fork`, of each part's own: `fork.rs`), and the
//! run's view of them all (`sync`: each part takes in its own from the partitions
//! that own it, as `Owners` says).

use std::sync::MutexGuard;

pub(super) use super::fork::Need;
use super::owners::Owners;
use super::{ParState, Sim};
use crate::engine::queue::{Origin, Ties};
use crate::engine::Time;
use crate::net::partition::Cut;
use crate::sim::footprint::{human_bytes, PartKind};
use crate::sim::parts::{ControlPlane, Endpoints, Fabric, Hosts, Parallelism, Records};
use crate::sim::{Counters, Event};

/// The cut of `m` for its threads, or why it runs sequentially.
pub(super) fn plan(m: &Sim, threads: usize) -> Result<Cut, String> {
    let not = |why: &str| Err(format!("runs on one thread: {why}"));
    if m.events.ties() != Ties::Partitioned {
        return not("only simulation.ties = \"partitioned\" gives the same results on any number of threads (--ties partitioned)");
    }
    let global = |c: u32| match Event::decode(c) {
        Some(Event::FlowStart | Event::Sample | Event::Control(_)) => false,
        Some(e) => !per_host(e),
        None => true,
    };
    if m.events.codes().any(global) {
        return not("the run starts with events of the whole network");
    }
    let net = &m.fabric.net;
    let cut = Cut::new(net, threads);
    if cut.parts < 2 {
        return not("the network has a single piece to cut");
    }
    if let Some(why) = cut.sequential_because(net) {
        return Err(why);
    }
    if !gates_are_local(m, &Owners::new(&cut, &m.fabric.net, &m.hosts)) {
        return not("a request-response gate waits for flows delivered in more than one partition, or starts flows of another");
    }
    // each partition is a copy of the run's state, beside the run's own
    let fixed = m.budget.footprint.of(PartKind::Fixed);
    if fixed * (cut.parts + 1) as f64 > m.budget.memory as f64 {
        return not(&format!(
            "{} copies of the run's state (about {} each: one per thread and the run's own) would pass the memory budget of {} (raise it with --memory-budget)",
            cut.parts + 1,
            human_bytes(fixed),
            human_bytes(m.budget.memory as f64)
        ));
    }
    Ok(cut)
}

/// Whether every request–response gate counts deliveries and starts flows in one
/// partition: the flows that signal it are received there and those it opens sent
/// from there (as the built-in workloads make them: a server's response gate at
/// the server, a query's at its client).
fn gates_are_local(m: &Sim, owners: &Owners) -> bool {
    let x = &m.ends.exchanges;
    let mut at: Vec<Option<u16>> = vec![None; x.gates()];
    let mut same = |g: u32, p: u16| *at[g as usize].get_or_insert(p) == p;
    for f in &m.ends.flows {
        let s = &f.spec;
        let signals = s.signals.is_none_or(|g| same(g, owners.receiver(f) as u16));
        let after = s.after.is_none_or(|g| same(g, owners.sender(f) as u16));
        if !(signals && after) {
            return false;
        }
    }
    true
}

/// Whether `e` is a periodic event of every host vswitch, which each partition
/// runs for its own (the host tick, the CPU model's C2TB manager and NIC monitor).
fn per_host(e: Event) -> bool {
    matches!(e, Event::HostTick | Event::C2tbTick | Event::NicMonitor)
}

/// Partition `me`'s copy of `m` (before its first event, whose `pending` events
/// were taken): each part's fork, of which it changes only what `owners` gives it,
/// the start of its own flows and, if it has host vswitches, their periodic events.
pub(super) fn fork(m: &Sim, owners: &Owners, me: usize, pending: &[(Time, u32)]) -> Sim {
    let mut p = Sim {
        now: 0,
        events: m.events.empty_like(),
        fabric: m.fabric.fork(),
        ends: m.ends.fork(owners, me),
        records: m.records.fork(),
        hosts: m.hosts.fork(),
        budget: m.budget.fork(),
        control: ControlPlane {
            controllers: Vec::new(),
        },
        parallel: Parallelism::partition(owners, me),
    };
    if let Some(&first) = p.ends.start_order.first() {
        let t = p.ends.flows[first as usize].spec.start;
        p.schedule(t, Event::FlowStart, Origin::GLOBAL);
    }
    let hosts_here = (0..owners.vswitch_count()).any(|k| owners.vswitch(k) == me);
    for &(at, code) in pending.iter().filter(|_| hosts_here) {
        if Event::decode(code).is_some_and(per_host) {
            p.events.push(at, Origin::GLOBAL, code);
        }
    }
    p
}

/// Brings `m`'s view of the run up to date from its partitions (what `need` asks
/// for), each part taking in its own: the counters and the recorder's counts summed
/// and the flows started since the last call appended in start order; ports and
/// buffer pools from the partition of their node (if the sample reads them); each
/// VM from its host's; each flow's sender from its source's partition and receiver
/// from its destination's (the flows the recorder samples, or all).
pub(super) fn sync(m: &mut Sim, parts: &mut [MutexGuard<'_, Sim>], owners: &Owners, need: Need) {
    let mut order: Vec<_> = (parts.iter_mut())
        .map(|p| p.parallel.take_start_order())
        .collect();
    let mut recs: Vec<&mut Records> = parts.iter_mut().map(|p| &mut p.records).collect();
    m.records.absorb(&mut recs, owners, &mut order);
    let flows: Vec<usize> = match need {
        Need::All => (0..m.ends.flows.len()).collect(),
        _ => (m.records.recorder.sampled_flows().iter())
            .map(|f| f.idx())
            .collect(),
    };
    let ends: Vec<&Endpoints> = parts.iter().map(|p| &p.ends).collect();
    m.ends.absorb(&ends, owners, need, &flows);
    if need != Need::Sample || m.records.recorder.samples_ports() {
        let fabrics: Vec<&Fabric> = parts.iter().map(|p| &p.fabric).collect();
        m.fabric.absorb(&fabrics, owners);
    }
    let hosts: Vec<&Hosts> = parts.iter().map(|p| &p.hosts).collect();
    m.hosts.absorb(&hosts, owners, need);
}

impl ParState {
    /// The run's packet counters and ECN marks: the partitions' counters summed, each
    /// port's marks from the partition that owns it.
    pub(in crate::sim) fn counters(&self) -> (Counters, u64) {
        let (mut c, mut marks) = (Counters::default(), 0);
        for p in &self.parts {
            let p = super::lock(p);
            c.add(&p.records.counters);
            marks += (self.owned_ports(&p))
                .map(|port| port.stats().marks)
                .sum::<u64>();
        }
        (c, marks)
    }

    /// The ports of partition `p`'s own nodes, in `p`'s copy.
    fn owned_ports<'a>(&'a self, p: &'a Sim) -> impl Iterator<Item = &'a crate::net::Port> {
        let me = p.parallel.part.as_ref().map_or(0, |c| c.me as usize);
        p.fabric.owned_ports(&self.owners, me)
    }

    /// Applies action `a` to every partition's copy of the run at `now`.
    pub(in crate::sim) fn apply(
        &self,
        a: &crate::control::Action,
        now: Time,
    ) -> Result<(), String> {
        for p in &self.parts {
            apply_to_partition(&mut super::lock(p), a, now)?;
        }
        Ok(())
    }

    /// Packets alive in the partitions and on their way between them, and the same
    /// counted as `RunView::in_flight_check` does.
    pub(in crate::sim) fn in_flight(&self) -> (u64, u64) {
        let mailed: u64 = self
            .mail
            .iter()
            .map(|m| m.lock().unwrap().len() as u64)
            .sum();
        let (mut live, mut counted) = (mailed, mailed);
        for p in &self.parts {
            let p = super::lock(p);
            let arrivals = (p.events.codes())
                .filter(|&c| matches!(Event::decode(c), Some(Event::Arrive(_) | Event::Handoff(_))))
                .count() as u64;
            let held: u64 = (self.owned_ports(&p))
                .map(|port| port.held_packets())
                .sum::<u64>()
                + p.hosts.held();
            let ghosts = p.parallel.part.as_deref().map_or(0, |c| c.ghosts.len());
            live += p.fabric.pkts.live() - ghosts as u64;
            counted += held + arrivals;
        }
        (live, counted)
    }

    /// Brings `m`'s view up to date (`sync`).
    pub(in crate::sim) fn sync_into(&self, m: &mut Sim) {
        let mut parts: Vec<_> = self.parts.iter().map(super::lock).collect();
        sync(m, &mut parts, &self.owners, Need::All);
    }
}

/// Applies action `a`, applied to the run at `now`, to partition `p`'s copy.
pub(super) fn apply_to_partition(
    p: &mut Sim,
    a: &crate::control::Action,
    now: Time,
) -> Result<(), String> {
    p.now = p.now.max(now);
    p.apply_here(a.clone())
}
