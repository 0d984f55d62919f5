//! The vswitch's shapers in the data path: a VM's packet through its host's
//! policy into a shaper (and the lane of a two-colour one) and on to the NIC,
//! coloured if its shaper colours packets; the room a TCP sender has and its
//! wait for more; each shaper's wake-ups.

use super::flow::{Endpoint, LIVE_CHANNEL, NO_CHANNEL};
use super::Sim;
use crate::net::packet::flags;
use crate::net::{FlowId, PktId, VmId};
use crate::sim::Event;
use crate::transport::tcp_sender::SenderOut;
use crate::vswitch::policy::Egress;
use crate::vswitch::two_colour::{Colour, Lane};
use crate::vswitch::{HostPolicy, Offer, ShaperId};
use crate::workload::FlowKind;

impl Sim {
    /// VM `v`'s packet leaves the VM: into its guest TX ring if the vswitch costs
    /// CPU (a PMD core forwards it later, `cpu.rs`), else on at once.
    #[inline]
    pub(super) fn egress(&mut self, v: VmId, id: PktId, may_drop: bool) {
        if self.hosts.cpu.is_some() {
            return self.ring_in(v, id, may_drop);
        }
        self.vswitch_egress(v, id, may_drop)
    }

    /// VM `v`'s packet through its host's policy and into a shaper.
    #[inline]
    pub(super) fn vswitch_egress(&mut self, v: VmId, id: PktId, may_drop: bool) {
        let vm = &self.hosts.vms[v.idx()];
        let k = vm.vswitch as usize;
        let pkt = &mut self.fabric.pkts[id];
        if let Some(d) = vm.dscp_tag {
            pkt.dscp = d;
        }
        let pair = pkt.pair;
        let offer = match self.hosts.vswitches[k].policy.egress(pkt, v, pair) {
            Egress::Shaper(s) => {
                let size = self.fabric.pkts[id].size;
                let lane = self.lane_of_packet(s, id);
                let offer = self.hosts.shapers[s].offer_in(self.now, id, size, may_drop, lane);
                match offer {
                    Offer::Queued => {
                        self.records.counters.shaped += 1;
                        self.shaper_schedule(s)
                    }
                    Offer::Pass(Some(c)) => self.colour(s, id, c),
                    _ => {}
                }
                offer
            }
            Egress::Drop => Offer::Dropped,
        };
        match offer {
            Offer::Pass(_) => self.pass_to_nic(v, id),
            Offer::Queued => {}
            Offer::Dropped => {
                self.hosts.vms[v.idx()].drops += 1;
                self.records.counters.dropped += 1;
                self.discard(id);
            }
        }
    }

    /// VM `v`'s packet leaves the vswitch for its host's NIC.
    #[inline]
    pub(super) fn pass_to_nic(&mut self, v: VmId, id: PktId) {
        let host = self.hosts.count_to_nic(v, &self.fabric.pkts[id]);
        let nic = self.fabric.net.hosts[host.idx()].nic;
        self.enqueue(nic, id, self.nic_queue(nic, id));
    }

    /// The shaper a sender of flow `f` feeds, if it comes from a VM.
    #[inline]
    pub(super) fn channel_of(&self, f: FlowId) -> Option<ShaperId> {
        let flow = &self.ends.flows[f.idx()];
        match flow.chan {
            NO_CHANNEL => None,
            LIVE_CHANNEL => {
                let v = flow.spec.src_vm?;
                let k = self.hosts.vms[v.idx()].vswitch as usize;
                Some(self.hosts.vswitches[k].policy.channel(v, flow.pair))
            }
            c => Some(ShaperId(c)),
        }
    }

    /// The room flow `f`'s sender has: its shaper's, its guest ring's (with the CPU
    /// model) and its small queue's.
    #[inline]
    pub(super) fn sender_room(&self, f: FlowId) -> u64 {
        let mut room = self.shaper_room(f);
        if self.hosts.cpu.is_some() {
            room = room.min(self.ring_room_of(f));
        }
        if self.ends.small_queues {
            room.min(self.ends.flows[f.idx()].small_queue.room())
        } else {
            room
        }
    }

    /// The room flow `f`'s shaper has for its sender (`u64::MAX`: not from a VM),
    /// in the lane its next packet joins.
    #[inline]
    pub(super) fn shaper_room(&self, f: FlowId) -> u64 {
        match self.channel_of(f) {
            Some(s) => self.hosts.shapers[s].room_in(self.next_lane(s, f)),
            None => u64::MAX,
        }
    }

    /// The lane of shaper `s` that packet `id` joins (always the normal lane of a
    /// plain shaper).
    #[inline]
    fn lane_of_packet(&self, s: ShaperId, id: PktId) -> Lane {
        if self.hosts.shapers[s].colours().is_none() {
            return Lane::Normal;
        }
        let p = &self.fabric.pkts[id];
        let data = !p.has(flags::ACK | flags::CONTROL)
            && matches!(
                self.ends.flows[p.flow.idx()].spec.kind,
                FlowKind::Tcp { .. }
            );
        self.hosts.shapers[s].lane_of(data.then_some(p.seq + p.len as u64))
    }

