//! Deficit weighted round robin (Shreedhar and Varghese, "Efficient fair queuing
//! using deficit round robin", SIGCOMM 1995): each turn adds quantum·w_i bytes to
//! queue i's deficit counter; the queue sends head packets while they fit in the
//! counter; a queue that empties forfeits its deficit. Byte shares of backlogged
//! queues converge to w_i/Σw whatever the packet sizes.

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
    quanta: [u64; MAX],
    deficit: [u64; MAX],
}

impl Dwrr {
    /// DWRR over `weights.len()` queues starting at queue `offset`, with `quantum`
    /// bytes per unit of weight.
    pub fn new(weights: &[u32], quantum: u64, offset: usize) -> Self {
        assert!(weights.len() <= MAX, "at most {MAX} queues in a DWRR group");
        let mut quanta = [0; MAX];
        for (q, &w) in quanta.iter_mut().zip(weights) {
            *q = w as u64 * quantum;
        }
        Dwrr {
            quantum,
            n: weights.len(),
            offset,
            current: 0,
            in_turn: false,
            quanta,
            deficit: [0; MAX],
        }
    }

    /// New weights (one per queue of the group).
    pub fn set_weights(&mut self, weights: &[u32]) {
        for (q, &w) in self.quanta.iter_mut().zip(weights) {
            *q = w as u64 * self.quantum;
        }
    }

    fn advance(&mut self) {
        self.current = (self.current + 1) % self.n;
        self.in_turn = false;
    }

    /// The next queue of the group to send from.
    #[inline]
    pub fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        let group = (((1u128 << self.n) - 1) as u64) << self.offset;
        if qs.nonempty_mask() & group == 0 {
            return None;
        }
        loop {
            let c = self.current;
            match qs.head(self.offset + c).map(|h| h.1) {
                None => {
                    self.deficit[c] = 0;
                    self.advance();
                }
                Some(size) => {
                    if !self.in_turn {
                        self.deficit[c] += self.quanta[c];
                        self.in_turn = true;
                    }
                    if size as u64 <= self.deficit[c] {
                        self.deficit[c] -= size as u64;
                        return Some(self.offset + c);
                    }
                    self.advance();
                }
            }
        }
    }

    /// Queue `i` (a port queue index) sent its head; an emptied queue ends its turn.
    #[inline]
    pub fn dequeued(&mut self, i: usize, now_empty: bool) {
        if now_empty && i >= self.offset {
            let c = i - self.offset;
            self.deficit[c] = 0;
            if c == self.current {
                self.advance();
            }
        }
    }
}
