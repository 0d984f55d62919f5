//! The memory a scenario's run would need ([`Footprint`]), estimated while the
//! scenario is built, before anything large is allocated: the topology from its
//! builder, each workload's flows from their count, then the recording, packets and
//! initial windows from the flows drawn. The first part that takes the total over
//! the budget fails the build with the estimate, naming the key behind the largest
//! part.
//!
//! Flows' lifetimes (for the `flow` rows of `throughput` and for how many flows are
//! alive at once): a long-lived or UDP flow runs from its start to its stop (or the
//! end); a sized flow for its ideal completion time, its size at its sender's NIC
//! rate. Packets alive at once are the smaller of what every buffer, VM queue and
//! link can hold and what the flows alive at once can have in flight (each up to one
//! port buffer plus a 4-hop path's bandwidth-delay product, both ways, ACKs included).

use super::build::Ctx;
use super::parse::ScenarioError;
use crate::engine::{to_secs, Time};
use crate::net::{Network, NetworkBuilder, NodeKind};
use crate::scenario::spec::Scope;
use crate::sim::footprint::{self as fp, human_count, Footprint, PartKind};
use crate::sim::recorder::OutputParams;
use crate::transport::{Recovery, TcpConfig};
use crate::vswitch::VswitchParams;
use crate::workload::{FlowKind, FlowSpec};

/// The estimate so far and the limits it must stay within.
pub struct Estimator {
    /// Bytes the run may use.
    pub budget: u64,
    /// Events the run may be estimated to need.
    pub max_events: f64,
    /// The parts estimated so far.
    pub fp: Footprint,
}

impl Estimator {
    /// An empty estimate under `budget` bytes and `max_events` events.
    pub fn new(budget: u64, max_events: f64) -> Self {
        Estimator {
            budget,
            max_events,
            fp: Footprint::default(),
        }
    }

    /// Adds a part and fails if the total is now over the budget.
    pub fn add(
        &mut self,
        ctx: &Ctx,
        kind: PartKind,
        what: impl Into<String>,
        key: &str,
        bytes: f64,
    ) -> Result<(), ScenarioError> {
        self.fp.add(kind, what, key, bytes);
        self.check(ctx)
    }

    /// Fails if the total is over the budget, naming the key behind the largest part.
    pub fn check(&self, ctx: &Ctx) -> Result<(), ScenarioError> {
        self.fp
            .check(self.budget)
            .map_err(|(key, msg)| ctx.err(&key, msg))
    }

    /// The network: every port and the forwarding tables (switches × leaves).
    pub fn network(&mut self, ctx: &Ctx, b: &NetworkBuilder) -> Result<(), ScenarioError> {
        let is_host: Vec<bool> = b.nodes().map(|(_, h)| h).collect();
        let switches = is_host.iter().filter(|h| !**h).count() as f64;
        let mut leaf = vec![false; is_host.len()];
        let mut links = 0.0;
        for (a, c, _) in b.links() {
            links += 1.0;
            if is_host[a.idx()] {
                leaf[c.idx()] = true;
            }
            if is_host[c.idx()] {
                leaf[a.idx()] = true;
            }
        }
        let leaves = leaf.iter().filter(|l| **l).count() as f64;
        let bytes = 2.0 * links * fp::PER_PORT + switches * leaves * fp::PER_ROUTE;
        let what = format!(
            "{} ports and {} forwarding entries",
            human_count(2.0 * links),
            human_count(switches * leaves)
        );
        self.add(ctx, PartKind::Fixed, what, "topology", bytes)
    }

    /// `n` more flows of workload `workload`, counted at `key`.
    pub fn flows(
        &mut self,
        ctx: &Ctx,
        n: u64,
        workload: &str,
        key: &str,
    ) -> Result<(), ScenarioError> {
        let what = format!("{} flows of {workload}", human_count(n as f64));
        self.add(ctx, PartKind::Fixed, what, key, n as f64 * fp::PER_FLOW)
    }

