//! The simulation: the event loop and the data path between hosts and switches.
//!
//! A packet's life: a transport hands it to its host (`Sim::send_from`), which
//! passes it through its VM's host policy and a shaper, if it comes from a VM
//! (`datapath`), to the NIC port; each port either starts it on the wire at once or
//! queues it; when it is on the wire its arrival at the far node is one `Arrive`
//! event; a switch looks up the output port (ECMP by flow hash) and offers it
//! there; a host passes it through the receiving VM's policy and hands it to the
//! flow's receiver or sender. Transport handling is in `endpoints`, recording in
//! `recorder`, results in `results` and `vm_results`. ARCHITECTURE.md walks the path
//! file by file.

pub mod capture;
pub mod control;
pub mod cpu;
mod cpu_records;
pub mod cut_profile;
pub mod datapath;
mod ends;
pub mod event;
mod fabric;
pub mod flow;
pub mod flow_trace;
pub mod footprint;
mod handoff;
mod hosts;
pub mod ideal;
pub mod kept;
pub mod parallel;
pub mod parts;
mod prefetch;
pub mod queries;
pub mod recorder;
pub mod results;
pub mod sack_store;
pub mod trace;
pub mod view;
pub mod vm_results;
mod vms;

use std::time::Instant;

use crate::control::scheduled::ScheduledChanges;
use crate::control::Controllers;
use crate::engine::queue::{EventQueue, Origin, Ties};
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::port::Admit;
use crate::net::PacketPool;
use crate::net::{Network, NodeKind, PktId, PortId};
use crate::transport::TcpConfig;
use crate::vswitch::policy::HostPolicy;
use crate::vswitch::VswitchParams;
use crate::workload::{Exchanges, FlowSpec};
pub use event::Event;
pub use flow::Flow;
use footprint::MemoryUse;
use footprint::{Footprint, PartKind};
use parts::{ControlPlane, Endpoints, Fabric, Hosts, Parallelism, Records, RunBudget};
use recorder::{OutputParams, Recorder};
use results::RunMeta;
pub use view::RunView;

/// Packet counters over the whole network.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Packets hosts injected (data and ACKs).
    pub sent: u64,
    /// Data packets hosts injected (first transmissions and retransmissions).
    pub data_sent: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped anywhere.
    pub dropped: u64,
    /// Packets evicted from switch buffers (BarberQ).
    pub evicted: u64,
    /// VMs' packets that waited in a vswitch shaper because its token bucket (or a
    /// Trinity channel's buckets) held them: how often a host policy limited.
    pub shaped: u64,
    /// Control packets host policies sent (Trinity's and ElasticSwitch's feedback).
    pub control_sent: u64,
}

impl Counters {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &Counters) {
        self.sent += o.sent;
        self.data_sent += o.data_sent;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
        self.evicted += o.evicted;
        self.shaped += o.shaped;
        self.control_sent += o.control_sent;
    }
}

/// Everything the builder hands the simulation.
pub struct SimParams {
    /// The wired network.
    pub net: Network,
    /// The flows, in any order.
    pub flows: Vec<FlowSpec>,
    /// The gates and queries of request–response workloads.
    pub exchanges: Exchanges,
    /// Transport configurations that flows index.
    pub tcp: Vec<TcpConfig>,
    /// Simulated time to run.
    pub duration: Time,
    /// Scenario seed.
    pub seed: u64,
    /// How simultaneous events are ordered.
    pub ties: Ties,
    /// End when every finite flow has completed.
    pub stop_when_done: bool,
    /// What to record.
    pub output: OutputParams,
    /// Names and descriptions for the results.
    pub meta: RunMeta,
    /// Tenants' VMs and the hosts' vswitch policies.
    pub vswitch: VswitchParams,
    /// Fabric controllers beside the scenario's scheduled changes (QShare's).
    pub controllers: Vec<Controllers>,
    /// The memory the run was estimated to need.
    pub footprint: Footprint,
    /// The memory it may use, bytes.
    pub budget: u64,
}

/// Why a run stopped before its end.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFailure {
    /// Simulated time it stopped at.
    pub at: Time,
    /// The scenario key behind it.
    pub key: String,
    /// What happened and what to change.
    pub message: String,
}

