//! The hosts' own steps in the data path, host egress and ingress: what a VM's
//! packet meets in its vswitch (its host's policy, a shaper and the lane of a
//! two-colour one, the colour it leaves in, the counts on its pair and VM, or its
//! guest ring with the CPU model); the room a TCP sender has and what it waits for
//! when it runs out; which of a shaper's waiting senders its room wakes, and when
//! it next wakes; the policy and context a hook sees; the receiving VM's policy
//! for an arriving packet; a policy's control packets. Each works on the
//! [`Hosts`] (reading the [`Endpoints`]' flows, or marking one blocked) and returns
//! what happened; the loop hands the packet on (`sim/datapath.rs`).

use super::cpu::CpuIn;
use super::ends::Template;
use super::flow::{Endpoint, LIVE_CHANNEL, NO_CHANNEL};
use super::parts::{Endpoints, Hosts};
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{FlowId, HostId, Packet, PktId, VmId};
use crate::vswitch::policy::{ControlMsg, Egress, HostCtx};
use crate::vswitch::two_colour::{Colour, Lane};
use crate::vswitch::{HostPolicy, Offer, Policy, ShaperId, VmPair};
use crate::workload::FlowKind;

/// Where a VM's packet went in its vswitch.
pub(super) enum HostEgress {
    /// On to the NIC of this host, counted and coloured.
    ToNic(HostId),
    /// Into this shaper's queue, to wait for its bucket.
    Queued(ShaperId),
    /// Dropped (by the policy, or a full shaper queue), counted on its VM.
    Dropped,
}

/// A pass over a shaper's waiting senders (`Hosts::next_woken`).
pub(super) enum Waking {
    /// A plain shaper: the first waiting sender, while the shaper has room for its
    /// packet, at most `left` more (those waiting when the pass began).
    InOrder { left: usize },
    /// A two-colour shaper: every waiting sender, in order, whose lane has room; a
    /// lane found full keeps its senders waiting in order (`kept`).
    ByLane {
        waiting: std::vec::IntoIter<FlowId>,
        kept: Vec<FlowId>,
        full: [bool; 2],
    },
}

impl Hosts {
    /// VM `v`'s packet `id` (`pkt`) leaves the VM at `now`: its host's policy picks
    /// a shaper (or drops it), the shaper passes, queues or drops it; a packet that
    /// passes takes its colour and is counted on its way to the NIC, a dropped one
    /// on its VM. `may_drop`: its sender does not respect the shaper's room (UDP).
    #[inline]
    pub(super) fn vswitch_egress(
        &mut self,
        now: Time,
        (v, id, pkt): (VmId, PktId, &mut Packet),
        may_drop: bool,
        ends: &Endpoints,
    ) -> HostEgress {
        let vm = &self.vms[v.idx()];
        let k = vm.vswitch as usize;
        if let Some(d) = vm.dscp_tag {
            pkt.dscp = d;
        }
        let pair = pkt.pair;
        let offer = match self.vswitches[k].policy.egress(pkt, v, pair) {
            Egress::Shaper(s) => {
                let lane = self.lane_of_packet(s, pkt, ends);
                match self.shapers[s].offer_in(now, id, pkt.size, may_drop, lane) {
                    Offer::Queued => return HostEgress::Queued(s),
                    Offer::Pass(Some(c)) => {
                        self.colour(s, pkt, c);
                        Offer::Pass(None)
                    }
                    offer => offer,
                }
            }
            Egress::Drop => Offer::Dropped,
        };
        match offer {
            Offer::Pass(_) => HostEgress::ToNic(self.count_to_nic(v, pkt)),
            _ => {
                self.vms[v.idx()].drops += 1;
                HostEgress::Dropped
            }
        }
    }

    /// The shaper a sender of flow `f` feeds, if it comes from a VM.
    #[inline]
    pub(super) fn channel_of(&self, f: FlowId, ends: &Endpoints) -> Option<ShaperId> {
        let flow = &ends.flows[f.idx()];
        match flow.chan {
            NO_CHANNEL => None,
            LIVE_CHANNEL => {
                let v = flow.spec.src_vm?;
                let k = self.vms[v.idx()].vswitch as usize;
                Some(self.vswitches[k].policy.channel(v, flow.pair))
            }
            c => Some(ShaperId(c)),
        }
    }