    /// The recording, the packets alive at once, the largest initial window and the
    /// events.
    pub fn run(&mut self, ctx: &Ctx, r: &RunShape) -> Result<(), ScenarioError> {
        self.fp.events = events(r);
        if self.fp.events > self.max_events {
            return Err(ctx.err(
                "simulation.duration",
                format!(
                    "the run would process {}, more than the limit of {} events (raise it with --max-events)",
                    self.fp.events_summary(),
                    human_count(self.max_events)
                ),
            ));
        }
        self.recording(ctx, r)?;
        self.packets(ctx, r)?;
        self.extra_queues(ctx, r.net)?;
        let segs = r
            .flows
            .iter()
            .filter_map(|f| match f.kind {
                FlowKind::Tcp { transport } => Some(r.tcp[transport as usize].init_cwnd),
                FlowKind::Udp { .. } => None,
            })
            .max()
            .unwrap_or(0);
        let what = format!("an initial window of {segs} segments");
        self.add(
            ctx,
            PartKind::Fixed,
            what,
            "transport.init_cwnd",
            segs as f64 * fp::PER_SEGMENT,
        )
    }

    /// The queues of multi-queue ports beyond their first: host NICs
    /// (`network.host_nic`) and switch ports (`network.queues`).
    fn extra_queues(&mut self, ctx: &Ctx, net: &Network) -> Result<(), ScenarioError> {
        let mut extra = [0usize; 2];
        for p in &net.ports {
            let host = matches!(net.nodes[p.node().idx()].kind, NodeKind::Host(_));
            extra[host as usize] += p.queue_count() - 1;
        }
        for (n, key) in extra
            .into_iter()
            .zip(["network.queues", "network.host_nic"])
        {
            if n > 0 {
                let what = format!("{} queues beyond each port's first", human_count(n as f64));
                let bytes = n as f64 * fp::PER_EXTRA_QUEUE;
                self.add(ctx, PartKind::Fixed, what, key, bytes)?;
            }
        }
        Ok(())
    }

    /// The rows of `throughput`, `queues` and `vm_rates`, checked together.
    fn recording(&mut self, ctx: &Ctx, r: &RunShape) -> Result<(), ScenarioError> {
        let o = r.output;
        let n = fp::samples(r.end, o.interval);
        let net = r.net;
        let (series, flow_rows) = throughput_series(r);
        let rows = n * series + flow_rows;
        let what = format!(
            "{} throughput samples ({} every {})",
            human_count(rows),
            human_count(series + flow_rows / n.max(1.0)),
            crate::units::format_duration(o.interval)
        );
        let rec = PartKind::Recording;
        let key = "output.sample_interval";
        self.fp.add(rec, what, key, rows * fp::PER_SAMPLE_ROW);
        let ports = net
            .ports
            .iter()
            .filter(|p| o.queues && (o.host_queues || net.is_switch(p.node())));
        let qrows = n * ports.map(|p| p.queue_count()).sum::<usize>() as f64;
        let what = format!("{} queue samples", human_count(qrows));
        self.fp.add(rec, what, key, qrows * fp::PER_QUEUE_ROW);
        if let Some((_, limit)) = &o.capture {
            let what = format!("up to {} captured packets", human_count(*limit as f64));
            let bytes = *limit as f64 * fp::PER_CAPTURED;
            self.fp.add(rec, what, "output.capture_packets", bytes);
        }
        if let Some((_, limit)) = &o.trace {
            let what = format!("up to {} flow-trace rows", human_count(*limit as f64));
            let bytes = *limit as f64 * fp::PER_TRACE_ROW;
            self.fp.add(rec, what, "output.trace_rows", bytes);
        }
        if !r.vswitch.hosts.is_empty() {
            let t = r.vswitch.tick;
            let vrows = fp::samples(r.end, t) * r.vswitch.vms.len() as f64;
            let what = format!("{} vm_rates rows", human_count(vrows));
            let key = &r.vswitch.tick_key;
            self.fp.add(rec, what, key, vrows * fp::PER_VM_RATE_ROW);
        }
        for p in r.periodic.iter().filter(|p| p.rows > 0.0) {
            let rows = fp::samples(r.end, p.period) * p.rows;
            let what = format!("{} {}", human_count(rows), p.what);
            self.fp.add(rec, what, &p.key, rows * p.row_bytes);
        }
        self.check(ctx)
    }

