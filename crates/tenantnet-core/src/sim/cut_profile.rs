//! What a parallel run of a scenario would face, measured on its sequential run: the
//! cut (`crate::net::partition`), how many events each partition would process, how
//! many synchronisation windows a conservative engine would run and how unevenly the
//! partitions would be loaded in them. It runs nothing in parallel; it tells whether
//! threads can pay for a scenario before an engine spends them.
//!
//! Each event belongs to the node whose state it changes: an arrival to the node the
//! packet reaches, a port's transmission to the port's node, a sender's timers and a
//! shaper to the sending host, a delayed ACK to the receiving host, a PMD core to its
//! host. Flow starts, samples, host ticks, controllers and the CPU model's ticks
//! touch every node ("global" below); they are counted apart and, conservatively, as
//! if each ran alone. Windows are a conservative engine's: one starts at the first
//! event not yet covered and spans one lookahead. In each window the busiest
//! partition sets the pace, so `events / critical_events` bounds the speedup that
//! any number of threads could give if synchronising cost nothing.
//!
//! Windows longer than a lookahead, measured: a packet reaches another partition
//! only by going on a cut port's wire, and none can go on before the packet that
//! port is sending has ended. So a window from `s` could span to the least, over the
//! cut ports, of the end of its packet in service (or `s` if idle) plus its link's
//! delay: `port_state_windows` counts the windows of that rule, as an engine that
//! read its cut ports at each window's start would run them.

use serde::Serialize;

use super::view::RunView;
use super::{Event, Sim};
use crate::engine::{to_secs, Time};
use crate::net::partition::Cut;
use crate::net::{HostId, NodeId, PortId};
use crate::switch::port::Port;

/// What a sequential run shows about running it on `threads` threads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CutProfile {
    /// Threads asked for.
    pub threads: usize,
    /// Partitions the cut formed (fewer than `threads` on a network of fewer units).
    pub parts: usize,
    /// Hosts in each partition.
    pub hosts: Vec<usize>,
    /// Links between two partitions.
    pub cut_links: usize,
    /// The smallest delay of a cut link, s (the window a partition runs alone).
    pub lookahead_s: f64,
    /// Events processed.
    pub events: u64,
    /// Events of each partition's nodes.
    pub events_per_part: Vec<u64>,
    /// Events that touch every node (flow starts, samples, ticks, controllers).
    pub global_events: u64,
    /// Of them, fabric controllers' wake-ups (each would stop every partition).
    pub controller_wakes: u64,
    /// Synchronisation windows a conservative engine would run.
    pub windows: u64,
    /// Windows if each spanned to the earliest a packet could reach another
    /// partition given the cut ports' packets in service (see the module doc).
    pub port_state_windows: u64,
    /// `events / port_state_windows`.
    pub events_per_port_state_window: f64,
    /// Sum over the windows of the busiest partition's events (global ones whole).
    pub critical_events: u64,
    /// Packets sent over cut links: the messages between partitions.
    pub cut_packets: u64,
    /// `events / critical_events`: the speedup if synchronising cost nothing.
    pub balance_bound: f64,
    /// `events / windows`.
    pub events_per_window: f64,
    /// Why the scenario would run sequentially, if it would.
    pub sequential_because: Option<String>,
}

/// Counts kept while the run goes.
struct Tally {
    of_node: Vec<u16>,
    lookahead: Time,
    window_end: Time,
    cut_ports: Vec<PortId>,
    state_end: Time,
    state_windows: u64,
    in_window: Vec<u64>,
    per_part: Vec<u64>,
    global: u64,
    wakes: u64,
    windows: u64,
    critical: u64,
}

impl Tally {
    fn new(cut: &Cut) -> Tally {
        Tally {
            of_node: cut.of_node.clone(),
            lookahead: cut.lookahead.max(1),
            window_end: 0,
            cut_ports: cut.cut_ports.clone(),
            state_end: 0,
            state_windows: 0,
            in_window: vec![0; cut.parts],
            per_part: vec![0; cut.parts],
            global: 0,
            wakes: 0,
            windows: 0,
            critical: 0,
        }
    }

    fn close_window(&mut self) {
        self.critical += self.in_window.iter().copied().max().unwrap_or(0);
        self.in_window.iter_mut().for_each(|c| *c = 0);
    }

