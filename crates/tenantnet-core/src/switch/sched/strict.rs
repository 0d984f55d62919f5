//! Strict priority: the lowest-numbered non-empty queue always sends first; lower
//! priorities get only what higher ones leave.

use super::{SchedParams, SchedulerRule};
use crate::switch::queues::QueueStore;

/// Strict priority: no state.
#[derive(Clone, Copy, Debug)]
pub struct Strict;

impl SchedulerRule for Strict {
    fn configure(_: &SchedParams<'_>) -> Self {
        Strict
    }

    #[inline]
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        select(qs.nonempty_mask())
    }
}

/// The highest-priority (lowest-numbered) queue among those set in `nonempty`.
#[inline]
pub fn select(nonempty: u64) -> Option<usize> {
    (nonempty != 0).then(|| nonempty.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lowest_index_first() {
        assert_eq!(super::select(0b1010), Some(1));
        assert_eq!(super::select(0), None);
    }
}
