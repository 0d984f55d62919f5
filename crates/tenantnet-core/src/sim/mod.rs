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

pub mod control;
pub mod cpu;
mod cpu_records;
pub mod cut_profile;
pub mod datapath;
pub mod endpoints;
mod ends;
pub mod event;
mod fabric;
pub mod flow;
pub mod footprint;
mod hosts;
pub mod ideal;
pub mod parallel;
pub mod parts;
pub mod queries;
pub mod recorder;
pub mod results;
pub mod sack_store;
pub mod shaping;
pub mod vm_results;

use std::time::Instant;

use crate::control::scheduled::ScheduledChanges;
use crate::control::Controllers;
use crate::engine::queue::{EventQueue, Origin, Ties};
use crate::engine::Time;
use crate::net::host_nic::{fq_queues, AckPath, AckRoutes, HostNic};
use crate::net::packet::flags;
use crate::net::port::Admit;
use crate::net::PacketPool;
use crate::net::{FlowId, HostId, Network, NodeKind, PktId, PortId, VmId};
use crate::transport::tcp_receiver::ReceiverOut;
use crate::transport::tcp_sender::SenderOut;
use crate::transport::TcpConfig;
use crate::vswitch::VswitchParams;
use crate::workload::{Exchanges, FlowSpec};
pub use event::Event;
pub use flow::Flow;
use footprint::{Footprint, PartKind};
use parts::{ControlPlane, Endpoints, Fabric, Hosts, Parallelism, Records, RunBudget};
use recorder::{OutputParams, Recorder};
use results::RunMeta;

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
    budget: RunBudget,
    /// The fabric controllers and scheduled changes.
    control: ControlPlane,
    /// Its threads: the partitions of a parallel run, or what a partition holds.
    parallel: Parallelism,
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
    pub fn new(p: SimParams) -> Self {
        let node_kind = p.net.nodes.iter().map(|n| n.kind).collect();
        let mut flows: Vec<Flow> = p
            .flows
            .into_iter()
            .enumerate()
            .map(|(i, s)| Flow::new(i, s, &p.tcp, p.seed))
            .collect();
        let mut start_order: Vec<u32> = (0..flows.len() as u32).collect();
        // flows behind a gate start when it opens
        start_order.retain(|&i| flows[i as usize].spec.after.is_none());
        start_order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
        let finite_flows = flows.iter().filter(|f| f.finite()).count() as u64;
        let pairs = datapath::index_pairs(&mut flows, &p.vswitch);
        if p.net.host_nic == HostNic::Fq {
            let ends = flows.iter().map(|f| (f.spec.src, f.spec.dst));
            let queues = fq_queues(ends, p.net.hosts.len());
            for (f, q) in flows.iter_mut().zip(queues) {
                f.nic_q = q;
            }
        }
        let small_queues = flows.iter().any(|f| f.small_queue.on());
        let ack_routes = (p.net.ack_path == AckPath::Symmetric).then(|| {
            AckRoutes::build(
                &p.net,
                flows.iter().map(|f| (f.spec.src, f.spec.dst, f.hash)),
            )
        });
        let shapers = datapath::vm_shapers(&p.vswitch);
        let cpu = (p.vswitch.cpu.as_ref())
            .map(|s| Box::new(cpu::CpuState::new(s, &p.vswitch.hosts, p.vswitch.vms.len())));
        let rec = Recorder::new(
            p.output,
            &p.net,
            flows.len(),
            p.meta.tenants.len(),
            p.vswitch.vms.len(),
        );
        let grid = parallel::grid(&p.net);
        let mut sim = Sim {
            now: 0,
            events: EventQueue::for_horizon(event_horizon(&p.net, &p.tcp))
                .with_ties(p.ties, p.seed),
            fabric: Fabric {
                net: p.net,
                node_kind,
                pkts: PacketPool::default(),
                evicted: Vec::new(),
                ack_routes,
                sacks: Default::default(),
            },
            hosts: Hosts {
                vms: p.vswitch.vms,
                vswitches: p.vswitch.hosts,
                tick: p.vswitch.tick,
                tick_key: p.vswitch.tick_key.clone(),
                pairs,
                shapers,
                touched_shapers: Vec::new(),
                control_out: Vec::new(),
                released: Vec::new(),
                vm_rates: datapath::VmRateCols::new(),
                cpu,
            },
            ends: Endpoints {
                flows,
                tcp: p.tcp,
                start_order,
                next_start: 0,
                sender_out: SenderOut::default(),
                receiver_out: ReceiverOut::default(),
                finite_flows,
                completed: 0,
                small_queues,
                exchanges: queries::ExchangeState::new(p.exchanges),
                resume: Vec::new(),
            },
            records: Records {
                counters: Counters::default(),
                recorder: rec,
                meta: p.meta,
                wall: 0.0,
                control_wall: 0.0,
            },
            budget: RunBudget {
                end: p.duration,
                stop_when_done: p.stop_when_done,
                done: false,
                seed: p.seed,
                footprint: p.footprint,
                memory: p.budget,
                failure: None,
                grid,
                drain: false,
            },
            control: ControlPlane {
                controllers: (ScheduledChanges::controllers(p.vswitch.changes).into_iter())
                    .chain(p.controllers)
                    .collect(),
            },
            parallel: Parallelism::default(),
        };
        sim.parallel.wire_hook = sim.records.recorder.tenant_links.is_some();
        sim.start();
        sim
    }

    /// Sizes the packet pool to the budget, starts the vswitches and controllers,
    /// and schedules the first flow start and the first sample.
    fn start(&mut self) {
        let room = self.budget.memory as f64 - self.budget.footprint.of(PartKind::Fixed);
        let sack = self.ends.tcp.iter().any(|c| c.recovery.uses_sack());
        let per_packet = footprint::per_packet(sack);
        self.fabric.pkts = PacketPool::with_cap((room / per_packet).max(1024.0) as usize);
        self.start_vswitches();
        self.start_cpu();
        if let Some(&first) = self.ends.start_order.first() {
            let t = self.ends.flows[first as usize].spec.start;
            self.schedule(t, Event::FlowStart, Origin::GLOBAL);
        }
        self.schedule_first_sample();
    }

    /// Schedules the first sample, if the run records any.
    fn schedule_first_sample(&mut self) {
        let iv = self.records.recorder.interval();
        if iv > 0 && iv <= self.budget.end {
            self.schedule(iv, Event::Sample, Origin::GLOBAL);
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The time the run ends.
    pub fn end(&self) -> Time {
        self.budget.end
    }

    /// Whether the run has reached its end (the duration, or every flow done when
    /// `stop_when_done`).
    pub fn finished(&self) -> bool {
        self.budget.done || self.now >= self.budget.end
    }

    /// Packet counters so far, and ECN marks applied so far.
    pub fn counters(&self) -> (Counters, u64) {
        if let Some(par) = &self.parallel.par {
            return par.counters();
        }
        (
            self.records.counters,
            self.fabric.net.ports.iter().map(|p| p.stats().marks).sum(),
        )
    }

    /// Lets the run use up to `threads` threads (1: sequential; 0, the default: as
    /// many as the machine has cores when the run gains from them, `parallel`), and
    /// no more than the machine has idle cores when it starts. Before its first event;
    /// a run that cannot be cut runs on one, and
    /// [`threads_note`](Self::threads_note) says why.
    pub fn set_threads(&mut self, threads: usize) {
        self.ask_threads(threads, false);
    }

    /// Makes the run use `threads` threads whatever the machine's load, if it can be
    /// cut (what the tests of the parallel engine need). Before its first event.
    pub fn set_threads_exact(&mut self, threads: usize) {
        self.ask_threads(threads, true);
    }

    fn ask_threads(&mut self, threads: usize, exact: bool) {
        if self.events.processed() == 0 && self.parallel.par.is_none() {
            self.parallel.threads = parallel::Threads {
                asked: threads,
                exact,
                note: None,
            };
        }
    }

    /// The threads the run uses (the partitions it was cut into, or 1).
    pub fn threads_used(&self) -> usize {
        self.parallel.par.as_ref().map_or(1, |p| p.len())
    }

    /// Why the run uses one thread although more were allowed, once it has started.
    pub fn threads_note(&self) -> Option<&str> {
        self.parallel.threads.note.as_deref()
    }

    /// Events processed so far (in a parallel run, as the sequential run counts them).
    pub fn events_processed(&self) -> u64 {
        self.events.processed() + self.parallel.par.as_ref().map_or(0, |p| p.events())
    }

    /// The TCP configurations the scenario resolved to (the first is the
    /// scenario-wide `[transport]`).
    pub fn tcp_configs(&self) -> &[TcpConfig] {
        &self.ends.tcp
    }

    /// Each flow's data path as port names, from the source's NIC to the last
    /// switch's port toward the destination: the ECMP choice its hash makes.
    pub fn flow_paths(&self) -> Vec<Vec<String>> {
        self.paths(|f| self.fabric.net.path(f.spec.src, f.spec.dst, f.hash))
    }

    /// Each flow's ACK path as port names, from the destination's NIC to the last
    /// switch's port toward the source: the ECMP choice of its reverse hash.
    pub fn flow_ack_paths(&self) -> Vec<Vec<String>> {
        self.paths(|f| self.fabric.net.path(f.spec.dst, f.spec.src, f.hash_rev))
    }

    fn paths(&self, path: impl Fn(&Flow) -> Vec<PortId>) -> Vec<Vec<String>> {
        let name = |p| self.fabric.net.port_name(p);
        self.ends
            .flows
            .iter()
            .map(|f| path(f).into_iter().map(name).collect())
            .collect()
    }

    /// The memory the run was estimated to need before it started.
    pub fn footprint(&self) -> &Footprint {
        &self.budget.footprint
    }

    /// Why the run stopped early, if it did (it outgrew its memory budget).
    pub fn failure(&self) -> Option<&RunFailure> {
        self.budget.failure.as_ref()
    }

    /// Memory in use now, estimated as the footprint's fixed part plus the rows
    /// recorded and packet slots allocated so far, at the footprint's costs.
    pub fn memory_in_use(&self) -> f64 {
        use footprint::{PER_PACKET, PER_QUEUE_ROW, PER_SAMPLE_ROW, PER_VM_RATE_ROW};
        self.budget.footprint.of(PartKind::Fixed)
            + self.records.recorder.tp.time.len() as f64 * PER_SAMPLE_ROW
            + self.records.recorder.q.time.len() as f64 * PER_QUEUE_ROW
            + self.hosts.vm_rates.time.len() as f64 * PER_VM_RATE_ROW
            + self.fabric.pkts.slots() as f64 * PER_PACKET
            + self.fabric.sacks.bytes() as f64
    }

    /// Stores a new packet. Past the pool's cap (what the memory budget leaves for
    /// packets) the run stops after the current event.
    #[inline]
    pub(super) fn alloc_packet(&mut self, p: crate::net::Packet) -> PktId {
        let id = self.fabric.pkts.alloc(p);
        if self.fabric.pkts.over_cap() {
            self.out_of_memory("network.buffer");
        }
        id
    }

    /// Stops the run if it now uses more memory than its budget; `key` is the
    /// scenario key behind what just grew.
    pub(super) fn check_memory(&mut self, key: &str) {
        if self.memory_in_use() > self.budget.memory as f64 {
            self.out_of_memory(key);
        }
    }

    #[cold]
    fn out_of_memory(&mut self, key: &str) {
        use footprint::human_bytes;
        let what = if key == "network.buffer" {
            format!(
                "{} packets were alive at once: buffers, windows or links' bandwidth-delay products hold more than the budget allows",
                self.fabric.pkts.slots()
            )
        } else {
            let rows = self.records.recorder.tp.time.len()
                + self.records.recorder.q.time.len()
                + self.hosts.vm_rates.time.len();
            format!("it had recorded {rows} rows: record less (a longer output.sample_interval, fewer output.throughput scopes, output.queues = false)")
        };
        let message = format!(
            "the run stopped at {} simulated: it used about {} of memory, more than the memory budget of {} (raise it with --memory-budget); {what}",
            crate::units::format_duration(self.now),
            human_bytes(self.memory_in_use()),
            human_bytes(self.budget.memory as f64)
        );
        self.budget.stop(self.now, key, message);
    }

    /// Schedules `e` at `at` on behalf of `by`: a port of the node whose state the
    /// scheduling step changed (or the run's global generators), which orders it
    /// among simultaneous events (`EventQueue`'s keys).
    #[inline]
    fn schedule(&mut self, at: Time, e: Event, by: Origin) {
        self.events.push(at, by, e.encode());
    }

    /// The origin of what host `h` schedules: its NIC.
    #[inline]
    fn host_origin(&self, h: HostId) -> Origin {
        Origin::port(self.fabric.net.hosts[h.idx()].nic.0)
    }

    /// The origin of what flow `f`'s sending host schedules.
    fn sender_origin(&self, f: FlowId) -> Origin {
        self.host_origin(self.ends.flows[f.idx()].spec.src)
    }

    /// The origin of what flow `f`'s receiving host schedules.
    fn receiver_origin(&self, f: FlowId) -> Origin {
        self.host_origin(self.ends.flows[f.idx()].spec.dst)
    }

    /// The origin of what VM `v`'s host schedules.
    fn vm_origin(&self, v: VmId) -> Origin {
        self.host_origin(self.hosts.vms[v.idx()].host)
    }

    /// The origin of what host vswitch `k`'s host schedules.
    fn vswitch_origin(&self, k: usize) -> Origin {
        self.host_origin(self.hosts.vswitches[k].host)
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

    /// Runs every event whose key is below `bound` (a window of a parallel run).
    fn run_before(&mut self, bound: u128) {
        while !self.budget.done {
            let Some(key) = self.events.pop_before(bound) else {
                break;
            };
            self.parallel.event_key = key;
            self.step((key >> 64) as Time, key as u32, &mut |_, _, _| {});
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
            Event::TxDone(port) => self.tx_done(port),
            Event::FlowStart => self.start_flows(),
            Event::Rto(f) => self.on_rto(f),
            Event::DelAck(f) => self.on_delack(f),
            Event::UdpTick(f) => self.on_udp_tick(f),
            Event::Stop(f) => self.on_stop(f),
            Event::Begin(f) => self.start_flow(f),
            Event::ShaperTx(s) => self.on_shaper_tx(s),
            Event::HostTick => self.on_host_tick(),
            Event::Control(c) => self.on_control(c),
            Event::Sent(p) => self.on_sent(p),
            Event::PmdDone(c) => self.on_pmd_done(c),
            Event::C2tbTick => self.on_c2tb_tick(),
            Event::NicMonitor => self.on_nic_monitor(),
            Event::Sample => {
                let now = self.now;
                self.records.recorder.sample(
                    now,
                    &self.fabric.net,
                    &self.ends.flows,
                    &self.hosts.vms,
                );
                self.check_memory("output.sample_interval");
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
                let (port, queue) = self.fabric.route(node, s, id);
                self.enqueue(port, id, queue);
            }
            NodeKind::Host(_) => {
                if self.hosts.cpu.is_some() && self.rx_in(id) {
                    return;
                }
                self.records.counters.delivered += 1;
                self.deliver(id);
            }
        }
    }

    /// The queue of host NIC `nic` that packet `id` joins.
    #[inline]
    fn nic_queue(&self, nic: PortId, id: PktId) -> usize {
        self.fabric.nic_queue(nic, id, &self.ends.flows)
    }

    /// Offers packet `id` to queue `queue` of `port`.
    #[inline]
    fn enqueue(&mut self, port: PortId, id: PktId, queue: usize) {
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
        if self.parallel.wire_hook && self.on_wire_hook(port, id, arrive) {
            return;
        }
        let by = Origin::port(port.0);
        if self.ends.small_queues && self.fabric.pkts[id].has(flags::TSQ) {
            self.schedule(self.left_nic(port, arrive), Event::Sent(id), by);
        }
        self.schedule(arrive, Event::Arrive(id), by);
    }

    /// When a packet that reaches the far end of `port` at `arrive` has left it.
    #[inline]
    fn left_nic(&self, port: PortId, arrive: Time) -> Time {
        arrive - self.fabric.net.ports[port.idx()].core.delay
    }

    /// What happens to a packet going on the wire in runs that count it per tenant
    /// and port, or that are a partition of a parallel run (one flag, `wire_hook`,
    /// so that other runs pay one test): counts it, and mails it if `port` is cut.
    /// Whether it was mailed.
    #[inline(never)]
    fn on_wire_hook(&mut self, port: PortId, id: PktId, arrive: Time) -> bool {
        if let Some(tl) = self.records.recorder.tenant_links.as_mut() {
            let p = &self.fabric.pkts[id];
            if let Some(f) = self.ends.flows.get(p.flow.idx()) {
                tl.count(port.0, f.spec.tenant, p.size);
            }
        }
        if !self.parallel.part.as_deref().is_some_and(|pc| pc.cut(port)) {
            return false;
        }
        self.mail(id, arrive, port);
        true
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

    /// Whether every shared buffer pool's count of bytes in use equals what its
    /// ports hold right now.
    pub fn pools_consistent(&self) -> bool {
        let mut held = vec![0u64; self.fabric.net.pools.len()];
        for p in &self.fabric.net.ports {
            if let Some(i) = p.pool() {
                held[i as usize] += p.occupancy(self.now);
            }
        }
        self.fabric
            .net
            .pools
            .iter()
            .zip(held)
            .all(|(p, h)| p.used == h)
    }

    /// Packets alive now, and the same number counted independently: those waiting
    /// in ports and vswitch queues plus those on the wire or links (pending arrivals). Equal unless a
    /// packet leaked.
    pub fn in_flight_check(&self) -> (u64, u64) {
        if let Some(par) = &self.parallel.par {
            return par.in_flight();
        }
        let held: u64 = self
            .fabric
            .net
            .ports
            .iter()
            .map(|p| p.held_packets())
            .sum::<u64>()
            + self.hosts.held();
        let on_links = self
            .events
            .codes()
            .filter(|&c| matches!(Event::decode(c), Some(Event::Arrive(_))))
            .count() as u64;
        (self.fabric.pkts.live(), held + on_links)
    }
}