    /// The room flow `f`'s sender has: its shaper's, its guest ring's (with the CPU
    /// model) and its small queue's.
    #[inline]
    pub(super) fn sender_room(&self, f: FlowId, ends: &Endpoints) -> u64 {
        let mut room = self.shaper_room(f, ends);
        if self.cpu.is_some() {
            room = room.min(self.ring_room_of(f, ends));
        }
        if ends.small_queues {
            room.min(ends.flows[f.idx()].small_queue.room())
        } else {
            room
        }
    }

    /// The room flow `f`'s shaper has for its sender (`u64::MAX`: not from a VM),
    /// in the lane its next packet joins.
    #[inline]
    pub(super) fn shaper_room(&self, f: FlowId, ends: &Endpoints) -> u64 {
        match self.channel_of(f, ends) {
            Some(s) => self.shapers[s].room_in(self.next_lane(s, f, ends)),
            None => u64::MAX,
        }
    }

    /// The lane of shaper `s` that packet `p` joins (always the normal lane of a
    /// plain shaper).
    #[inline]
    fn lane_of_packet(&self, s: ShaperId, p: &Packet, ends: &Endpoints) -> Lane {
        if self.shapers[s].colours().is_none() {
            return Lane::Normal;
        }
        let data = !p.has(flags::ACK | flags::CONTROL)
            && matches!(ends.flows[p.flow.idx()].spec.kind, FlowKind::Tcp { .. });
        self.shapers[s].lane_of(data.then_some(p.seq + p.len as u64))
    }

    /// The lane of shaper `s` that flow `f`'s next full data packet joins.
    #[inline]
    fn next_lane(&self, s: ShaperId, f: FlowId, ends: &Endpoints) -> Lane {
        let sh = &self.shapers[s];
        if sh.colours().is_none() {
            return Lane::Normal;
        }
        let flow = &ends.flows[f.idx()];
        let snd_nxt = match flow.ep.as_deref() {
            Some(Endpoint::Tcp { snd, .. }) => snd.snd_nxt,
            Some(Endpoint::Udp { .. }) => return Lane::Normal,
            // a sender not made yet has sent nothing
            None if flow.spec.kind.is_udp() => return Lane::Normal,
            None => 0,
        };
        sh.lane_of(Some(snd_nxt + ends.tcp_of(f).mss as u64))
    }

    /// Packet `p`, released by two-colour shaper `s` in colour `c`, takes that
    /// colour's DSCP and ECT (Trinity sets ECT on every packet it sends) and, red,
    /// the shaper's red epoch.
    #[inline]
    pub(super) fn colour(&self, s: ShaperId, p: &mut Packet, c: Colour) {
        let (dscp, epoch) = self.colour_marks(s, c);
        p.dscp = dscp;
        p.flags |= flags::ECT;
        if c == Colour::Red {
            p.epoch = epoch;
        }
    }

    /// The room flow `f`'s VM's guest ring has for its packets.
    fn ring_room_of(&self, f: FlowId, ends: &Endpoints) -> u64 {
        match (&self.cpu, ends.flows[f.idx()].spec.src_vm) {
            (Some(cpu), Some(v)) => cpu.ring_room(v, ends.packet_size(f)),
            _ => u64::MAX,
        }
    }

    /// Flow `f`'s sender ran out of room: it waits in its shaper's list, or for its
    /// small queue to drain (whichever of the two is short of a full packet), or
    /// for room in its guest ring.
    #[inline]
    pub(super) fn block(&mut self, f: FlowId, ends: &mut Endpoints) {
        if ends.small_queues && ends.flows[f.idx()].small_queue.on() {
            self.block_small_queue(f, ends);
        } else {
            self.block_sender(f, ends);
        }
    }

