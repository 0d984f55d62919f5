//! Weighted round robin: queues take turns; in its turn a backlogged queue sends up
//! to w_i packets. With equal packet sizes each backlogged queue gets w_i/Σw of the
//! link.

use super::{SchedParams, SchedulerRule};
use crate::switch::queues::QueueStore;

/// WRR state.
#[derive(Clone, Debug)]
pub struct Wrr {
    weights: Vec<u32>,
    current: usize,
    sent: u32,
}

impl SchedulerRule for Wrr {
    /// Round robin over the port's queues.
    fn configure(p: &SchedParams<'_>) -> Self {
        Wrr {
            weights: p.weights.to_vec(),
            current: 0,
            sent: 0,
        }
    }

    /// New weights.
    fn set_weights(&mut self, weights: &[u32]) {
        self.weights.copy_from_slice(weights);
    }

    /// The next queue to send from.
    #[inline]
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        let mask = qs.nonempty_mask();
        if mask == 0 {
            return None;
        }
        let n = self.weights.len();
        loop {
            let i = self.current;
            if mask & (1 << i) != 0 && self.sent < self.weights[i] {
                self.sent += 1;
                return Some(i);
            }
            self.current = (i + 1) % n;
            self.sent = 0;
        }
    }
}
