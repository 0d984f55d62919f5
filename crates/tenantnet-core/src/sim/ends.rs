//! The endpoints' own steps: a flow's transport on the data and ACKs that reach it
//! and on its timers, the packets it sends, its small queue's count, its
//! completion. Each works on the [`Endpoints`] alone and returns or leaves what
//! happened (packets to send, the ACKs a receiver asked for, the last flow done,
//! senders to resume); the loop hands it on (`sim/datapath.rs`).

use super::flow::flows_of;
use super::flow::Endpoint;
use super::parts::Endpoints;
use super::queries::ExchangeState;
use super::sack_store::SackStore;
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{FlowId, HostId, Packet, VmId};
use crate::transport::tcp_receiver::{Ack, DataSegment};
use crate::transport::tcp_sender::Segment;
use crate::transport::udp::Tick;
use crate::transport::TcpConfig;
use crate::workload::{Exchanges, FlowKind, FlowSpec};

/// The index of a flow's TCP configuration (0 for UDP flows, which have none).
pub(super) fn transport_of(kind: &FlowKind) -> usize {
    match kind {
        FlowKind::Tcp { transport } => *transport as usize,
        FlowKind::Udp { .. } => 0,
    }
}

/// What every packet of one kind a flow sends in one step shares: the packet
/// each starts from, and the host (and VM) that sends them.
#[derive(Clone, Copy)]
pub(super) struct Template {
    /// The packet each starts from.
    pub base: Packet,
    /// The bytes of headers a data packet adds to its payload.
    pub header: u32,
    /// The sending host.
    pub host: HostId,
    /// The sending VM, if any.
    pub vm: Option<VmId>,
}

impl Endpoints {
    /// The endpoints of flows `specs` (in any order; `tcp` the configurations they
    /// index, `seed` the scenario's) and the request–response `exchanges`: the
    /// flows without a gate in the order they start.
    pub(super) fn new(
        specs: Vec<FlowSpec>,
        tcp: Vec<TcpConfig>,
        exchanges: Exchanges,
        seed: u64,
    ) -> Endpoints {
        let flows = flows_of(specs, &tcp, seed);
        let mut start_order: Vec<u32> = (0..flows.len() as u32).collect();
        // flows behind a gate start when it opens
        start_order.retain(|&i| flows[i as usize].spec.after.is_none());
        start_order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
        Endpoints {
            finite_flows: flows.iter().filter(|f| f.finite()).count() as u64,
            small_queues: flows.iter().any(|f| f.small_queue.on()),
            flows,
            tcp,
            seed,
            start_order,
            next_start: 0,
            sender_out: Default::default(),
            receiver_out: Default::default(),
            completed: 0,
            exchanges: ExchangeState::new(exchanges),
            resume: Vec::new(),
        }
    }

    /// The TCP configurations the scenario resolved to (the first is the
    /// scenario-wide `[transport]`).
    pub fn tcp_configs(&self) -> &[TcpConfig] {
        &self.tcp
    }

    /// Flow `f`'s transport state, made now if this is its first use.
    #[inline]
    pub(super) fn ep(&mut self, f: FlowId) -> &mut Endpoint {
        self.flows[f.idx()].ep_mut(f.idx(), &self.tcp, self.seed)
    }

    /// Flow `f`'s TCP configuration (a UDP flow's is the first's, unused).
    #[inline]
    pub(super) fn tcp_of(&self, f: FlowId) -> &TcpConfig {
        &self.tcp[transport_of(&self.flows[f.idx()].spec.kind)]
    }

    /// Flow `f`'s sending host.
    #[inline]
    pub(super) fn src(&self, f: FlowId) -> HostId {
        self.flows[f.idx()].spec.src
    }

    /// Flow `f`'s receiving host.
    #[inline]
    pub(super) fn dst(&self, f: FlowId) -> HostId {
        self.flows[f.idx()].spec.dst
    }

    /// The wire size of flow `f`'s full-sized data packet.
    #[inline]
    pub(super) fn packet_size(&self, f: FlowId) -> u64 {
        self.tcp_of(f).packet_size()
    }

