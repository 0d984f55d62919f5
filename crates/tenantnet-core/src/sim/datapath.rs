//! The hosts in the data path: what one part returns, the next takes. A flow
//! starts; its transport's steps (`sim/ends.rs`) become packets its host sends,
//! from a VM through the vswitch (`sim/hosts.rs`: the policy, a shaper) or its
//! guest ring (`sim/cpu.rs`), to its NIC (`sim/fabric.rs`); a packet that reaches
//! its host passes the receiving VM's policy and goes to its flow's receiver or
//! sender; senders its small queue, shaper or ring wakes resume; every host with
//! VMs ticks periodically, measures its VMs and NIC and runs its policy's tick
//! (`crate::vswitch`).

use super::flow::Endpoint;
use super::footprint::MemoryUse;
use super::hosts::HostEgress;
use super::ideal::handshake_rtt;
use super::{Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::{to_secs, Time};
use crate::net::packet::flags;
use crate::net::{FlowId, HostId, Packet, PktId, VmId};
use crate::transport::tcp_sender::{SenderOut, TcpSender};
use crate::transport::TcpConfig;
use crate::vswitch::policy::{HostCtx, HostMeasure, Ingress};
use crate::vswitch::{HostPolicy, Policy, ShaperId, NO_PAIR};

impl Sim {
    /// Runs `hook` on host vswitch `k`'s policy with its context, then carries out
    /// what it asked for.
    pub(super) fn with_host<R>(
        &mut self,
        k: usize,
        hook: impl FnOnce(&mut Policy, &mut HostCtx) -> R,
    ) -> R {
        let (policy, mut ctx) = self.hosts.policy_ctx(k, self.now);
        let r = hook(policy, &mut ctx);
        self.after_hook();
        r
    }

    /// Releases what re-rated shapers now allow, sends the policies' control
    /// packets and hands held packets on.
    #[inline]
    pub(super) fn after_hook(&mut self) {
        if self.hosts.shapers.any_touched() {
            let mut touched = std::mem::take(&mut self.hosts.touched_shapers);
            self.hosts.shapers.take_touched(&mut touched);
            for &s in &touched {
                self.shaper_drain(s);
            }
            self.hosts.touched_shapers = touched;
        }
        while let Some(c) = self.hosts.control_out.pop() {
            if let Some(t) = self.hosts.control_packet(c) {
                let id = self.alloc_packet(t.base);
                self.records.counters.control_sent += 1;
                self.send_from(t.host, t.vm, id, true);
            }
        }
        if !self.hosts.released.is_empty() {
            // in the order the policy released them (resequencing depends on it)
            let mut released = std::mem::take(&mut self.hosts.released);
            for p in released.drain(..) {
                self.hand_to_transport(p);
            }
            self.hosts.released = released;
        }
    }

    /// A host puts a packet on the wire, through VM `vm`'s vswitch if the packet
    /// comes from a VM. `may_drop`: the sender does not respect the shaper's room
    /// (UDP).
    #[inline]
    pub(super) fn send_from(&mut self, h: HostId, vm: Option<VmId>, id: PktId, may_drop: bool) {
        self.records.counters.sent += 1;
        match vm {
            // into its guest TX ring: a PMD core forwards it later (`cpu.rs`)
            Some(v) if self.hosts.cpu.is_some() => {
                let to = self.hosts.ring_in(self.now, v, id, may_drop);
                self.cpu_took(id, to)
            }
            Some(v) => self.vswitch_egress(v, id, may_drop),
            None => self.hand_to_nic(h, id),
        }
    }

    /// Host `h` hands packet `id` to its NIC: now, or after its transmit wait (a
    /// `Handoff` event, `network.tx_jitter`).
    #[inline(always)]
    pub(super) fn hand_to_nic(&mut self, h: HostId, id: PktId) {
        if let Some(t) = self.fabric.tx_wait(h, id, self.now) {
            return super::handoff::hand_over_at(self, h, id, t);
        }
        self.enqueue(id, self.fabric.nic_of(h, id, &self.ends.flows));
    }

    /// A packet reached its destination host: counted on its VM pair, through the
    /// receiving VM's policy (if that policy looks at ingress), then to its
    /// transport.
    #[inline]
    pub(super) fn deliver(&mut self, id: PktId) {
        let p = self.fabric.pkts[id];
        self.fabric.pkts.free(id);
        if p.pair != NO_PAIR {
            let pr = &mut self.hosts.pairs[p.pair as usize];
            pr.rx_bytes += p.size as u64;
            if pr.ingress {
                if let Some((k, v, tcp)) = self.hosts.ingress_of(&p, &self.ends) {
                    let seen = self.with_host(k, |pol, ctx| pol.ingress(ctx, &p, v, tcp));
                    if seen == Ingress::Consumed {
                        return;
                    }
                }
            }
        }
        self.hand_to_transport(p);
    }

    /// Frees a packet that goes no further (dropped or evicted); its bytes go back
    /// to its sender's small queue if they still count there.
    pub(super) fn discard(&mut self, id: PktId) {
        if let Some((flow, size)) = self.fabric.discard(id, self.ends.small_queues) {
            self.ends.release_small_queue(flow, size);
        }
    }

    /// Resumes the senders their small queues woke in the event just handled, in
    /// the order they woke (and any these wake in turn).
    #[cold]
    pub(super) fn resume_senders(&mut self) {
        let mut i = 0;
        while let Some(&f) = self.ends.resume.get(i) {
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
            i += 1;
        }
        self.ends.resume.clear();
    }

    /// Every tick: each host measures its VMs and NIC over the interval just ended,
    /// its policy ticks on what it measured, and each VM's row is recorded. In a
    /// partition of a parallel run, its own hosts do (each host's tick reads and
    /// changes its own vswitch only).
    pub(super) fn on_host_tick(&mut self) {
        self.parallel
            .handled_for_all(self.now, Event::HostTick.encode());
        self.hosts.sum_vm_rx();
        let t = self.hosts.tick;
        let (secs, now) = (to_secs(t), to_secs(self.now));
        for k in 0..self.hosts.vswitches.len() {
            if !self.parallel.owns_vswitch(k) {
                continue;
            }
            let host = self.hosts.vswitches[k].host;
            let nic = self.fabric.net.nic(host);
            let m = self.hosts.measure(k, nic.tx_bytes(), nic.rate_bps(), secs);
            let hm = HostMeasure {
                interval: t,
                nic_utilisation: m.util,
                sent_bps: &m.sent,
                received_bps: &m.received,
            };
            self.with_host(k, |p, ctx| p.tick(ctx, &hm));
            self.hosts.record(k, &m, now);
        }
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            cpu.record_tick(self.now, t, |k| self.parallel.owns_vswitch(k));
        }
        let used = MemoryUse::of(&self.fabric, &self.hosts, &self.records);
        (self.budget).check_memory(self.now, &self.hosts.tick_key, used);
        let next: Time = self.now + t;
        if next <= self.budget.end {
            self.schedule(next, Event::HostTick, Origin::GLOBAL);
        }
    }

    /// VM `v`'s packet through its host's vswitch: on to the NIC, into a shaper's
    /// queue, or dropped.
    #[inline]
    pub(super) fn vswitch_egress(&mut self, v: VmId, id: PktId, may_drop: bool) {
        let pkt = &mut self.fabric.pkts[id];
        let now = self.now;
        match (self.hosts).vswitch_egress(now, (v, id, pkt), may_drop, &self.ends) {
            HostEgress::ToNic(host) => self.hand_to_nic(host, id),
            HostEgress::Queued(s) => {
                self.records.counters.shaped += 1;
                if let Some((t, host)) = self.hosts.next_wake(s, now) {
                    self.schedule(t, Event::ShaperTx(s), self.fabric.origin(host));
                }
            }
            HostEgress::Dropped => {
                self.records.counters.dropped += 1;
                self.discard(id);
            }
        }
    }

    /// Passes every packet shaper `s` may send now to the NIC, makes sure a wake-up
    /// is pending for its next departure, and resumes the senders waiting on it
    /// that its room now wakes (`Hosts::next_woken`).
    pub(super) fn shaper_drain(&mut self, s: ShaperId) {
        let v = self.hosts.shapers[s].vm;
        while let Some((id, c)) = self.hosts.shapers[s].pop_ready(self.now) {
            let pkt = &mut self.fabric.pkts[id];
            if let Some(c) = c {
                self.hosts.colour(s, pkt, c);
            }
            let host = self.hosts.count_to_nic(v, pkt);
            self.hand_to_nic(host, id);
        }
        if let Some((t, host)) = self.hosts.next_wake(s, self.now) {
            self.schedule(t, Event::ShaperTx(s), self.fabric.origin(host));
        }
        // the senders its room now wakes, each before the next is chosen
        let mut w = self.hosts.waking(s);
        while let Some(f) = self.hosts.next_woken(s, &mut w, &mut self.ends) {
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
        self.hosts.woke(s, w);
    }

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
            self.schedule(stop, Event::Stop(f), self.fabric.origin(self.ends.src(f)));
        }
        self.records.recorder.flow_started(f);
        if self.parallel.part.is_some() && self.records.recorder.samples_flows() {
            let key = self.parallel.event_key;
            (self.parallel).note_start(f, key as u32 == Event::FlowStart.encode());
        }
        match self.ends.udp_tick(f, now, true) {
            None => {
                let flow = &self.ends.flows[f.idx()];
                let handshake = handshake_rtt(&self.fabric.net, flow, &self.ends.tcp);
                self.drive_sender(f, false, |snd, now, cfg, out| {
                    if let Some(r) = handshake {
                        snd.handshake(r);
                    }
                    snd.start(now, cfg, out)
                })
            }
            Some(tick) => self.udp_step(f, tick.send, tick.next),
        }
    }

    /// One call into flow `f`'s TCP sender: hands it the room its host has for it,
    /// runs `op`, completes the flow if `op` acknowledged its last byte
    /// (`may_complete`; the run with it if it was the last and the run stops when
    /// all are done), sends the segments it asked for, schedules its timer and
    /// notes whether it now waits for room.
    pub(super) fn drive_sender(
        &mut self,
        f: FlowId,
        may_complete: bool,
        op: impl FnOnce(&mut TcpSender, Time, &TcpConfig, &mut SenderOut),
    ) {
        let mut out = std::mem::take(&mut self.ends.sender_out);
        out.room = self.hosts.sender_room(f, &self.ends);
        out.blocked = false;
        let (tcp, seed) = (&self.ends.tcp, self.ends.seed);
        let flow = &mut self.ends.flows[f.idx()];
        if let Endpoint::Tcp { snd, .. } =
            Endpoint::made(&mut flow.ep, f.idx(), &flow.spec, tcp, seed)
        {
            let cfg = &self.ends.tcp[super::ends::transport_of(&flow.spec.kind)];
            op(snd, self.now, cfg, &mut out);
            if let Some(t) = self.records.flow_trace.as_deref_mut() {
                t.record(self.now, f, snd);
            }
            if may_complete && snd.done() && flow.spec.size.is_some() && flow.end.is_none() {
                let last = self.ends.complete(f, self.now);
                if let Some(pc) = self.parallel.part.as_deref_mut() {
                    // a partition's count is its own: the parallel loop adds them up
                    pc.last_complete = self.now;
                } else if last && self.budget.stop_when_done {
                    self.budget.stop_all_done(self.now, self.events.ties());
                }
            }
            let t = self.ends.segment_template(f, self.now);
            for seg in out.segments.drain(..) {
                let p = self.ends.segment(f, &t, seg);
                let id = self.alloc_packet(p);
                self.records.counters.data_sent += 1;
                self.send_from(t.host, t.vm, id, false);
            }
            if let Some(t) = out.rto_event.take() {
                self.schedule(t, Event::Rto(f), self.fabric.origin(self.ends.src(f)));
            }
            if out.blocked {
                self.hosts.block(f, &mut self.ends);
            }
        }
        self.ends.sender_out = out;
    }

    /// Sends the ACKs flow `f`'s receiver asked for (`Endpoints::receiver_out`) and
    /// schedules its timer.
    #[inline]
    pub(super) fn send_acks(&mut self, f: FlowId) {
        let mut out = std::mem::take(&mut self.ends.receiver_out);
        let t = (self.ends).ack_template(f, self.fabric.ack_routes.is_some());
        for a in out.acks.drain(..) {
            let p = self.ends.ack(f, &t, a, &mut self.fabric.sacks);
            let id = self.alloc_packet(p);
            self.send_from(t.host, t.vm, id, false);
        }
        if let Some(t) = out.delack_event.take() {
            self.schedule(t, Event::DelAck(f), self.fabric.origin(self.ends.dst(f)));
        }
        self.ends.receiver_out = out;
    }

    /// A packet delivered to its transport at the destination host: an ACK to its
    /// flow's sender, data to its receiver. A control packet that no host policy
    /// consumed (its policy does not use feedback) ends here.
    #[inline]
    pub(super) fn hand_to_transport(&mut self, p: Packet) {
        if p.has(flags::CONTROL) {
            return;
        }
        if p.has(flags::ACK) {
            // an ACK's `len` holds its SACK option's handle (see `SackStore`)
            let sack = self.fabric.sacks.take(p.len);
            return self.drive_sender(p.flow, true, |snd, now, cfg, out| {
                snd.on_ack(now, p.seq, p.has(flags::ECE), p.ts, sack.as_ref(), cfg, out)
            });
        }
        let tenant_bytes = &mut self.records.recorder.tenant_bytes;
        if let Some(all) = self.ends.on_data(self.now, &p, tenant_bytes) {
            self.send_acks(p.flow);
            if all {
                self.delivered_in_full(p.flow);
            }
        }
    }

    /// UDP flow `f`'s source ticked: it sends a packet if `send`, and ticks again at
    /// `next` unless it has stopped by then or the run has ended.
    pub(super) fn udp_step(&mut self, f: FlowId, send: bool, next: Time) {
        let Some((packet, stop)) = self.ends.udp_step(f, self.now, send) else {
            return;
        };
        if let Some(t) = packet {
            let id = self.alloc_packet(t.base);
            self.records.counters.data_sent += 1;
            self.send_from(t.host, t.vm, id, true);
        }
        if next < stop && next <= self.budget.end {
            self.schedule(
                next,
                Event::UdpTick(f),
                self.fabric.origin(self.ends.src(f)),
            );
        }
    }

    /// Flow `f`'s last byte has been delivered: the gate it signals counts it, and
    /// opens if that was the last delivery it waited for.
    pub(super) fn delivered_in_full(&mut self, f: FlowId) {
        let Some(g) = self.ends.flows[f.idx()].spec.signals else {
            return;
        };
        let Some((at, opens, delayed)) = self.ends.exchanges.delivered(g as usize, self.now) else {
            return;
        };
        // the gate opens at the host that took the last byte in
        let by = self.fabric.origin(self.ends.dst(f));
        for f in opens {
            self.ends.flows[f as usize].spec.start = at;
            match delayed {
                true => self.schedule(at, Event::Begin(FlowId(f)), by),
                false => self.start_flow(FlowId(f)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::flow::{LIVE_CHANNEL, NO_CHANNEL};
    use super::{flags, FlowId, Packet, Sim};
    // Up the layers, in a test only: a run with VMs and channels is built from a
    // scenario file, without repeating the builder here.
    use crate::scenario::{load, Format, LoadOptions};

    /// `examples/vswitch-mbfq.toml` cut to 300 ms.
    fn vm_sim() -> Sim {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/vswitch-mbfq.toml"
        );
        let text = std::fs::read_to_string(path)
            .unwrap()
            .replace("duration = \"3s\"", "duration = \"300ms\"");
        let opts = LoadOptions::default();
        load(
            &text,
            "vswitch-mbfq.toml",
            Path::new("."),
            Format::Toml,
            &opts,
        )
        .unwrap()
    }

    #[test]
    fn a_sender_its_small_queue_wakes_resumes_after_the_event_not_inside_it() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/qshare-two-queues.toml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let opts = LoadOptions::default();
        let mut s = load(&text, "q.toml", Path::new("."), Format::Toml, &opts).unwrap();
        s.run_until(crate::engine::from_secs(0.01));
        let f = FlowId(0);
        let full = s.ends.packet_size(f);
        let sq = &mut s.ends.flows[f.idx()].small_queue;
        assert!(sq.on());
        // the sender waits with its whole limit held; a packet of it is dropped
        (sq.waiting, sq.held) = (true, sq.limit);
        let p = Packet {
            flow: f,
            size: full as u32,
            flags: flags::TSQ,
            ..Default::default()
        };
        let id = s.alloc_packet(p);
        let sent = s.records.counters.data_sent;
        s.discard(id);
        let sq = &s.ends.flows[f.idx()].small_queue;
        assert_eq!((sq.waiting, sq.held), (false, sq.limit - full));
        assert_eq!(s.ends.resume, [f], "woken, to resume after the event");
        assert_eq!(
            s.records.counters.data_sent, sent,
            "not driven inside the drop"
        );
        s.resume_senders();
        assert!(s.ends.resume.is_empty());
    }

    #[test]
    fn asking_the_policy_for_every_channel_gives_what_the_flows_kept() {
        let (mut kept, mut live) = (vm_sim(), vm_sim());
        let mut n = 0;
        for f in live.ends.flows.iter_mut().filter(|f| f.chan != NO_CHANNEL) {
            f.chan = LIVE_CHANNEL;
            n += 1;
        }
        assert!(n > 0, "the scenario has flows from VMs");
        kept.run();
        live.run();
        let outcome = |s: &Sim| {
            let f: Vec<_> = s.ends.flows.iter().map(|f| (f.delivered, f.end)).collect();
            (f, s.records.counters.sent, s.records.counters.dropped)
        };
        assert_eq!(outcome(&kept), outcome(&live));
        assert!(kept.ends.flows.iter().filter(|f| f.delivered > 0).count() >= 2);
    }
}