    fn packets(&mut self, ctx: &Ctx, r: &RunShape) -> Result<(), ScenarioError> {
        let net = r.net;
        let smallest = r
            .flows
            .iter()
            .map(|f| packet_size(f, r.tcp))
            .min()
            .unwrap_or(1500)
            .max(1) as f64;
        let max_delay = net.ports.iter().map(|p| p.delay()).max().unwrap_or(0);
        let max_rate = net.ports.iter().map(|p| p.rate_bps()).max().unwrap_or(0);
        let bdp = |rate: u64, delay: Time| rate as f64 * to_secs(delay) / 8.0;
        let buffers: f64 = net.ports.iter().map(|p| p.buffer() as f64).sum();
        let wires: f64 = net.ports.iter().map(|p| bdp(p.rate_bps(), p.delay())).sum();
        let everything = (buffers + wires) / smallest
            + r.vswitch.vms.len() as f64 * r.vm_queue as f64 / smallest;
        // what holds most of them: the buffers, or the links (their delay)
        let key = if wires > buffers {
            "topology.link_delay"
        } else {
            "network.buffer"
        };
        let biggest_buffer = net.ports.iter().map(|p| p.buffer()).max().unwrap_or(0) as f64;
        let per_flow_cap = biggest_buffer + 8.0 * bdp(max_rate, max_delay);
        let alive = flows_alive_at_once(r.flows, net, r.end, |f| {
            let pkt = packet_size(f, r.tcp).max(1) as f64;
            2.0 * f
                .size
                .map_or(per_flow_cap, |s| (s as f64).min(per_flow_cap))
                / pkt
        });
        let n = everything.min(alive);
        let sack = sack_flows(r.flows, r.tcp);
        let what = format!("{} packets alive at once", human_count(n));
        let per_packet = fp::per_packet(sack > 0);
        self.add(ctx, PartKind::Packets, what, key, n * per_packet)?;
        if sack == 0 {
            return Ok(());
        }
        let what = format!("{} SACK scoreboards", human_count(sack as f64));
        let bytes = sack as f64 * fp::PER_SACK_FLOW;
        self.add(ctx, PartKind::Fixed, what, "transport.recovery", bytes)?;
        let rack = flows_with(r.flows, r.tcp, |c| c.recovery == Recovery::Rack);
        if rack == 0 {
            return Ok(());
        }
        let what = format!("{} RACK-TLP states", human_count(rack as f64));
        let bytes = rack as f64 * fp::PER_RACK_FLOW;
        self.add(ctx, PartKind::Fixed, what, "transport.recovery", bytes)
    }
}

/// What the run will be, for the estimate of its recording and packets.
pub struct RunShape<'a> {
    /// The built network.
    pub net: &'a Network,
    /// Every flow.
    pub flows: &'a [FlowSpec],
    /// Transport configurations the flows index.
    pub tcp: &'a [TcpConfig],
    /// The end of the run.
    pub end: Time,
    /// Tenants.
    pub tenants: usize,
    /// What is recorded.
    pub output: &'a OutputParams,
    /// VMs and vswitches.
    pub vswitch: &'a VswitchParams,
    /// Each VM's egress queue, bytes.
    pub vm_queue: u64,
    /// The other tables and timers the run keeps every so often.
    pub periodic: &'a [Periodic],
}

/// A table the run adds rows to, or a timer it wakes, every `period` (the CPU model's
/// records and manager, QShare's decisions): its rows and events for the estimate.
#[derive(Clone, Debug)]
pub struct Periodic {
    /// The key that sets the period.
    pub key: String,
    /// What the rows are, for the estimate's text ("vm_cpu rows").
    pub what: &'static str,
    /// The period, picoseconds.
    pub period: Time,
    /// Rows added per period.
    pub rows: f64,
    /// Bytes per row.
    pub row_bytes: f64,
    /// Events per period.
    pub events: f64,
}

