//! Deficit weighted round robin (Shreedhar and Varghese, "Efficient fair queuing
//! using deficit round robin", SIGCOMM 1995): each turn adds quantum·w_i bytes to
//! queue i's deficit counter; the queue sends head packets while they fit in the
//! counter; a queue that empties forfeits its deficit. Byte shares of backlogged
//! queues converge to w_i/Σw whatever the packet sizes.

use super::{SchedParams, SchedulerRule};
use crate::switch::queues::QueueStore;

/// Most queues a DWRR group may have.
pub const MAX: usize = 32;

/// DWRR state over queues `offset..offset+n` of a port. The per-queue arrays are
/// inline so the scheduler's state is one allocation away from the port.
#[derive(Clone, Debug)]
pub struct Dwrr {
    quantum: u64,
    n: usize,
    offset: usize,
    current: usize,
    in_turn: bool,
    /// (quantum, deficit) of each queue, side by side: one cache line per four queues.
    qd: [(u64, u64); MAX],
}

impl Dwrr {
    /// DWRR over `weights.len()` queues starting at queue `offset`, with `quantum`
    /// bytes per unit of weight.
    pub fn new(weights: &[u32], quantum: u64, offset: usize) -> Self {
        assert!(weights.len() <= MAX, "at most {MAX} queues in a DWRR group");
        let mut qd = [(0, 0); MAX];
        for (q, &w) in qd.iter_mut().zip(weights) {
            q.0 = w as u64 * quantum;
        }
        Dwrr {
            quantum,
            n: weights.len(),
            offset,
            current: 0,
            in_turn: false,
            qd,
        }
    }

    /// The next queue set in `mask` at or after `from`, wrapping around.
    #[inline(always)]
    fn next_in(mask: u64, from: usize) -> usize {
        let ahead = if from >= 64 {
            0
        } else {
            mask & !((1u64 << from) - 1)
        };
        (if ahead != 0 { ahead } else { mask }).trailing_zeros() as usize
    }

    /// Queue `i` (a port queue index) emptied: it forfeits its deficit, and if it
    /// was the one in its turn, the next turn goes to the next queue, even if it
    /// receives a packet before the next decision (DRR's rule).
    fn forfeit(&mut self, i: usize) {
        if i >= self.offset {
            let c = i - self.offset;
            self.qd[c].1 = 0;
            if c == self.current {
                self.current = (c + 1) % self.n;
                self.in_turn = false;
            }
        }
    }
}

impl SchedulerRule for Dwrr {
    /// DWRR over every queue of the port (`quantum` from `network.quantum`).
    fn configure(p: &SchedParams<'_>) -> Self {
        Dwrr::new(p.weights, p.quantum, 0)
    }

    /// The next queue of the group to send from. Empty queues are skipped through
    /// the port's non-empty mask without being touched: their deficit is already 0
    /// (a queue forfeits it when it empties, see `dequeued` and `evicted`).
    #[inline]
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        let mask = (qs.nonempty_mask() >> self.offset) & ((1u128 << self.n) - 1) as u64;
        if mask == 0 {
            return None;
        }
        if mask & (1 << self.current) == 0 {
            self.current = Self::next_in(mask, self.current);
            self.in_turn = false;
        }
        loop {
            let c = self.current;
            let size = qs.head(self.offset + c).expect("non-empty queue").1 as u64;
            let (quantum, deficit) = &mut self.qd[c];
            if !self.in_turn {
                *deficit += *quantum;
                self.in_turn = true;
            }
            if size <= *deficit {
                *deficit -= size;
                return Some(self.offset + c);
            }
            self.current = Self::next_in(mask, c + 1);
            self.in_turn = false;
        }
    }

    /// New weights (one per queue of the group).
    fn set_weights(&mut self, weights: &[u32]) {
        for (q, &w) in self.qd.iter_mut().zip(weights) {
            q.0 = w as u64 * self.quantum;
        }
    }

    /// Queue `i` lost packets to an eviction; `now_empty` if it has none waiting.
    fn evicted(&mut self, i: usize, now_empty: bool) {
        if now_empty {
            self.forfeit(i);
        }
    }

    /// Queue `i` sent its head; `now_empty` if it has none waiting.
    #[inline]
    fn dequeued(&mut self, i: usize, now_empty: bool) {
        if now_empty {
            self.forfeit(i);
        }
    }
}
