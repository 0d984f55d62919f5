//! A host's packet reaches its NIC a while after the host sent it
//! (`network.tx_jitter`, `net::host_jitter`): as a `Handoff` event at that time or,
//! where nothing could tell the difference, at once, with the NIC's own clock set to
//! that time. Speed only: a run gives the same bytes either way (the digests' tests
//! hold it).
//!
//! Handing over at once gives the same results when nothing that happens before the
//! handoff's time `t` sees or changes the NIC, and the NIC's state then is its state
//! now:
//!
//! - the run is sequential under partitioned ties (an event's order then depends on
//!   its time and origin, never on when it was scheduled), captures no packets
//!   (whose records go in the order they are taken) and does not stop when its
//!   flows are done (its end then moves while it runs);
//! - no `Handoff` of the same host is still pending (handoffs join in order);
//! - nothing but its own wake-ups and packets joining it changes the NIC (it draws
//!   on no shared pool); its wake-ups due by `t` are then handled first, each at
//!   its time, and their events, left in the queue, find that the port has moved
//!   on and do nothing (and still count once each, as they did); a packet the
//!   host sends later hands over later still;
//! - if the host's senders have small queues (`transport.limit_output_bytes`), no
//!   packet waits at the NIC: the packet cannot be dropped there, which would hand
//!   its bytes back to its sender now rather than at `t`;
//! - no event that reads ports (samples, host ticks, the CPU model's NIC monitor,
//!   fabric controllers) is due at or before `t`, and `t` is within the stretch of
//!   time the loop is running (an API call may stop it sooner).
//!
//! A packet dropped at the NIC is then freed earlier, which only changes which
//! packet ids later packets get (ids never order events or reach results). The
//! event count still counts the handoff.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Event, Sim};
use crate::engine::queue::Ties;
use crate::engine::Time;
use crate::net::{HostId, PktId};

/// Whether and when handoffs may be made at once.
#[derive(Debug, Default)]
pub struct Handoffs {
    /// The run allows it (see the module's conditions; off in parallel runs and
    /// while a cut is profiled).
    pub(super) on: bool,
    /// Each host's latest handoff scheduled as an event.
    evented: Vec<Time>,
    /// When the pending events that read ports are due.
    readers: BinaryHeap<Reverse<Time>>,
    /// The end of the stretch the loop is running (never past the run's end).
    pub(super) horizon: Time,
    /// Handoffs made at once so far.
    pub(super) made: u64,
}

impl Handoffs {
    /// For a run of `hosts` hosts that hand packets over later (`waits`), under
    /// `ties`, capturing packets or not, stopping when its flows are done or not.
    pub(super) fn new(hosts: usize, waits: bool, ties: Ties, capture: bool, stop: bool) -> Self {
        let on = waits && ties == Ties::Partitioned && !capture && !stop;
        Handoffs {
            on,
            evented: if on { vec![0; hosts] } else { Vec::new() },
            readers: BinaryHeap::new(),
            horizon: 0,
            made: 0,
        }
    }

    /// Whether event `e` reads ports (its handling may look at a NIC).
    #[inline(always)]
    pub(super) fn reads_ports(e: Event) -> bool {
        matches!(
            e,
            Event::Sample | Event::HostTick | Event::NicMonitor | Event::Control(_)
        )
    }

    /// A reader scheduled at `at`.
    #[inline]
    pub(super) fn reader_scheduled(&mut self, at: Time) {
        if self.on {
            self.readers.push(Reverse(at));
        }
    }

    /// A reader is being handled (the earliest pending one).
    #[inline]
    pub(super) fn reader_handled(&mut self) {
        if self.on {
            self.readers.pop();
        }
    }
}

/// Host `h` hands packet `id`, sent now, to its NIC at `t`: at once where nothing
/// could tell (the module's conditions), otherwise as a `Handoff` event. A free
/// function, not a method of the loop's: what it decides is the fabric's.
#[inline(never)]
pub(super) fn hand_over_at(sim: &mut Sim, h: HostId, id: PktId, t: Time) {
    if may_hand_over_now(sim, h, t) {
        // handled as the events would be (through the loop's own dispatch, so that
        // the hot path's calls keep their inlining): first the NIC's wake-ups due by
        // then, each at its time, whose events, left in the queue, find the port
        // moved on and do nothing; then the handoff
        let (nic, now) = (sim.fabric.net.hosts[h.idx()].nic, sim.now);
        while let Some(w) = sim.fabric.net.ports[nic.idx()].wake_due_by(t) {
            sim.now = w;
            sim.dispatch(Event::TxDone(nic));
        }
        sim.now = t;
        sim.dispatch(Event::Handoff(id));
        sim.now = now;
        sim.events.count_handled();
        sim.fabric.handoffs.made += 1;
        return;
    }
    if let Some(last) = sim.fabric.handoffs.evented.get_mut(h.idx()) {
        *last = t;
    }
    sim.schedule(t, Event::Handoff(id), sim.fabric.origin(h));
}

fn may_hand_over_now(sim: &Sim, h: HostId, t: Time) -> bool {
    let ho = &sim.fabric.handoffs;
    ho.on
        && sim.parallel.part.is_none()
        && t <= ho.horizon
        && !sim.budget.done
        && ho.evented[h.idx()] < sim.now
        && ho.readers.peek().is_none_or(|&Reverse(r)| r > t)
        && (sim.fabric.net.nic(h)).self_contained(!sim.ends.small_queues)
}