    /// A sender with a small-queue limit stopped for lack of room: it waits for
    /// whichever of its small queue and its shaper is short of a full packet.
    #[cold]
    fn block_small_queue(&mut self, f: FlowId, ends: &mut Endpoints) {
        let full = ends.packet_size(f);
        let sq = &mut ends.flows[f.idx()].small_queue;
        if sq.room() < full {
            sq.waiting = true;
        }
        if self.shaper_room(f, ends) < full {
            self.block_sender(f, ends);
        }
    }

    /// Flow `f`'s sender waits for room in its guest ring or its shaper, whichever
    /// is short of a packet (once).
    fn block_sender(&mut self, f: FlowId, ends: &mut Endpoints) {
        if ends.flows[f.idx()].blocked {
            return;
        }
        if self.cpu.is_some() {
            let need = ends.packet_size(f);
            if let (true, Some(v)) = (
                self.ring_room_of(f, ends) < need,
                ends.flows[f.idx()].spec.src_vm,
            ) {
                if let Some(cpu) = self.cpu.as_mut() {
                    ends.flows[f.idx()].blocked = true;
                    cpu.ring_wait(v, f);
                }
                return;
            }
        }
        if let Some(s) = self.channel_of(f, ends) {
            ends.flows[f.idx()].blocked = true;
            self.shapers[s].block(f);
        }
    }

    /// A pass over shaper `s`'s waiting senders begins.
    pub(super) fn waking(&mut self, s: ShaperId) -> Waking {
        let sh = &mut self.shapers[s];
        if sh.colours().is_none() {
            return Waking::InOrder { left: sh.blocked() };
        }
        let waiting: Vec<FlowId> = (0..sh.blocked()).filter_map(|_| sh.pop_blocked()).collect();
        Waking::ByLane {
            waiting: waiting.into_iter(),
            kept: Vec::new(),
            full: [false; 2],
        }
    }

    /// The next of shaper `s`'s waiting senders its room wakes in pass `w`, no
    /// longer blocked: the longest-waiting first while a full packet of it fits. A
    /// two-colour shaper's lanes fill separately: every waiting sender whose lane
    /// has room is woken; one that does not fit keeps its place, and those behind
    /// it in its lane wait too (a sender just woken that stopped again goes behind
    /// them all, as with a plain shaper). `None` ends the pass: call `woke` then.
    pub(super) fn next_woken(
        &mut self,
        s: ShaperId,
        w: &mut Waking,
        ends: &mut Endpoints,
    ) -> Option<FlowId> {
        let f = match w {
            Waking::InOrder { left } => {
                *left = left.checked_sub(1)?;
                let sh = &mut self.shapers[s];
                let f = sh.first_blocked()?;
                if sh.room() < ends.packet_size(f) {
                    return None;
                }
                sh.pop_blocked();
                f
            }
            Waking::ByLane {
                waiting,
                kept,
                full,
            } => loop {
                let f = waiting.next()?;
                let lane = self.next_lane(s, f, ends);
                let need = ends.packet_size(f);
                if full[lane as usize] || self.shapers[s].room_in(lane) < need {
                    full[lane as usize] = true;
                    kept.push(f);
                    continue;
                }
                break f;
            },
        };
        ends.flows[f.idx()].blocked = false;
        Some(f)
    }

    /// Pass `w` over shaper `s`'s waiting senders is over: those a two-colour
    /// shaper kept wait first.
    pub(super) fn woke(&mut self, s: ShaperId, w: Waking) {
        if let Waking::ByLane { kept, .. } = w {
            self.shapers[s].block_first(&kept);
        }
    }

    /// Host vswitch `k`'s policy and the context its hooks see at `now`.
    #[inline]
    pub(super) fn policy_ctx(&mut self, k: usize, now: Time) -> (&mut Policy, HostCtx<'_>) {
        let hv = &mut self.vswitches[k];
        let ctx = HostCtx {
            now,
            capacity_bps: hv.capacity_bps,
            mine: &hv.vms,
            vms: &self.vms,
            pairs: &self.pairs,
            shapers: &mut self.shapers,
            control: &mut self.control_out,
            release: &mut self.released,
        };
        (&mut hv.policy, ctx)
    }

