//! Schedulers: which queue of a port sends next. Every one is work-conserving: it
//! returns a queue whenever any queue has a waiting packet.
//!
//! * [`strict`]: strict priority, queue 0 highest.
//! * [`wrr`]: weighted round robin, up to w_i packets per round.
//! * [`dwrr`]: deficit weighted round robin (Shreedhar–Varghese DRR), quantum·w_i
//!   bytes per round.
//! * [`wfq`]: weighted fair queueing with virtual start and finish tags (SCFQ).
//! * [`sp_dwrr`]: the first `strict` queues in strict priority above a DWRR group
//!   of the rest, the hierarchy commodity switches ship (BarberQ's macrobenchmark,
//!   Trinity).
//!
//! *Adding a scheduler:* a file here, a variant of [`SchedulerKind`] (the name
//! scenarios use) and of [`Scheduler`] with its arm in each method.
//!
//! Weights may change while the simulation runs (QShare rebinds every control
//! interval); a change applies from the next decision on.

pub mod dwrr;
pub mod sp_dwrr;
pub mod strict;
pub mod wfq;
pub mod wrr;

use super::queues::QueueStore;
use dwrr::Dwrr;
use sp_dwrr::SpDwrr;
use wfq::Wfq;
use wrr::Wrr;

// The one list of schedulers: scenarios name them (`network.scheduler`), and
// `Scheduler::new` builds each. Its doc comment is the scenario schema's description.
/// Scheduler across a port's queues.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "SchedulerSpec")]
pub enum SchedulerKind {
    /// Strict priority, queue 0 highest.
    Strict,
    /// Weighted round robin (packets per round by weight).
    Wrr,
    /// Deficit weighted round robin (bytes per round by weight).
    #[default]
    Dwrr,
    /// Weighted fair queueing (virtual start/finish tags).
    Wfq,
    /// Strict-priority queues 0..strict_queues above a DWRR group of the rest.
    SpDwrr,
}

/// A port's scheduler and its state. The state lives out of line so that a port
/// stays small (ports are touched in random order; the FIFO case needs none).
#[derive(Clone, Debug)]
pub enum Scheduler {
    /// Strict priority.
    Strict,
    /// Weighted round robin.
    Wrr(Box<Wrr>),
    /// Deficit weighted round robin.
    Dwrr(Box<Dwrr>),
    /// Weighted fair queueing.
    Wfq(Box<Wfq>),
    /// Queues below `strict` in strict priority, the rest in DWRR.
    SpDwrr(Box<SpDwrr>),
}

impl Scheduler {
    /// A scheduler of `kind` over `weights.len()` queues; `quantum` is DWRR's bytes
    /// per unit of weight per round; `strict` the strict queues of SP over DWRR.
    pub fn new(kind: SchedulerKind, weights: &[u32], quantum: u64, strict: usize) -> Self {
        if weights.len() == 1 {
            return Scheduler::Strict; // one queue: nothing to share
        }
        match kind {
            SchedulerKind::Strict => Scheduler::Strict,
            SchedulerKind::Wrr => Scheduler::Wrr(Box::new(Wrr::new(weights))),
            SchedulerKind::Dwrr => Scheduler::Dwrr(Box::new(Dwrr::new(weights, quantum, 0))),
            SchedulerKind::Wfq => Scheduler::Wfq(Box::new(Wfq::new(weights))),
            SchedulerKind::SpDwrr => {
                Scheduler::SpDwrr(Box::new(SpDwrr::new(weights, quantum, strict)))
            }
        }
    }

    /// The queue to send from next, if any packet waits.
    #[inline]
    pub fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        match self {
            Scheduler::Strict => strict::select(qs.nonempty_mask()),
            Scheduler::Wrr(s) => s.select(qs),
            Scheduler::Dwrr(s) => s.select(qs),
            Scheduler::Wfq(s) => s.select(qs),
            Scheduler::SpDwrr(s) => s.select(qs),
        }
    }

    /// A packet of `size` bytes joined queue `i`.
    #[inline]
    pub fn enqueued(&mut self, i: usize, size: u32) {
        if let Scheduler::Wfq(s) = self {
            s.enqueued(i, size);
        }
    }

    /// The head of queue `i` left; `now_empty` if the queue has no more waiting.
    #[inline]
    pub fn dequeued(&mut self, i: usize, now_empty: bool) {
        match self {
            Scheduler::Dwrr(s) => s.dequeued(i, now_empty),
            Scheduler::SpDwrr(s) => s.dequeued(i, now_empty),
            Scheduler::Wfq(s) => s.dequeued(i),
            Scheduler::Strict | Scheduler::Wrr(_) => {}
        }
    }

    /// The tail of queue `i` was evicted; `now_empty` if it has no more waiting.
    pub fn evicted(&mut self, i: usize, now_empty: bool) {
        match self {
            Scheduler::Wfq(s) => s.evicted(i),
            Scheduler::Dwrr(s) => s.evicted(i, now_empty),
            Scheduler::SpDwrr(s) => s.evicted(i, now_empty),
            Scheduler::Strict | Scheduler::Wrr(_) => {}
        }
    }

    /// New weights, one per queue.
    pub fn set_weights(&mut self, weights: &[u32]) {
        match self {
            Scheduler::Strict => {}
            Scheduler::Wrr(s) => s.set_weights(weights),
            Scheduler::Dwrr(s) => s.set_weights(weights),
            Scheduler::Wfq(s) => s.set_weights(weights),
            Scheduler::SpDwrr(s) => s.set_weights(weights),
        }
    }
}
