//! How a run is cut into partitions and put back together: whether it can be cut
//! (`plan`), each partition's copy (`fork`), and the run's view of them all
//! (`sync`: each port from the partition that owns its node, each flow's sender
//! from its source's partition and its receiver from its destination's).

use std::sync::MutexGuard;

use super::{ParState, PartCtx, Sim};
use crate::engine::queue::{EventQueue, Origin, Ties};
use crate::engine::Time;
use crate::net::partition::Cut;
use crate::net::HostId;
use crate::sim::cpu::CpuState;
use crate::sim::flow::Endpoint;
use crate::sim::footprint::{human_bytes, PartKind};
use crate::sim::parts::{ControlPlane, Endpoints, Fabric, Hosts, Parallelism, Records, RunBudget};
use crate::sim::vm_results::VmRateCols;
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
    if !gates_are_local(m, &cut) {
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
fn gates_are_local(m: &Sim, cut: &Cut) -> bool {
    let x = &m.ends.exchanges;
    let mut at: Vec<Option<u16>> = vec![None; x.gates()];
    let mut same = |g: u32, p: u16| *at[g as usize].get_or_insert(p) == p;
    for f in &m.ends.flows {
        let s = &f.spec;
        let signals = s.signals.is_none_or(|g| same(g, part_of(m, cut, s.dst)));
        let after = s.after.is_none_or(|g| same(g, part_of(m, cut, s.src)));
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

/// An empty event queue laid out and tied as `m`'s.
pub(super) fn fresh_queue(m: &Sim) -> EventQueue {
    EventQueue::for_horizon(super::super::event_horizon(&m.fabric.net, &m.ends.tcp))
        .with_ties(m.events.ties(), m.budget.seed)
}

/// The partition of host `h`'s node.
fn part_of(m: &Sim, cut: &Cut, h: HostId) -> u16 {
    cut.of_node[m.fabric.net.hosts[h.idx()].node.idx()]
}

/// Partition `me`'s copy of `m` (before its first event, whose `pending` events
/// were taken): all of the run's state, of which it changes only its own nodes'
/// part, the start of its own flows and, if it has host vswitches, their periodic
/// events.
pub(super) fn fork(m: &Sim, cut: &Cut, me: usize, pending: &[(Time, u32)]) -> Sim {
    let mut start_order = m.ends.start_order.clone();
    start_order.retain(|&f| part_of(m, cut, m.ends.flows[f as usize].spec.src) as usize == me);
    let net = &m.fabric.net;
    let mine: Vec<bool> = (m.hosts.vswitches.iter())
        .map(|hv| part_of(m, cut, hv.host) as usize == me)
        .collect();
    let mut p = Sim {
        now: 0,
        events: fresh_queue(m),
        fabric: Fabric {
            net: net.clone(),
            node_kind: m.fabric.node_kind.clone(),
            pkts: m.fabric.pkts.clone(),
            evicted: Vec::new(),
            ack_routes: m.fabric.ack_routes.clone(),
            sacks: Default::default(),
        },
        ends: Endpoints {
            flows: m.ends.flows.clone(),
            tcp: m.ends.tcp.clone(),
            start_order,
            next_start: 0,
            sender_out: Default::default(),
            receiver_out: Default::default(),
            // the run, not a partition, knows when all are done
            finite_flows: u64::MAX,
            completed: 0,
            small_queues: m.ends.small_queues,
            exchanges: m.ends.exchanges.clone(),
            resume: Vec::new(),
        },
        records: Records {
            counters: Counters::default(),
            recorder: m.records.recorder.clone(),
            meta: m.records.meta.clone(),
            wall: 0.0,
            control_wall: 0.0,
        },
        // every host's vswitch as its start left it (the shapers' ids are the
        // run's), of which the partition runs its own
        hosts: Hosts {
            vms: m.hosts.vms.clone(),
            vswitches: m.hosts.vswitches.clone(),
            tick: m.hosts.tick,
            tick_key: m.hosts.tick_key.clone(),
            pairs: m.hosts.pairs.clone(),
            shapers: m.hosts.shapers.clone(),
            touched_shapers: Vec::new(),
            control_out: Vec::new(),
            released: Vec::new(),
            vm_rates: VmRateCols::new(),
            cpu: m.hosts.cpu.as_ref().map(|c| Box::new(c.fork())),
        },
        budget: RunBudget {
            end: m.budget.end,
            stop_when_done: false,
            done: false,
            seed: m.budget.seed,
            footprint: m.budget.footprint.clone(),
            memory: m.budget.memory,
            failure: None,
            grid: m.budget.grid,
            drain: false,
        },
        control: ControlPlane {
            controllers: Vec::new(),
        },
        parallel: Parallelism {
            part: Some(Box::new(PartCtx {
                me: me as u16,
                peer: (net.ports.iter())
                    .map(|p| cut.of_node[p.peer().idx()])
                    .collect(),
                outbox: (0..cut.parts).map(|_| Vec::new()).collect(),
                shared: Vec::new(),
                vswitches: mine.clone(),
                ghosts: Vec::new(),
                start_order: Vec::new(),
                gated: 0,
                last_complete: 0,
            })),
            wire_hook: true,
            ..Default::default()
        },
    };
    if let Some(&first) = p.ends.start_order.first() {
        let t = p.ends.flows[first as usize].spec.start;
        p.schedule(t, Event::FlowStart, Origin::GLOBAL);
    }
    for &(at, code) in pending.iter().filter(|_| mine.contains(&true)) {
        if Event::decode(code).is_some_and(per_host) {
            p.events.push(at, Origin::GLOBAL, code);
        }
    }
    p
}

/// What a [`sync`] brings up to date.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    /// What a sample reads: the ports if it samples them, the flows it samples, the
    /// VMs.
    Sample,
    /// What a controller reads besides: every port, the VM pairs' bytes.
    Control,
    /// All of it, for the results.
    All,
}

/// Brings `m`'s view of the run up to date from its partitions (what `need` asks
/// for): ports and buffer pools from the partition of their node, each flow's sender
/// from its source's partition and receiver from its destination's, the counters
/// and the recorder's counts summed, the flows started since the last call appended
/// in start order.
pub(super) fn sync(m: &mut Sim, parts: &mut [MutexGuard<'_, Sim>], cut: &Cut, need: Need) {
    let owner = |node: crate::net::NodeId| cut.of_node[node.idx()] as usize;
    let mut c = Counters::default();
    for p in parts.iter() {
        c.add(&p.records.counters);
    }
    m.records.counters = c;
    m.ends.completed = parts.iter().map(|p| p.ends.completed).sum();
    {
        let mut order: Vec<_> = parts
            .iter_mut()
            .map(|p| p.parallel.take_start_order())
            .collect();
        let mut recs: Vec<_> = parts.iter_mut().map(|p| &mut p.records.recorder).collect();
        let port_owner = |port: u32| owner(m.fabric.net.ports[port as usize].node());
        m.records
            .recorder
            .absorb(&mut recs, &port_owner, &mut order);
    }
    if need == Need::All {
        let theirs: Vec<_> = parts.iter().map(|p| &p.ends.exchanges).collect();
        let mut x = std::mem::take(&mut m.ends.exchanges);
        let client = |h: HostId| part_of(m, cut, h) as usize;
        x.absorb(&theirs, &client);
        m.ends.exchanges = x;
    }
    if need != Need::Sample || m.records.recorder.samples_ports() {
        sync_ports(m, parts, cut);
    }
    sync_hosts(m, parts, cut, need);
    if need == Need::All {
        for f in 0..m.ends.flows.len() {
            sync_flow(m, parts, cut, f, true);
        }
    } else {
        let active = m.records.recorder.sampled_flows().to_vec();
        for f in active {
            sync_flow(m, parts, cut, f.idx(), false);
        }
    }
}

/// Each port and its buffer pool from the partition that owns its node.
fn sync_ports(m: &mut Sim, parts: &[MutexGuard<'_, Sim>], cut: &Cut) {
    for i in 0..m.fabric.net.ports.len() {
        let o = cut.of_node[m.fabric.net.ports[i].node().idx()] as usize;
        let src = &parts[o].fabric.net.ports[i];
        if let Some(pool) = src.pool() {
            let pool = pool as usize;
            m.fabric.net.pools[pool] = parts[o].fabric.net.pools[pool];
        }
        m.fabric.net.ports[i].clone_from(src);
    }
}

/// Each VM from the partition of its host; for the results (`need` all), each VM
/// pair's bytes sent from its source's partition and received from its
/// destination's, and the `vm_rates` rows of every partition in the sequential
/// run's order (by time, then host vswitch).
fn sync_hosts(m: &mut Sim, parts: &[MutexGuard<'_, Sim>], cut: &Cut, need: Need) {
    // each host vswitch's partition; a VM's is its vswitch's
    let owner: Vec<usize> = (m.hosts.vswitches.iter())
        .map(|hv| part_of(m, cut, hv.host) as usize)
        .collect();
    let of_vm = |m: &Sim, v: crate::net::VmId| owner[m.hosts.vms[v.idx()].vswitch as usize];
    for i in 0..m.hosts.vms.len() {
        let o = of_vm(m, crate::net::VmId(i as u32));
        m.hosts.vms[i].clone_from(&parts[o].hosts.vms[i]);
    }
    if need == Need::Sample {
        return;
    }
    for i in 0..m.hosts.pairs.len() {
        let (src, dst) = (m.hosts.pairs[i].src, m.hosts.pairs[i].dst);
        if let Some(v) = src {
            m.hosts.pairs[i].tx_bytes = parts[of_vm(m, v)].hosts.pairs[i].tx_bytes;
        }
        if let Some(v) = dst {
            m.hosts.pairs[i].rx_bytes = parts[of_vm(m, v)].hosts.pairs[i].rx_bytes;
        }
    }
    if need != Need::All {
        return;
    }
    let rows: Vec<&VmRateCols> = parts.iter().map(|p| &p.hosts.vm_rates).collect();
    let vms = &m.hosts.vms;
    m.hosts.vm_rates = VmRateCols::merged(&rows, |vm| vms[vm as usize].vswitch);
    if let Some(cpu) = m.hosts.cpu.as_deref_mut() {
        let theirs: Vec<&CpuState> = (parts.iter())
            .map(|p| {
                p.hosts
                    .cpu
                    .as_deref()
                    .expect("every partition has the CPU model")
            })
            .collect();
        cpu.absorb(&theirs, &owner, &m.hosts.vms);
    }
}

/// Flow `f` from its partitions: all of it (`whole`), or what a sample reads (the
/// bytes delivered and the sender).
fn sync_flow(m: &mut Sim, parts: &[MutexGuard<'_, Sim>], cut: &Cut, f: usize, whole: bool) {
    let spec = &m.ends.flows[f].spec;
    let (s, d) = (part_of(m, cut, spec.src), part_of(m, cut, spec.dst));
    let (snd_side, rcv_side) = (
        &parts[s as usize].ends.flows[f],
        &parts[d as usize].ends.flows[f],
    );
    let fl = &mut m.ends.flows[f];
    if whole {
        fl.clone_from(snd_side);
    } else {
        fl.ep.clone_from(&snd_side.ep);
    }
    fl.delivered = rcv_side.delivered;
    if let (Endpoint::Tcp { rcv, .. }, Endpoint::Tcp { rcv: theirs, .. }) =
        (&mut fl.ep, &rcv_side.ep)
    {
        rcv.clone_from(theirs);
    }
}

impl ParState {
    /// The run's packet counters and ECN marks: the partitions' counters summed, each
    /// port's marks from the partition that owns it.
    pub(in crate::sim) fn counters(&self) -> (Counters, u64) {
        let (mut c, mut marks) = (Counters::default(), 0);
        for p in &self.parts {
            let p = super::lock(p);
            c.add(&p.records.counters);
            marks += self
                .owned_ports(&p)
                .map(|port| port.stats().marks)
                .sum::<u64>();
        }
        (c, marks)
    }

    /// The ports of partition `p`'s own nodes, in `p`'s copy.
    fn owned_ports<'a>(&'a self, p: &'a Sim) -> impl Iterator<Item = &'a crate::net::Port> {
        let me = p.parallel.part.as_ref().map_or(0, |c| c.me);
        (p.fabric.net.ports.iter()).filter(move |port| self.cut.of_node[port.node().idx()] == me)
    }

    /// Applies action `a` to every partition's copy of the run at `now`.
    pub(in crate::sim) fn apply(
        &self,
        a: &crate::control::Action,
        now: Time,
    ) -> Result<(), String> {
        for p in &self.parts {
            let mut p = super::lock(p);
            p.now = p.now.max(now);
            p.apply_here(a.clone())?;
        }
        Ok(())
    }

    /// Packets alive in the partitions and on their way between them, and the same
    /// counted as `Sim::in_flight_check` does.
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
                .filter(|&c| matches!(Event::decode(c), Some(Event::Arrive(_))))
                .count() as u64;
            let held: u64 = self
                .owned_ports(&p)
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
        sync(m, &mut parts, &self.cut, Need::All);
    }
}
