//! Strict priority over DWRR: queues `0..strict` are served in strict priority (queue
//! 0 first); while they are empty, the rest share the port by deficit weighted round
//! robin. The hierarchy commodity switches ship (BarberQ's macrobenchmark, Trinity's
//! red and green queues).

use super::dwrr::Dwrr;
use super::{strict, SchedParams, SchedulerRule};
use crate::switch::queues::QueueStore;

/// The scheduler's state: how many queues are strict, and the DWRR of the rest.
#[derive(Clone, Debug)]
pub struct SpDwrr {
    /// Queues `0..strict` are strict-priority ones.
    strict: usize,
    /// The DWRR group of queues `strict..`.
    group: Dwrr,
}

impl SchedulerRule for SpDwrr {
    /// `weights` (one per queue: the strict queues' are not used), DWRR's `quantum`
    /// bytes per unit of weight, `strict` strict queues (at least 1, fewer than the
    /// queues).
    fn configure(p: &SchedParams<'_>) -> Self {
        SpDwrr {
            strict: p.strict,
            group: Dwrr::new(&p.weights[p.strict..], p.quantum, p.strict),
        }
    }

    /// The queue to send from next: the first non-empty strict queue, else DWRR's.
    #[inline]
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        let high = qs.nonempty_mask() & ((1u64 << self.strict) - 1);
        strict::select(high).or_else(|| self.group.select(qs))
    }

    /// The head of queue `i` left.
    #[inline]
    fn dequeued(&mut self, i: usize, now_empty: bool) {
        self.group.dequeued(i, now_empty)
    }

    /// The tail of queue `i` was evicted.
    fn evicted(&mut self, i: usize, now_empty: bool) {
        self.group.evicted(i, now_empty)
    }

    /// New weights, one per queue (the strict queues' are not used).
    fn set_weights(&mut self, weights: &[u32]) {
        self.group.set_weights(&weights[self.strict..])
    }
}