    /// The lane of shaper `s` that flow `f`'s next full data packet joins.
    #[inline]
    fn next_lane(&self, s: ShaperId, f: FlowId) -> Lane {
        let sh = &self.hosts.shapers[s];
        if sh.colours().is_none() {
            return Lane::Normal;
        }
        let flow = &self.ends.flows[f.idx()];
        match &flow.ep {
            Endpoint::Tcp { snd, .. } => {
                let mss = self.ends.tcp_of(f).mss as u64;
                sh.lane_of(Some(snd.snd_nxt + mss))
            }
            Endpoint::Udp { .. } => Lane::Normal,
        }
    }

    /// Packet `id`, released by two-colour shaper `s` in colour `c`, takes that
    /// colour's DSCP and ECT (Trinity sets ECT on every packet it sends) and, red,
    /// the shaper's red epoch.
    #[inline]
    fn colour(&mut self, s: ShaperId, id: PktId, c: Colour) {
        let (dscp, epoch) = self.hosts.colour_marks(s, c);
        let p = &mut self.fabric.pkts[id];
        p.dscp = dscp;
        p.flags |= flags::ECT;
        if c == Colour::Red {
            p.epoch = epoch;
        }
    }

    /// After a sender call: a sender that ran out of room waits in its shaper's list,
    /// or for its small queue to drain, or both.
    #[inline]
    pub(super) fn note_blocked(&mut self, f: FlowId, out: &SenderOut) {
        if out.blocked {
            if self.ends.small_queues && self.ends.flows[f.idx()].small_queue.on() {
                self.block_small_queue(f);
            } else {
                self.block_sender(f);
            }
        }
    }

    /// The room flow `f`'s VM's guest ring has for its packets.
    fn ring_room_of(&self, f: FlowId) -> u64 {
        match self.ends.flows[f.idx()].spec.src_vm {
            Some(v) => self.ring_room(v, self.ends.packet_size(f)),
            None => u64::MAX,
        }
    }

    /// Flow `f`'s sender waits for room in its guest ring or its shaper, whichever
    /// is short of a packet (once).
    pub(super) fn block_sender(&mut self, f: FlowId) {
        if self.hosts.cpu.is_some() && !self.ends.flows[f.idx()].blocked {
            let need = self.ends.packet_size(f);
            if let (true, Some(v)) = (
                self.ring_room_of(f) < need,
                self.ends.flows[f.idx()].spec.src_vm,
            ) {
                return self.ring_wait(v, f);
            }
        }
        if !self.ends.flows[f.idx()].blocked {
            if let Some(s) = self.channel_of(f) {
                self.ends.flows[f.idx()].blocked = true;
                self.hosts.shapers[s].block(f);
            }
        }
    }

    /// Makes sure a wake-up is pending for shaper `s`'s next departure.
    pub(super) fn shaper_schedule(&mut self, s: ShaperId) {
        if let Some(t) = self.hosts.next_wake(s, self.now) {
            let by = self.vm_origin(self.hosts.shapers[s].vm);
            self.schedule(t, Event::ShaperTx(s), by);
        }
    }

    /// A shaper is served: it sends what its bucket allows, then wakes its senders.
    pub(super) fn on_shaper_tx(&mut self, s: ShaperId) {
        if self.hosts.woken(s, self.now) {
            self.shaper_drain(s);
        }
    }

    /// Passes every packet shaper `s` may send now to the NIC and wakes its senders.
    pub(super) fn shaper_drain(&mut self, s: ShaperId) {
        let v = self.hosts.shapers[s].vm;
        while let Some((id, c)) = self.hosts.shapers[s].pop_ready(self.now) {
            if let Some(c) = c {
                self.colour(s, id, c);
            }
            self.pass_to_nic(v, id);
        }
        self.shaper_schedule(s);
        self.wake_blocked(s);
    }

    /// Wakes shaper `s`'s blocked TCP senders, longest-waiting first, while it has
    /// room for a full packet of the next one. A two-colour shaper's lanes fill
    /// separately: every waiting sender whose lane has room is woken, the others
    /// keep their order.
    pub(super) fn wake_blocked(&mut self, s: ShaperId) {
        if self.hosts.shapers[s].colours().is_some() {
            return self.wake_blocked_by_lane(s);
        }
        for _ in 0..self.hosts.shapers[s].blocked() {
            let Some(f) = self.hosts.shapers[s].first_blocked() else {
                break;
            };
            if self.hosts.shapers[s].room() < self.ends.packet_size(f) {
                break;
            }
            self.hosts.shapers[s].pop_blocked();
            self.ends.flows[f.idx()].blocked = false;
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
    }

    /// [`wake_blocked`](Self::wake_blocked) for a two-colour shaper: in each lane,
    /// senders are woken in the order they stopped while that lane has room for
    /// a packet; one that does not fit keeps its place, and those behind it in its
    /// lane wait too (a sender that was just woken and stopped again goes behind
    /// them all, as with a plain shaper).
    fn wake_blocked_by_lane(&mut self, s: ShaperId) {
        let waiting: Vec<FlowId> = (0..self.hosts.shapers[s].blocked())
            .filter_map(|_| self.hosts.shapers[s].pop_blocked())
            .collect();
        let mut kept = Vec::new();
        let mut full = [false; 2];
        for f in waiting {
            let lane = self.next_lane(s, f);
            let need = self.ends.packet_size(f);
            if full[lane as usize] || self.hosts.shapers[s].room_in(lane) < need {
                full[lane as usize] = true;
                kept.push(f);
                continue;
            }
            self.ends.flows[f.idx()].blocked = false;
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
        self.hosts.shapers[s].block_first(&kept);
    }
}