    /// A window by the cut ports' state starts at `at` if the last has ended.
    fn state_window(&mut self, at: Time, ports: &[Port]) {
        if self.state_windows > 0 && at < self.state_end {
            return;
        }
        self.state_windows += 1;
        let end = self.cut_ports.iter().map(|p| {
            let port = &ports[p.idx()];
            port.busy_until().max(at).saturating_add(port.delay())
        });
        self.state_end = end.min().unwrap_or(Time::MAX).max(at + 1);
    }

    fn count(&mut self, at: Time, node: Option<NodeId>, wake: bool) {
        if self.windows == 0 || at >= self.window_end {
            self.close_window();
            self.windows += 1;
            self.window_end = at.saturating_add(self.lookahead);
        }
        match node {
            Some(n) => {
                let p = self.of_node[n.idx()] as usize;
                self.in_window[p] += 1;
                self.per_part[p] += 1;
            }
            None => {
                self.global += 1;
                self.wakes += wake as u64;
                self.critical += 1;
            }
        }
    }
}

impl CutProfile {
    /// Runs the rest of `sim` as `Sim::run` does (same results) and profiles it as
    /// cut for `threads` threads; call it on a simulation that has not started.
    /// Never inlined, so that a caller's plain run keeps its own loop as it was.
    #[inline(never)]
    pub fn measure(sim: &mut Sim, threads: usize) -> CutProfile {
        let cut = Cut::new(&sim.fabric.net, threads);
        let mut tally = Tally::new(&cut);
        let end = sim.budget.end;
        sim.fabric.hand_over_by_events(); // every event counted, each where it happens
        sim.run_observed(end, |sim, at, e| {
            tally.state_window(at, &sim.fabric.net.ports);
            tally.count(
                at,
                RunView::of(sim).node_of(e),
                matches!(e, Event::Control(_)),
            )
        });
        tally.close_window();
        let ports = &sim.fabric.net.ports;
        let cut_packets = cut.cut_ports.iter().map(|p| ports[p.idx()].stats().tx_pkts);
        let events = tally.per_part.iter().sum::<u64>() + tally.global;
        CutProfile {
            threads,
            parts: cut.parts,
            hosts: cut.hosts.clone(),
            cut_links: cut.cut_ports.len() / 2,
            lookahead_s: if cut.parts > 1 {
                to_secs(cut.lookahead)
            } else {
                f64::INFINITY
            },
            events,
            events_per_part: tally.per_part,
            global_events: tally.global,
            controller_wakes: tally.wakes,
            windows: tally.windows,
            port_state_windows: tally.state_windows,
            events_per_port_state_window: events as f64 / tally.state_windows.max(1) as f64,
            critical_events: tally.critical,
            cut_packets: cut_packets.sum(),
            balance_bound: events as f64 / tally.critical.max(1) as f64,
            events_per_window: events as f64 / tally.windows.max(1) as f64,
            sequential_because: cut.sequential_because(&sim.fabric.net),
        }
    }
}

impl RunView<'_> {
    /// The node whose state event `e` changes; `None` for events of the whole fabric.
    fn node_of(&self, e: Event) -> Option<NodeId> {
        let host = |h: HostId| self.fabric.net.hosts[h.idx()].node;
        let flow = |f: crate::net::FlowId| &self.ends.flows[f.idx()].spec;
        Some(match e {
            Event::Arrive(p) | Event::Handoff(p) => self.fabric.pkts[p].at,
            Event::TxDone(port) => self.fabric.net.ports[port.idx()].node(),
            Event::Rto(f) | Event::UdpTick(f) | Event::Stop(f) | Event::Begin(f) => {
                host(flow(f).src)
            }
            Event::DelAck(f) => host(flow(f).dst),
            Event::Sent(p) => host(flow(self.fabric.pkts[p].flow).src),
            Event::ShaperTx(s) => host(self.hosts.vms[self.hosts.shapers[s].vm.idx()].host),
            Event::PmdDone(c) => {
                let cpu = self.hosts.cpu.as_ref()?;
                let vswitch = cpu.cores[c.0 as usize].host as usize;
                host(self.hosts.vswitches[vswitch].host)
            }
            Event::FlowStart
            | Event::Sample
            | Event::HostTick
            | Event::Control(_)
            | Event::C2tbTick
            | Event::NicMonitor => return None,
        })
    }
}