/// Throughput series sampled every interval (tenants, ports, queues of multi-queue
/// ports, VMs), and the rows of the `flow` scope over the run.
fn throughput_series(r: &RunShape) -> (f64, f64) {
    let (o, net) = (r.output, r.net);
    let has = |s: Scope| o.scopes.contains(&s);
    let mut series = 0.0;
    if has(Scope::Tenant) {
        series += r.tenants as f64;
    }
    if has(Scope::Link) {
        series += net.ports.len() as f64;
    }
    if has(Scope::Queue) {
        let queues = net.ports.iter().map(|p| p.queue_count()).filter(|&q| q > 1);
        series += queues.sum::<usize>() as f64;
    }
    for vm_scope in [Scope::Vm, Scope::VmData] {
        if has(vm_scope) {
            series += r.vswitch.vms.len() as f64;
        }
    }
    if has(Scope::TenantLink) {
        series += (super::super::sim::recorder::fabric_ports(net).len() * r.tenants) as f64;
    }
    let flow_rows = if has(Scope::Flow) {
        let rows = |f: &FlowSpec| {
            let (from, to) = lifetime(f, net, r.end);
            if from > r.end {
                0.0
            } else {
                ((to - from) / o.interval) as f64 + 1.0
            }
        };
        r.flows.iter().map(rows).sum()
    } else {
        0.0
    };
    (series, flow_rows)
}

/// Events the run will process, estimated. Every packet a flow can send costs about
/// two events per hop (its arrival and its port's wake-up), and a TCP packet as many
/// again for its ACK on the way back; a UDP source adds one per packet and one per
/// on/off period; sampling and vswitch ticks add theirs. What a flow can send: a sized
/// flow its size, a long-lived one its sender's NIC rate over its lifetime, a UDP
/// source its rate while on, each scaled down so that no host sends or receives more
/// than its link carries over the run, and no edge switch (the one a host's NIC
/// reaches) sends to or receives from the rest of the fabric more than its links to
/// other switches carry (a dumbbell's hosts share its core link). Flows that share a
/// bottleneck deeper in the fabric are still counted at those rates: an upper
/// estimate there.
fn events(r: &RunShape) -> f64 {
    let net = r.net;
    let span = |from: Time, to: Time| to_secs(to.saturating_sub(from).max(1));
    // per flow: bytes it can carry, events per byte
    let mut flows: Vec<(f64, f64)> = Vec::with_capacity(r.flows.len());
    let (mut sent, mut received) = (vec![0.0; net.hosts.len()], vec![0.0; net.hosts.len()]);
    let edge_of = |h: crate::net::HostId| net.ports[net.hosts[h.idx()].nic.idx()].peer().idx();
    let switch = |n: usize| matches!(net.nodes[n].kind, NodeKind::Switch(_));
    let crosses = |f: &FlowSpec| {
        let (a, b) = (edge_of(f.src), edge_of(f.dst));
        a != b && switch(a) && switch(b)
    };
    let (mut out, mut inn) = (vec![0.0; net.nodes.len()], vec![0.0; net.nodes.len()]);
    for f in r.flows {
        // a flow behind a gate (a response, a closed loop's later query) may run
        // any time: count all its bytes
        let (from, to) = match f.after {
            Some(_) => (0, r.end),
            None => lifetime(f, net, r.end),
        };
        if from > r.end {
            flows.push((0.0, 0.0));
            continue;
        }
        let hops = net.path(f.src, f.dst, 0).len() as f64;
        let nic = net.host_rate(f.src) as f64 / 8.0;
        let (bytes, per_byte) = match &f.kind {
            FlowKind::Tcp { transport } => {
                let mss = r.tcp[*transport as usize].mss as f64;
                let most = nic * span(from, r.end);
                let bytes = f
                    .size
                    .map_or(nic * span(from, to), |s| (s as f64).min(most));
                (bytes, hops * 4.0 / mss)
            }
            FlowKind::Udp {
                rate_bps,
                packet_size,
                onoff,
            } => {
                let duty = onoff
                    .as_ref()
                    .map_or(1.0, |o| o.on as f64 / (o.on + o.off) as f64);
                let bytes = *rate_bps as f64 / 8.0 * span(from, to) * duty;
                (bytes, (hops * 2.0 + 1.0) / *packet_size as f64)
            }
        };
        sent[f.src.idx()] += bytes;
        received[f.dst.idx()] += bytes;
        if crosses(f) {
            out[edge_of(f.src)] += bytes;
            inn[edge_of(f.dst)] += bytes;
        }
        flows.push((bytes, per_byte));
    }
    let run = to_secs(r.end);
    let cap = |rate_bps: f64, total: f64| {
        let most = rate_bps / 8.0 * run;
        if total > most {
            most / total
        } else {
            1.0
        }
    };
    // each switch's rate to other switches
    let mut fabric_bps = vec![0.0; net.nodes.len()];
    for p in &net.ports {
        let (a, b) = (p.node().idx(), p.peer().idx());
        if switch(a) && switch(b) {
            fabric_bps[a] += p.rate_bps() as f64;
        }
    }
    let mut total: f64 = r
        .flows
        .iter()
        .zip(&flows)
        .map(|(f, &(bytes, per_byte))| {
            let (s, d) = (f.src.idx(), f.dst.idx());
            let mut scale = (cap(net.host_rate(f.src) as f64, sent[s]))
                .min(cap(net.host_rate(f.dst) as f64, received[d]));
            if crosses(f) {
                let (es, ed) = (edge_of(f.src), edge_of(f.dst));
                scale = scale
                    .min(cap(fabric_bps[es], out[es]))
                    .min(cap(fabric_bps[ed], inn[ed]));
            }
            bytes * scale * per_byte
        })
        .sum();
    for f in r.flows {
        if let FlowKind::Udp { onoff: Some(o), .. } = &f.kind {
            let (from, to) = lifetime(f, net, r.end);
            total += span(from, to) * 1e12 / o.on.min(o.off) as f64;
        }
    }
    let ticks = fp::samples(r.end, r.output.interval);
    let vm_ticks = if r.vswitch.hosts.is_empty() {
        0.0
    } else {
        fp::samples(r.end, r.vswitch.tick)
    };
    let periodic: f64 = (r.periodic.iter())
        .map(|p| fp::samples(r.end, p.period) * p.events)
        .sum();
    total + ticks + vm_ticks + periodic
}