    /// `bytes` of flow `f`'s data left its host (or were dropped there). A sender
    /// waiting for its small queue whose bytes are now down to the limit joins
    /// [`resume`](Endpoints::resume): Linux's `tcp_wfree` queueing a throttled
    /// socket for the TSQ tasklet, which runs after the completion or drop that
    /// freed the bytes.
    pub(super) fn release_small_queue(&mut self, f: FlowId, bytes: u64) {
        let full = self.packet_size(f);
        let sq = &mut self.flows[f.idx()].small_queue;
        sq.held -= bytes;
        if sq.waiting && sq.room() >= full {
            sq.waiting = false;
            self.resume.push(f);
        }
    }

    /// Sized flow `f` has every byte acknowledged at `now`: whether it was the
    /// last of the run's sized flows.
    pub(super) fn complete(&mut self, f: FlowId, now: Time) -> bool {
        self.flows[f.idx()].end = Some(now);
        self.completed += 1;
        self.completed == self.finite_flows
    }

    /// What flow `f`'s data segments sent at `now` share.
    #[inline]
    pub(super) fn segment_template(&self, f: FlowId, now: Time) -> Template {
        let flow = &self.flows[f.idx()];
        let cfg = self.tcp_of(f);
        let base = Packet {
            ts: now,
            flow: f,
            dst: flow.spec.dst,
            hash: flow.hash,
            pair: flow.pair,
            dscp: flow.spec.dscp,
            flags: if cfg.ect() { flags::ECT } else { 0 }
                | if flow.small_queue.on() { flags::TSQ } else { 0 },
            ..Default::default()
        };
        let (host, vm, header) = (flow.spec.src, flow.spec.src_vm, cfg.header);
        Template {
            base,
            header,
            host,
            vm,
        }
    }

    /// Flow `f`'s packet for segment `seg`, from `t`; its small queue counts it.
    #[inline]
    pub(super) fn segment(&mut self, f: FlowId, t: &Template, seg: Segment) -> Packet {
        let mut p = t.base;
        p.seq = seg.seq;
        p.dscp = self.flows[f.idx()].spec.dscp_at(seg.seq);
        p.len = seg.len;
        p.size = seg.len + t.header;
        if seg.retx {
            p.flags |= flags::RETX;
        }
        if p.has(flags::TSQ) {
            self.flows[f.idx()].small_queue.held += p.size as u64;
        }
        p
    }

    /// What flow `f`'s ACKs share (`pinned`: they retrace the data's path).
    #[inline]
    pub(super) fn ack_template(&self, f: FlowId, pinned: bool) -> Template {
        let flow = &self.flows[f.idx()];
        let cfg = self.tcp_of(f);
        let base = Packet {
            flow: f,
            dst: flow.spec.src,
            hash: flow.hash_rev,
            pair: flow.pair_rev,
            dscp: flow.spec.dscp,
            size: cfg.ack_size,
            flags: if pinned { flags::PINNED } else { 0 },
            ..Default::default()
        };
        Template {
            base,
            header: 0,
            host: flow.spec.dst,
            vm: flow.spec.dst_vm,
        }
    }

    /// Flow `f`'s packet for ACK `a`, from `t`; its SACK option goes into `sacks`.
    #[inline]
    pub(super) fn ack(&self, f: FlowId, t: &Template, a: Ack, sacks: &mut SackStore) -> Packet {
        let mut p = t.base;
        p.seq = a.ack;
        // an ACK travels with the class of the last byte it acknowledges
        p.dscp = self.flows[f.idx()].spec.dscp_at(a.ack.saturating_sub(1));
        p.ts = a.ts;
        p.flags = flags::ACK | (t.base.flags & flags::PINNED) | if a.ece { flags::ECE } else { 0 };
        if a.sack.n > 0 {
            p.size += a.sack.wire_bytes();
            p.len = sacks.put(a.sack);
        }
        p
    }