/// A running simulation: the clock and the event queue beside the parts that own
/// the run's state (`parts.rs`).
pub struct Sim {
    now: Time,
    events: EventQueue,
    /// The fabric: network, packets in flight.
    pub fabric: Fabric,
    /// The transports' endpoints: the flows.
    pub ends: Endpoints,
    /// Counters and samples.
    pub records: Records,
    /// The hosts' vswitches: VMs, pairs, shapers, policies.
    pub hosts: Hosts,
    /// The run's end, memory and failure.
    pub budget: RunBudget,
    /// The fabric controllers and scheduled changes.
    control: ControlPlane,
    /// Its threads: the partitions of a parallel run, or what a partition holds.
    pub parallel: Parallelism,
}

/// How far ahead a packet's events are commonly scheduled: the longest time to
/// serialize the largest TCP packet (at least 1500 bytes) on a port plus its delay.
/// It only sizes the event queue's buckets (speed, never results).
fn event_horizon(net: &Network, tcp: &[TcpConfig]) -> Time {
    let pkt = tcp.iter().map(|c| (c.mss + c.header) as u64).max();
    let pkt = pkt.unwrap_or(0).max(1500);
    let port_time = |p: &crate::net::Port| crate::engine::tx_time(pkt, p.rate_bps()) + p.delay();
    net.ports.iter().map(port_time).max().unwrap_or(0)
}

impl Sim {
    /// A simulation at time 0 with its first events scheduled.
    pub fn new(mut p: SimParams) -> Self {
        let changes = ScheduledChanges::controllers(std::mem::take(&mut p.vswitch.changes));
        let mut ends = Endpoints::new(p.flows, p.tcp, p.exchanges, p.seed);
        let hosts = Hosts::new(p.vswitch, &mut ends.flows);
        let fabric = Fabric::new(p.net, &mut ends.flows);
        let tenants = p.meta.tenants.len();
        let capture = p.output.capture.as_ref().map(|(ports, limit)| {
            Box::new(capture::Capture::new(ports, fabric.net.ports.len(), *limit))
        });
        let flow_trace = (p.output.trace.as_ref())
            .map(|(on, limit)| Box::new(flow_trace::FlowTrace::new(on.clone(), *limit)));
        let recorder = Recorder::new(
            p.output,
            &fabric.net,
            ends.flows.len(),
            tenants,
            hosts.vms.len(),
        );
        let mut sim = Sim {
            now: 0,
            events: EventQueue::for_horizon(event_horizon(&fabric.net, &ends.tcp))
                .with_ties(p.ties, p.seed),
            budget: RunBudget {
                end: p.duration,
                stop_when_done: p.stop_when_done,
                done: false,
                seed: p.seed,
                footprint: p.footprint,
                memory: p.budget,
                failure: None,
                grid: parallel::grid(&fabric.net),
                drain: false,
            },
            fabric,
            hosts,
            ends,
            records: Records {
                counters: Counters::default(),
                recorder,
                meta: p.meta,
                wall: 0.0,
                control_wall: 0.0,
                capture,
                flow_trace,
            },
            control: ControlPlane {
                controllers: changes.into_iter().chain(p.controllers).collect(),
            },
            parallel: Parallelism::default(),
        };
        sim.fabric.handoffs = handoff::Handoffs::new(
            sim.fabric.net.hosts.len(),
            !sim.fabric.net.tx_jitter.is_empty(),
            p.ties,
            sim.records.capture.is_some(),
            p.stop_when_done,
        );
        sim.parallel.wire_hook = sim.records.recorder.tenant_links.is_some()
            || sim.records.capture.is_some()
            || !sim.fabric.net.host_jitter.is_empty();
        sim.fabric.host_hook = sim.hosts.cpu.is_some();
        sim.start();
        sim
    }