/// A flow's full-size packet on the wire, bytes.
/// How many flows recover with SACK.
fn sack_flows(flows: &[FlowSpec], tcp: &[TcpConfig]) -> u64 {
    flows_with(flows, tcp, |c| c.recovery.uses_sack())
}

/// How many TCP flows have a transport that `pred` holds for.
fn flows_with(flows: &[FlowSpec], tcp: &[TcpConfig], pred: impl Fn(&TcpConfig) -> bool) -> u64 {
    let holds = |f: &&FlowSpec| match &f.kind {
        FlowKind::Tcp { transport } => pred(&tcp[*transport as usize]),
        FlowKind::Udp { .. } => false,
    };
    flows.iter().filter(holds).count() as u64
}

fn packet_size(f: &FlowSpec, tcp: &[TcpConfig]) -> u64 {
    match &f.kind {
        FlowKind::Tcp { transport } => tcp[*transport as usize].packet_size(),
        FlowKind::Udp { packet_size, .. } => *packet_size as u64,
    }
}

/// When flow `f` runs: from its start to its stop (or `end`), or for its ideal
/// completion time if it has a size.
fn lifetime(f: &FlowSpec, net: &Network, end: Time) -> (Time, Time) {
    let to = match f.size {
        Some(s) => {
            let ideal = crate::engine::tx_time(s, net.host_rate(f.src));
            f.start.saturating_add(ideal)
        }
        None => f.stop.unwrap_or(end),
    };
    (f.start, to.min(end).max(f.start))
}

/// The largest sum of `weight` over flows running at the same time.
fn flows_alive_at_once(
    flows: &[FlowSpec],
    net: &Network,
    end: Time,
    weight: impl Fn(&FlowSpec) -> f64,
) -> f64 {
    let mut edges: Vec<(Time, bool, f64)> = Vec::with_capacity(2 * flows.len());
    for f in flows {
        let (from, to) = lifetime(f, net, end);
        if from <= end {
            let w = weight(f);
            edges.push((from, true, w));
            edges.push((to.saturating_add(1), false, w));
        }
    }
    // at equal times, ends (false) before starts
    edges.sort_by_key(|e| (e.0, e.1));
    let (mut now, mut peak) = (0.0f64, 0.0f64);
    for (_, start, w) in edges {
        now += if start { w } else { -w };
        peak = peak.max(now);
    }
    peak
}
