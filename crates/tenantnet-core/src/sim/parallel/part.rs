//! What a partition of a parallel run holds beside its copy of the simulation, and
//! what it does with it: which host vswitches are its own, its mail to the other
//! partitions (a packet leaving by a cut port, a ghost while its small queue counts
//! it), the events it handles for every partition and the order of the flows it
//! starts.

use crate::engine::queue::Origin;
use crate::engine::Time;
use crate::net::{Packet, PktId, PortId};
use crate::sim::parts::Parallelism;
use crate::sim::sack_store::SackStore;
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
    /// they have left the NIC (`Sim::on_wire_hook`).
    pub(in crate::sim) ghosts: Vec<PktId>,
    /// Where each flow the recorder samples started in the sequential run's order,
    /// since the last sync (`Parallelism::note_start`).
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

impl Parallelism {
    /// Flow `f` started in this partition and the recorder samples it: where in the
    /// sequential run's order (the key of the event that started it, then the flow's
    /// id when that event starts flows in every partition at once, a flow start, or
    /// the order it handled them in, a gate's).
    /// `by_flow_start`: the event is a flow start.
    #[cold]
    pub(in crate::sim) fn note_start(&mut self, f: crate::net::FlowId, by_flow_start: bool) {
        let key = self.event_key;
        let pc = self.part.as_deref_mut().expect("a partition");
        let then = if by_flow_start {
            f.0
        } else {
            pc.gated += 1;
            pc.gated
        };
        pc.start_order.push((key, then));
    }

    /// A partition's [`PartCtx::start_order`] since the last call.
    pub(super) fn take_start_order(&mut self) -> Vec<(u128, u32)> {
        let pc = self.part.as_deref_mut();
        std::mem::take(&mut pc.expect("a partition").start_order)
    }

    /// Packet `id` has left its host's NIC: whether it was mailed (its ghost goes,
    /// and the caller frees it).
    #[cold]
    pub(in crate::sim) fn forget_ghost(&mut self, id: PktId) -> bool {
        let pc = self.part.as_deref_mut();
        let ghosts = &mut pc.expect("a partition").ghosts;
        let i = ghosts.iter().position(|&g| g == id);
        i.map(|i| ghosts.swap_remove(i)).is_some()
    }
}

/// A packet on its way to another partition.
pub(in crate::sim) struct Mail {
    pub(super) at: Time,
    by: Origin,
    pkt: Packet,
    sack: Option<SackOption>,
}

impl Mail {
    /// Packet `pkt` (with its SACK option, if an ACK) reaches the far end of a cut
    /// link at `at`, scheduled on behalf of `by`.
    pub(in crate::sim) fn new(at: Time, by: Origin, pkt: Packet, sack: Option<SackOption>) -> Self {
        Mail { at, by, pkt, sack }
    }

    /// The mailed packet as its receiving partition stores it (its SACK option into
    /// `sacks`), with when it arrives and on whose behalf.
    pub(super) fn open(self, sacks: &mut SackStore) -> (Time, Origin, Packet) {
        let mut pkt = self.pkt;
        if let Some(s) = self.sack {
            pkt.len = sacks.put(s);
        }
        (self.at, self.by, pkt)
    }
}

impl Parallelism {
    /// Posts mail `m` to the partition at the far end of cut port `port`; `ghost`:
    /// the packet that stays here until it has left the NIC (`Event::Sent`).
    pub(in crate::sim) fn post(&mut self, port: PortId, m: Mail, ghost: Option<PktId>) {
        let pc = self.part.as_deref_mut().expect("only a partition mails");
        pc.ghosts.extend(ghost);
        pc.outbox[pc.peer[port.idx()] as usize].push(m);
    }
}
