//! What a partition of a parallel run holds beside its copy of the simulation, and
//! what it does with it: which host vswitches are its own, its mail to the other
//! partitions (a packet leaving by a cut port, a ghost while its small queue counts
//! it), the events it handles for every partition and the order of the flows it
//! starts.

use crate::engine::queue::Origin;
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{Packet, PktId, PortId};
use crate::sim::parts::Parallelism;
use crate::sim::{Event, Sim};
use crate::transport::sack::SackOption;

/// What a partition holds beside its copy of the simulation.
pub(in crate::sim) struct PartCtx {
    /// Which partition it is.
    pub(super) me: u16,
    /// The partition of the node at the far end of each port.
    pub(super) peer: Vec<u16>,
    /// Mail to each partition, sent in the current window.
    pub(super) outbox: Vec<Vec<Mail>>,
    /// The events it handled that the sequential run handles once for every
    /// partition (flow starts, host ticks): their times and codes.
    pub(in crate::sim) shared: Vec<(Time, u32)>,
    /// Which of the run's host vswitches are its own.
    pub(super) vswitches: Vec<bool>,
    /// Packets mailed that their sender's small queue still counts: here until
    /// they have left the NIC (`Sim::mail`).
    pub(in crate::sim) ghosts: Vec<PktId>,
    /// Where each flow the recorder samples started in the sequential run's order,
    /// since the last sync (`Sim::note_start`).
    pub(in crate::sim) start_order: Vec<(u128, u32)>,
    /// Flows started by the events it handled alone (gates).
    pub(super) gated: u32,
    /// When its last flow completed.
    pub(in crate::sim) last_complete: Time,
}

impl PartCtx {
    /// Whether host vswitch `k` is this partition's own.
    #[inline]
    pub(in crate::sim) fn owns_vswitch(&self, k: usize) -> bool {
        self.vswitches[k]
    }

    /// Whether a packet leaving by `port` goes to another partition.
    #[inline]
    pub(in crate::sim) fn cut(&self, port: PortId) -> bool {
        self.peer[port.idx()] != self.me
    }
}

impl Parallelism {
    /// In a partition, notes the event of code `code` (`Event::encode`) at `at`, one
    /// the sequential run handles once for every partition (flow starts, host
    /// ticks): `ParState::events` counts it once.
    #[inline]
    pub(in crate::sim) fn handled_for_all(&mut self, at: Time, code: u32) {
        if let Some(pc) = self.part.as_deref_mut() {
            pc.shared.push((at, code));
        }
    }

    /// Whether host vswitch `k` runs here: in a partition, whether it is its own; in
    /// the run a parallel run is of, never; in a sequential run, always.
    #[inline]
    pub(in crate::sim) fn owns_vswitch(&self, k: usize) -> bool {
        match self.part.as_deref() {
            Some(pc) => pc.owns_vswitch(k),
            None => !self.coordinator,
        }
    }
}

/// A packet on its way to another partition.
pub(super) struct Mail {
    pub(super) at: Time,
    by: Origin,
    pkt: Packet,
    sack: Option<SackOption>,
}

impl Sim {
    /// Mails packet `id`, which reaches the far end of cut port `port` at `at`. A
    /// packet its sender's small queue counts stays here as a ghost until it has
    /// left the NIC (its `Sent` event, always before it arrives: cut links have a
    /// delay); the copy mailed no longer counts, as in the sequential run it no
    /// longer does when it arrives.
    #[inline(never)]
    pub(in crate::sim) fn mail(&mut self, id: PktId, at: Time, port: PortId) {
        let mut pkt = self.fabric.pkts[id];
        let sack = if pkt.has(flags::ACK) {
            self.fabric.sacks.take(pkt.len)
        } else {
            None
        };
        let by = Origin::port(port.0);
        let ghost = pkt.has(flags::TSQ);
        if ghost {
            pkt.flags &= !flags::TSQ;
            self.schedule(self.left_nic(port, at), Event::Sent(id), by);
        } else {
            self.fabric.pkts.free(id);
        }
        let pc = self.parallel.part.as_deref_mut();
        let pc = pc.expect("only a partition mails");
        if ghost {
            pc.ghosts.push(id);
        }
        pc.outbox[pc.peer[port.idx()] as usize].push(Mail { at, by, pkt, sack });
    }

    /// Flow `f` started in this partition: if the recorder samples it, where in the
    /// sequential run's order (the key of the event that started it, then the flow's
    /// id when that event starts flows in every partition at once, a flow start, or
    /// the order it handled them in, a gate's).
    #[cold]
    pub(in crate::sim) fn note_start(&mut self, f: crate::net::FlowId) {
        if !self.records.recorder.samples_flows() {
            return;
        }
        let key = self.parallel.event_key;
        let pc = self.parallel.part.as_deref_mut();
        let pc = pc.expect("a partition");
        let then = if key as u32 == Event::FlowStart.encode() {
            f.0
        } else {
            pc.gated += 1;
            pc.gated
        };
        pc.start_order.push((key, then));
    }

    /// A partition's [`PartCtx::start_order`] since the last call.
    pub(super) fn take_start_order(&mut self) -> Vec<(u128, u32)> {
        let pc = self.parallel.part.as_deref_mut();
        std::mem::take(&mut pc.expect("a partition").start_order)
    }

    /// Packet `id` has left its host's NIC: if it was mailed, its ghost goes.
    #[cold]
    pub(in crate::sim) fn forget_ghost(&mut self, id: PktId) {
        let pc = self.parallel.part.as_deref_mut();
        let ghosts = &mut pc.expect("a partition").ghosts;
        if let Some(i) = ghosts.iter().position(|&g| g == id) {
            ghosts.swap_remove(i);
            self.fabric.pkts.free(id);
        }
    }

    /// Whether host vswitch `k` runs here (`Parallelism::owns_vswitch`).
    #[inline]
    pub(in crate::sim) fn owns_vswitch(&self, k: usize) -> bool {
        self.parallel.owns_vswitch(k)
    }

    /// Schedules the arrival of mailed packet `m`.
    pub(super) fn accept(&mut self, m: Mail) {
        let mut pkt = m.pkt;
        if let Some(s) = m.sack {
            pkt.len = self.fabric.sacks.put(s);
        }
        let id = self.alloc_packet(pkt);
        self.schedule(m.at, Event::Arrive(id), m.by);
    }
}