    /// Sizes the packet pool to the budget; runs every host policy's start hook;
    /// schedules the controllers' first wakes, the first host tick, the CPU model's
    /// first timers, the first flow start and the first sample.
    fn start(&mut self) {
        let room = self.budget.memory as f64 - self.budget.footprint.of(PartKind::Fixed);
        let sack = self.ends.tcp.iter().any(|c| c.recovery.uses_sack());
        let per_packet = footprint::per_packet(sack);
        self.fabric.pkts = PacketPool::with_cap((room / per_packet).max(1024.0) as usize);
        for k in 0..self.hosts.vswitches.len() {
            self.with_host(k, |p, ctx| p.start(ctx));
        }
        self.hosts.fix_channels(&mut self.ends.flows);
        for i in 0..self.control.len() {
            // a controller's first wake is scheduled even past the end
            if let Some(t) = self.control.next_wake(i, self.now) {
                self.schedule(t, Event::Control(i as u32), Origin::GLOBAL);
            }
        }
        let mut periodic = Vec::new();
        if !self.hosts.vswitches.is_empty() {
            periodic.push((self.hosts.tick, Event::HostTick));
        }
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            let (net, hosts) = (&self.fabric.net, &self.hosts.vswitches);
            let (c2tb, monitor) = cpu.start(hosts.len(), |k| net.nic(hosts[k].host).rate_bps());
            periodic.extend(c2tb.map(|t| (t, Event::C2tbTick)));
            periodic.extend(monitor.map(|t| (t, Event::NicMonitor)));
        }
        let end = self.budget.end;
        for (t, e) in periodic.into_iter().filter(|&(t, _)| t <= end) {
            self.schedule(t, e, Origin::GLOBAL);
        }
        if let Some(&first) = self.ends.start_order.first() {
            let t = self.ends.flows[first as usize].spec.start;
            self.schedule(t, Event::FlowStart, Origin::GLOBAL);
        }
        let iv = self.records.recorder.interval();
        if iv > 0 && iv <= self.budget.end {
            self.schedule(iv, Event::Sample, Origin::GLOBAL);
        }
    }

    /// Lets the run use up to `threads` threads (1: sequential; 0, the default: as
    /// many as the machine has cores when the run gains from them, `parallel`), and
    /// no more than the machine has idle cores when it starts, unless `exact` (what
    /// the tests of the parallel engine need: that many whatever the load). Before
    /// its first event; a run that cannot be cut runs on one, and
    /// [`Parallelism::threads_note`] says why.
    pub fn set_threads(&mut self, threads: usize, exact: bool) {
        let started = self.events.processed() > 0;
        self.parallel.ask(threads, exact, started);
    }

    /// Stores a new packet. Past the pool's cap (what the memory budget leaves for
    /// packets) the run stops after the current event.
    #[inline]
    pub(super) fn alloc_packet(&mut self, p: crate::net::Packet) -> PktId {
        let id = self.fabric.pkts.alloc(p);
        if self.fabric.pkts.over_cap() {
            let used = MemoryUse::of(&self.fabric, &self.hosts, &self.records);
            self.budget.out_of_memory(self.now, "network.buffer", used);
        }
        id
    }

    /// Schedules `e` at `at` on behalf of `by`: a port of the node whose state the
    /// scheduling step changed (or the run's global generators), which orders it
    /// among simultaneous events (`EventQueue`'s keys).
    #[inline]
    fn schedule(&mut self, at: Time, e: Event, by: Origin) {
        if handoff::Handoffs::reads_ports(e) {
            self.fabric.handoffs.reader_scheduled(at);
        }
        self.events.push(at, by, e.encode());
    }

    /// Runs every event up to and including time `t` (capped at the end): on the
    /// threads [`set_threads`](Self::set_threads) allowed when the run can be cut
    /// (`parallel`), with the same results.
    pub fn run_until(&mut self, t: Time) {
        if self.parallel.threads.asked != 1
            && self.parallel.par.is_none()
            && self.events.processed() == 0
        {
            parallel::start(self);
        }
        if self.parallel.par.is_some() {
            parallel::run_until(self, t);
        } else {
            self.run_observed(t, |_, _, _| {});
        }
    }

    /// `run_until` that shows `seen` each event before it is handled (what
    /// `cut_profile` counts); with `run_until`'s empty `seen` it compiles to the loop
    /// alone.
    #[inline(always)]
    fn run_observed(&mut self, t: Time, mut seen: impl FnMut(&Sim, Time, Event)) {
        let started = Instant::now();
        let mut t = t.min(self.budget.end);
        loop {
            self.fabric.handoffs.horizon = t;
            while !self.budget.done {
                let Some((at, code)) = self.events.pop_until(t) else {
                    break;
                };
                self.step(at, code, &mut seen);
            }
            if !self.budget.drain {
                break;
            }
            // every flow is done, and the run goes on to its new end (`stop_all_done`)
            self.budget.drain = false;
            self.budget.done = false;
            t = t.min(self.budget.end);
        }
        if !self.budget.done {
            self.now = self.now.max(t);
        }
        self.records.wall += started.elapsed().as_secs_f64();
    }

    /// Handles event `code` at `at`, showing it to `seen` first.
    #[inline(always)]
    fn step(&mut self, at: Time, code: u32, seen: &mut impl FnMut(&Sim, Time, Event)) {
        self.now = at;
        if self.fabric.prefetch {
            prefetch::near(&self.events, &self.fabric);
        }
        match Event::decode(code) {
            Some(e) => {
                seen(self, at, e);
                self.dispatch(e)
            }
            None => debug_assert!(false, "event code {code:#x} of no kind"),
        }
        if !self.ends.resume.is_empty() {
            self.resume_senders();
        }
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.budget.end);
    }

    #[inline]
    fn dispatch(&mut self, e: Event) {
        match e {
            Event::Arrive(p) => self.arrive(p),
            Event::Handoff(p) => {
                let h = self.fabric.host_at(p);
                self.enqueue(p, self.fabric.nic_of(h, p, &self.ends.flows));
            }
            Event::TxDone(port) => self.tx_done(port),
            Event::FlowStart => self.start_flows(),
            Event::Rto(f) => {
                self.drive_sender(f, false, |snd, now, cfg, out| {
                    snd.on_rto_event(now, cfg, out)
                });
            }
            Event::DelAck(f) => {
                if self.ends.on_delack(f, self.now) {
                    self.send_acks(f);
                }
            }
            Event::UdpTick(f) => {
                if let Some(tick) = self.ends.udp_tick(f, self.now, false) {
                    self.udp_step(f, tick.send, tick.next);
                }
            }
            Event::Stop(f) => self.ends.stop(f),
            Event::Begin(f) => self.start_flow(f),
            Event::ShaperTx(s) => {
                if self.hosts.woken(s, self.now) {
                    self.shaper_drain(s);
                }
            }
            Event::HostTick => {
                self.fabric.handoffs.reader_handled();
                self.on_host_tick()
            }
            Event::Control(c) => {
                self.fabric.handoffs.reader_handled();
                self.on_control(c)
            }
            Event::Sent(id) => {
                // a packet its sender's small queue counts has left the host's NIC
                let (flow, size) = self.fabric.left_host(id);
                self.ends.release_small_queue(flow, size);
                if self.parallel.part.is_some() && self.parallel.forget_ghost(id) {
                    self.fabric.pkts.free(id);
                }
            }
            Event::PmdDone(c) => self.on_pmd_done(c),
            Event::C2tbTick => self.on_cpu_timer(e),
            Event::NicMonitor => {
                self.fabric.handoffs.reader_handled();
                self.on_cpu_timer(e)
            }
            Event::Sample => {
                self.fabric.handoffs.reader_handled();
                let now = self.now;
                self.records.recorder.sample(
                    now,
                    &self.fabric.net,
                    &self.ends.flows,
                    &self.hosts.vms,
                );
                let used = MemoryUse::of(&self.fabric, &self.hosts, &self.records);
                self.budget
                    .check_memory(now, "output.sample_interval", used);
                let next = now + self.records.recorder.interval();
                if next <= self.budget.end {
                    self.schedule(next, Event::Sample, Origin::GLOBAL);
                }
            }
        }
    }

    /// A packet reached the node in its `at` field.
    #[inline]
    fn arrive(&mut self, id: PktId) {
        let node = self.fabric.pkts[id].at;
        match self.fabric.node_kind[node.idx()] {
            NodeKind::Switch(s) => {
                self.enqueue(id, self.fabric.route(node, s, id));
            }
            NodeKind::Host(_) => {
                if self.fabric.host_hook && through_cpu(self, id) {
                    return;
                }
                self.records.counters.delivered += 1;
                self.deliver(id);
            }
        }
    }

    /// Offers packet `id` to queue `queue` of `port` (where the fabric routed it, or
    /// the NIC its host sends it from).
    #[inline]
    fn enqueue(&mut self, id: PktId, (port, queue): (PortId, usize)) {
        match self.fabric.offer(self.now, port, id, queue) {
            Admit::Transmit { arrive, wake } => {
                self.on_wire(port, id, arrive);
                if let Some(w) = wake {
                    self.schedule(w, Event::TxDone(port), Origin::port(port.0));
                }
            }
            Admit::Queued(Some(wake)) => {
                self.schedule(wake, Event::TxDone(port), Origin::port(port.0))
            }
            Admit::Queued(None) => {}
            Admit::Dropped => {
                self.records.counters.dropped += 1;
                self.discard(id);
            }
        }
        if !self.fabric.evicted.is_empty() {
            let mut evicted = std::mem::take(&mut self.fabric.evicted);
            for (_, v) in evicted.drain(..) {
                self.records.counters.evicted += 1;
                self.discard(v);
            }
            self.fabric.evicted = evicted;
        }
    }

    /// Packet `id` went on the wire of `port` and reaches its peer at `arrive`. A
    /// packet its sender's small queue counts is released when its last bit has
    /// left (the NIC's completion), an event scheduled before its arrival so that,
    /// on a link without delay, it still comes first.
    #[inline(always)]
    fn on_wire(&mut self, port: PortId, id: PktId, arrive: Time) {
        let mut at = arrive;
        if self.parallel.wire_hook {
            match self.on_wire_hook(port, id, arrive) {
                Some(t) => at = t,
                None => return,
            }
        }
        let by = Origin::port(port.0);
        if self.ends.small_queues && self.fabric.pkts[id].has(flags::TSQ) {
            self.schedule(self.fabric.left_nic(port, arrive), Event::Sent(id), by);
        }
        self.schedule(at, Event::Arrive(id), by);
    }

    /// What happens to a packet going on the wire in runs that count it per tenant
    /// and port, capture packets, give hosts a receive wait, or are a partition of a
    /// parallel run (one flag, `wire_hook`, so that other runs pay one test): counts
    /// it, captures it, adds the wait of a host that takes it later
    /// (`network.host_jitter`) and mails it if `port` is cut. When its peer takes it;
    /// `None` if it was mailed.
    #[inline(never)]
    fn on_wire_hook(&mut self, port: PortId, id: PktId, arrive: Time) -> Option<Time> {
        let taken = self.fabric.host_wait(port, arrive);
        if let Some(c) = self.records.capture.as_deref_mut() {
            c.on_wire(self.now, port, &self.fabric.pkts[id]);
        }
        if let Some(tl) = self.records.recorder.tenant_links.as_mut() {
            let p = &self.fabric.pkts[id];
            if let Some(f) = self.ends.flows.get(p.flow.idx()) {
                tl.count(port.0, f.spec.tenant, p.size);
            }
        }
        if !self.parallel.part.as_deref().is_some_and(|pc| pc.cut(port)) {
            return Some(taken);
        }
        // mailed to the partition across: a packet its sender's small queue counts
        // stays here as a ghost until it has left the NIC (its `Sent` event, always
        // before it arrives: cut links have a delay); the copy mailed no longer
        // counts, as in the sequential run it no longer does when it arrives
        let (pkt, sack, ghost) = self.fabric.send_away(id);
        let by = Origin::port(port.0);
        if ghost {
            self.schedule(self.fabric.left_nic(port, arrive), Event::Sent(id), by);
        }
        let m = parallel::Mail::new(taken, by, pkt, sack);
        self.parallel.post(port, m, ghost.then_some(id));
        None
    }

    #[inline]
    fn tx_done(&mut self, port: PortId) {
        let (started, wake) = self.fabric.tx_done(self.now, port);
        if let Some((id, arrive)) = started {
            self.on_wire(port, id, arrive);
        }
        if let Some(w) = wake {
            self.schedule(w, Event::TxDone(port), Origin::port(port.0));
        }
    }
}

/// Packet `id`, at its host, goes through the vswitch's CPU model if that costs
/// cycles (`Fabric::host_hook`): whether the model took it.
#[inline(never)]
fn through_cpu(sim: &mut Sim, id: PktId) -> bool {
    let Some(cpu) = sim.hosts.cpu.as_mut() else {
        return false;
    };
    let (pkt, vms) = ((id, &sim.fabric.pkts[id]), &sim.hosts.vms);
    match cpu.rx_in(sim.now, pkt, &sim.hosts.pairs, vms) {
        Some(to) => {
            sim.cpu_took(id, to);
            true
        }
        None => false,
    }
}
