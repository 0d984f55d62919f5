//! Host side of the simulation: starting flows, turning transport decisions into
//! packets, and delivering arriving packets to receivers and senders.

use super::flow::Endpoint;
use super::{parallel, Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::queue::Ties;
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{FlowId, Packet};
use crate::transport::tcp_receiver::{DataSegment, ReceiverOut};
use crate::transport::tcp_sender::{SenderOut, TcpSender};
use crate::transport::TcpConfig;
use crate::workload::FlowKind;

/// The index of a flow's TCP configuration (0 for UDP flows, which have none).
pub(super) fn transport_of(kind: &FlowKind) -> usize {
    match kind {
        FlowKind::Tcp { transport } => *transport as usize,
        FlowKind::Udp { .. } => 0,
    }
}

impl Sim {
    /// Starts every flow whose start time has come, then schedules the next start.
    pub(super) fn start_flows(&mut self) {
        self.parallel
            .handled_for_all(self.now, Event::FlowStart.encode());
        while let Some(&f) = self.ends.start_order.get(self.ends.next_start) {
            let at = self.ends.flows[f as usize].spec.start;
            if at > self.now {
                self.schedule(at, Event::FlowStart, Origin::GLOBAL);
                return;
            }
            self.ends.next_start += 1;
            self.start_flow(FlowId(f));
        }
    }

    /// Starts flow `f`, unless it would start at or after its `stop` (a departed
    /// tenant's flow): then it never sends.
    pub(super) fn start_flow(&mut self, f: FlowId) {
        let now = self.now;
        if let Some(stop) = self.ends.flows[f.idx()].spec.stop {
            if stop <= now {
                return;
            }
            self.schedule(stop, Event::Stop(f), self.sender_origin(f));
        }
        self.records.recorder.flow_started(f);
        if self.parallel.part.is_some() {
            self.note_start(f);
        }
        match &mut self.ends.flows[f.idx()].ep {
            Endpoint::Tcp { .. } => {
                self.drive_sender(f, false, |snd, now, cfg, out| snd.start(now, cfg, out));
            }
            Endpoint::Udp { src, .. } => {
                let tick = src.start(now);
                self.udp_step(f, tick.send, tick.next);
            }
        }
    }

    /// One call into flow `f`'s TCP sender: hands it the room its shaper has, runs
    /// `op`, completes the flow if `op` acknowledged its last byte (`may_complete`),
    /// sends the segments it asked for and notes whether it now waits for room.
    pub(super) fn drive_sender(
        &mut self,
        f: FlowId,
        may_complete: bool,
        op: impl FnOnce(&mut TcpSender, Time, &TcpConfig, &mut SenderOut),
    ) {
        let mut out = std::mem::take(&mut self.ends.sender_out);
        out.room = self.sender_room(f);
        out.blocked = false;
        let flow = &mut self.ends.flows[f.idx()];
        if let Endpoint::Tcp { snd, .. } = &mut flow.ep {
            let cfg = &self.ends.tcp[transport_of(&flow.spec.kind)];
            op(snd, self.now, cfg, &mut out);
            if may_complete && snd.done() && flow.spec.size.is_some() && flow.end.is_none() {
                self.complete(f);
            }
            self.emit_segments(f, &mut out);
            self.note_blocked(f, &out);
        }
        self.ends.sender_out = out;
    }

    /// Sends the segments a TCP sender asked for and schedules its timer.
    pub(super) fn emit_segments(&mut self, f: FlowId, out: &mut SenderOut) {
        let flow = &self.ends.flows[f.idx()];
        let cfg = &self.ends.tcp[transport_of(&flow.spec.kind)];
        let base = Packet {
            ts: self.now,
            flow: f,
            dst: flow.spec.dst,
            hash: flow.hash,
            pair: flow.pair,
            dscp: flow.spec.dscp,
            flags: if cfg.ect() { flags::ECT } else { 0 }
                | if flow.small_queue.on() { flags::TSQ } else { 0 },
            ..Default::default()
        };
        let (src, vm, header) = (flow.spec.src, flow.spec.src_vm, cfg.header);
        for seg in out.segments.drain(..) {
            let mut p = base;
            p.seq = seg.seq;
            p.dscp = self.ends.flows[f.idx()].spec.dscp_at(seg.seq);
            p.len = seg.len;
            p.size = seg.len + header;
            if seg.retx {
                p.flags |= flags::RETX;
            }
            if p.has(flags::TSQ) {
                self.ends.flows[f.idx()].small_queue.held += p.size as u64;
            }
            let id = self.alloc_packet(p);
            self.records.counters.data_sent += 1;
            self.send_from(src, vm, id, false);
        }
        if let Some(t) = out.rto_event.take() {
            self.schedule(t, Event::Rto(f), self.sender_origin(f));
        }
    }

    /// Sends the ACKs a TCP receiver asked for and schedules its timer.
    fn emit_acks(&mut self, f: FlowId, out: &mut ReceiverOut) {
        let flow = &self.ends.flows[f.idx()];
        let cfg = &self.ends.tcp[transport_of(&flow.spec.kind)];
        let (rcv_host, rcv_vm, ack_size) = (flow.spec.dst, flow.spec.dst_vm, cfg.ack_size);
        let base = Packet {
            flow: f,
            dst: flow.spec.src,
            hash: flow.hash_rev,
            pair: flow.pair_rev,
            dscp: flow.spec.dscp,
            size: ack_size,
            ..Default::default()
        };
        let pin = if self.fabric.ack_routes.is_some() {
            flags::PINNED
        } else {
            0
        };
        for a in out.acks.drain(..) {
            let mut p = base;
            p.seq = a.ack;
            // an ACK travels with the class of the last byte it acknowledges
            p.dscp = self.ends.flows[f.idx()]
                .spec
                .dscp_at(a.ack.saturating_sub(1));
            p.ts = a.ts;
            p.flags = flags::ACK | pin | if a.ece { flags::ECE } else { 0 };
            if a.sack.n > 0 {
                p.size += a.sack.wire_bytes();
                p.len = self.fabric.sacks.put(a.sack);
            }
            let id = self.alloc_packet(p);
            self.send_from(rcv_host, rcv_vm, id, false);
        }
        if let Some(t) = out.delack_event.take() {
            self.schedule(t, Event::DelAck(f), self.receiver_origin(f));
        }
    }

    /// A packet delivered to its transport at the destination host. A control
    /// packet that no host policy consumed (its policy does not use feedback) ends
    /// here.
    #[inline]
    pub(super) fn hand_to_transport(&mut self, p: Packet) {
        if p.has(flags::CONTROL) {
            return;
        }
        if p.has(flags::ACK) {
            self.on_ack(p);
        } else {
            self.on_data(p);
        }
    }

    fn on_data(&mut self, p: Packet) {
        let now = self.now;
        let f = p.flow;
        let flow = &mut self.ends.flows[f.idx()];
        let tenant = flow.spec.tenant as usize;
        match &mut flow.ep {
            Endpoint::Udp { .. } => {
                flow.delivered += p.len as u64;
                self.records.recorder.tenant_bytes[tenant] += p.len as u64;
            }
            Endpoint::Tcp { rcv, .. } => {
                let cfg = &self.ends.tcp[transport_of(&flow.spec.kind)];
                let delack = cfg.delayed_ack.then_some(cfg.delayed_ack_timeout);
                let before = rcv.rcv_nxt;
                let mut out = std::mem::take(&mut self.ends.receiver_out);
                let seg = DataSegment {
                    seq: p.seq,
                    len: p.len,
                    ce: p.has(flags::CE),
                    ts: p.ts,
                    push: cfg.ack_push && flow.spec.size == Some(p.seq + p.len as u64),
                };
                rcv.on_data(now, seg, delack, &mut out);
                let gained = rcv.rcv_nxt - before;
                flow.delivered += gained;
                self.records.recorder.tenant_bytes[tenant] += gained;
                let all = gained > 0 && flow.spec.size == Some(flow.delivered);
                self.emit_acks(f, &mut out);
                self.ends.receiver_out = out;
                if all {
                    self.delivered_in_full(f);
                }
            }
        }
    }

    fn on_ack(&mut self, p: Packet) {
        // an ACK's `len` holds its SACK option's handle (see `SackStore`)
        let sack = self.fabric.sacks.take(p.len);
        self.drive_sender(p.flow, true, |snd, now, cfg, out| {
            snd.on_ack(now, p.seq, p.has(flags::ECE), p.ts, sack.as_ref(), cfg, out)
        });
    }

    /// A sized flow has every byte acknowledged: it completes now, and the run
    /// with it if it was the last and the run stops when all are done.
    fn complete(&mut self, f: FlowId) {
        let last = self.ends.complete(f, self.now);
        if let Some(pc) = self.parallel.part.as_deref_mut() {
            // a partition's count is its own: the parallel loop adds them up
            pc.last_complete = self.now;
        } else if last && self.budget.stop_when_done {
            self.stop_all_done();
        }
    }

    /// Every sized flow is done and the run stops when they are. Under scheduled ties
    /// it stops at once. Under partitioned ties, where no partition of a parallel run
    /// knows the moment the others finish, it runs on to the end of the current step
    /// of the grid of link delays (the first multiple of the smallest link delay
    /// after now), the same instant for any number of threads.
    fn stop_all_done(&mut self) {
        let g = self.budget.grid;
        if self.events.ties() == Ties::Partitioned && g > 0 {
            self.budget.end = self.budget.end.min(parallel::grid_after(self.now, g));
            self.budget.drain = true;
        }
        self.budget.done = true;
    }

    pub(super) fn on_rto(&mut self, f: FlowId) {
        self.drive_sender(f, false, |snd, now, cfg, out| {
            snd.on_rto_event(now, cfg, out)
        });
    }

    pub(super) fn on_delack(&mut self, f: FlowId) {
        if let Endpoint::Tcp { rcv, .. } = &mut self.ends.flows[f.idx()].ep {
            let mut out = std::mem::take(&mut self.ends.receiver_out);
            rcv.on_delack_event(self.now, &mut out);
            self.emit_acks(f, &mut out);
            self.ends.receiver_out = out;
        }
    }

    /// A long-lived TCP flow stops offering data. It has no completion time (it is
    /// not sized); it stops being sampled once what it sent is acknowledged.
    pub(super) fn on_stop(&mut self, f: FlowId) {
        if let Endpoint::Tcp { snd, .. } = &mut self.ends.flows[f.idx()].ep {
            snd.stop();
        }
    }

    pub(super) fn on_udp_tick(&mut self, f: FlowId) {
        let now = self.now;
        if let Endpoint::Udp { src, .. } = &mut self.ends.flows[f.idx()].ep {
            let tick = src.tick(now);
            self.udp_step(f, tick.send, tick.next);
        }
    }

    fn udp_step(&mut self, f: FlowId, send: bool, next: crate::engine::Time) {
        let flow = &mut self.ends.flows[f.idx()];
        let stop = flow.spec.stop.unwrap_or(u64::MAX);
        if self.now >= stop {
            return;
        }
        if send {
            if let Endpoint::Udp { src, sent } = &mut flow.ep {
                let size = src.packet_size();
                let p = Packet {
                    seq: *sent,
                    ts: self.now,
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
                let id = self.alloc_packet(p);
                self.records.counters.data_sent += 1;
                self.send_from(host, vm, id, true);
            }
        }
        if next < stop && next <= self.budget.end {
            self.schedule(next, Event::UdpTick(f), self.sender_origin(f));
        }
    }
}