    /// Data packet `p` reached flow `f`'s receiver at `now`: a UDP flow counts it;
    /// a TCP receiver takes it, leaves the ACKs it asks for in `receiver_out` and
    /// returns whether the flow now has every byte. The bytes delivered in order
    /// are added to the tenant's in `tenant_bytes`.
    #[inline]
    pub(super) fn on_data(
        &mut self,
        now: Time,
        p: &Packet,
        tenant_bytes: &mut [u64],
    ) -> Option<bool> {
        let flow = &mut self.flows[p.flow.idx()];
        let tenant = flow.spec.tenant as usize;
        match Endpoint::made(&mut flow.ep, p.flow.idx(), &flow.spec, &self.tcp, self.seed) {
            Endpoint::Udp { .. } => {
                flow.delivered += p.len as u64;
                tenant_bytes[tenant] += p.len as u64;
                None
            }
            Endpoint::Tcp { rcv, .. } => {
                let cfg = &self.tcp[transport_of(&flow.spec.kind)];
                let delack = cfg.delayed_ack.then_some(cfg.delayed_ack_timeout);
                let before = rcv.rcv_nxt;
                let seg = DataSegment {
                    seq: p.seq,
                    len: p.len,
                    ce: p.has(flags::CE),
                    ts: p.ts,
                    push: cfg.ack_push && flow.spec.size == Some(p.seq + p.len as u64),
                };
                rcv.on_data(now, seg, delack, &mut self.receiver_out);
                let gained = rcv.rcv_nxt - before;
                flow.delivered += gained;
                tenant_bytes[tenant] += gained;
                Some(gained > 0 && flow.spec.size == Some(flow.delivered))
            }
        }
    }

    /// Flow `f`'s delayed-ACK timer fired at `now`: its receiver leaves the ACKs it
    /// asks for in `receiver_out`; whether it has one (a TCP flow).
    pub(super) fn on_delack(&mut self, f: FlowId, now: Time) -> bool {
        let flow = &mut self.flows[f.idx()];
        let ep = Endpoint::made(&mut flow.ep, f.idx(), &flow.spec, &self.tcp, self.seed);
        let Endpoint::Tcp { rcv, .. } = ep else {
            return false;
        };
        rcv.on_delack_event(now, &mut self.receiver_out);
        true
    }

    /// A long-lived TCP flow stops offering data. It has no completion time (it is
    /// not sized); it stops being sampled once what it sent is acknowledged.
    pub(super) fn stop(&mut self, f: FlowId) {
        if let Endpoint::Tcp { snd, .. } = self.ep(f) {
            snd.stop();
        }
    }

    /// UDP flow `f`'s source ticks at `now` (`first`: it starts): whether it sends
    /// and when it ticks next.
    pub(super) fn udp_tick(&mut self, f: FlowId, now: Time, first: bool) -> Option<Tick> {
        match self.ep(f) {
            Endpoint::Udp { src, .. } if first => Some(src.start(now)),
            Endpoint::Udp { src, .. } => Some(src.tick(now)),
            Endpoint::Tcp { .. } => None,
        }
    }

    /// UDP flow `f`'s step at `now`: `None` once it has stopped; else the packet it
    /// sends (if `send`) with its sending host and VM, and when it stops.
    pub(super) fn udp_step(
        &mut self,
        f: FlowId,
        now: Time,
        send: bool,
    ) -> Option<(Option<Template>, Time)> {
        let flow = &mut self.flows[f.idx()];
        let stop = flow.spec.stop.unwrap_or(u64::MAX);
        if now >= stop {
            return None;
        }
        let ep = Endpoint::made(&mut flow.ep, f.idx(), &flow.spec, &self.tcp, self.seed);
        let Endpoint::Udp { src, sent } = ep else {
            return Some((None, stop));
        };
        if !send {
            return Some((None, stop));
        }
        let size = src.packet_size();
        let base = Packet {
            seq: *sent,
            ts: now,
            flow: f,
            dst: flow.spec.dst,
            size,
            len: size,
            hash: flow.hash,
            pair: flow.pair,
            dscp: flow.spec.dscp_at(*sent),
            ..Default::default()
        };
        *sent += size as u64;
        let (host, vm) = (flow.spec.src, flow.spec.src_vm);
        let t = Template {
            base,
            header: 0,
            host,
            vm,
        };
        Some((Some(t), stop))
    }
}