    /// VM `v`'s packet `id` enters its guest TX ring at `now` (`CpuState::ring_in`);
    /// a drop is counted on the VM.
    pub(super) fn ring_in(&mut self, now: Time, v: VmId, id: PktId, may_drop: bool) -> CpuIn {
        let Some(cpu) = self.cpu.as_mut() else {
            return CpuIn::Queued;
        };
        let to = cpu.ring_in(now, v, id, may_drop);
        if let CpuIn::Dropped = to {
            self.vms[v.idx()].drops += 1;
        }
        to
    }

    /// VM `v`'s packet `p` leaves its vswitch: counted on its pair and its VM; the
    /// host whose NIC it goes to.
    #[inline]
    pub(super) fn count_to_nic(&mut self, v: VmId, p: &Packet) -> HostId {
        let size = p.size as u64;
        let data = !p.has(flags::ACK | flags::CONTROL) as u64;
        self.pairs[p.pair as usize].tx_bytes += size;
        let vm = &mut self.vms[v.idx()];
        vm.tx_bytes += size;
        vm.data_bytes += size * data;
        vm.host
    }

    /// The DSCP and red epoch two-colour shaper `s` gives a packet it releases in
    /// colour `c` (0 and 0 for a plain shaper).
    #[inline]
    pub(super) fn colour_marks(&self, s: ShaperId, c: Colour) -> (u8, u16) {
        self.shapers[s]
            .colours()
            .map_or((0, 0), |t| (t.dscp_of(c), t.epoch))
    }

    /// The wake-up shaper `s` now needs for its next departure, if it needs a new
    /// one (it is then the pending one), with the host it wakes on.
    #[inline]
    pub(super) fn next_wake(&mut self, s: ShaperId, now: Time) -> Option<(Time, HostId)> {
        let sh = &mut self.shapers[s];
        // a shaper is served the moment its bucket allows (the vswitch's CPU, when
        // modelled, forwards the packet afterwards: `sim/cpu.rs`)
        let t = sh.next_departure()?.max(now);
        if sh.wake_at == Some(t) {
            return None;
        }
        sh.wake_at = Some(t);
        Some((t, self.vms[sh.vm.idx()].host))
    }

    /// Shaper `s`'s wake-up at `now` fired: whether it is still the pending one
    /// (a rate change supersedes it); it is pending no more.
    #[inline]
    pub(super) fn woken(&mut self, s: ShaperId, now: Time) -> bool {
        let sh = &mut self.shapers[s];
        if sh.wake_at != Some(now) {
            return false;
        }
        sh.wake_at = None;
        true
    }

    /// The receiving side of packet `p`, if its receiving VM's policy is to see
    /// it: that VM's vswitch, the VM, and whether `p` is TCP data or an ACK.
    #[inline]
    pub(super) fn ingress_of(&self, p: &Packet, ends: &Endpoints) -> Option<(usize, VmId, bool)> {
        let v = self.pairs[p.pair as usize].dst?;
        let k = self.vms[v.idx()].vswitch as usize;
        let tcp = !p.has(flags::CONTROL)
            && matches!(ends.flows[p.flow.idx()].spec.kind, FlowKind::Tcp { .. });
        Some((k, v, tcp))
    }

    /// The packet of control message `c` from its pair's sending VM to its receiving
    /// VM's host (policies send them through `HostCtx::control`), with the VM that
    /// sends it; `None` for a pair that is not between two VMs (a policy's bug,
    /// caught in debug builds).
    pub(super) fn control_packet(&self, c: ControlMsg) -> Option<Template> {
        let ControlMsg { pair, size, .. } = c;
        let Some(&VmPair { src, dst, .. }) = self.pairs.get(pair as usize) else {
            debug_assert!(false, "no pair {pair}");
            return None;
        };
        let (Some(s), Some(d)) = (src, dst) else {
            debug_assert!(false, "control packets travel between VMs");
            return None;
        };
        let base = Packet {
            dst: self.vms[d.idx()].host,
            size,
            hash: crate::net::routing::mix32(pair ^ 0x6a09_e667),
            pair,
            ..Packet::control(c.payload)
        };
        Some(Template {
            base,
            header: 0,
            host: self.vms[s.idx()].host,
            vm: Some(s),
        })
    }
}
