//! A switch-wide shared buffer with dynamic thresholds (Choudhury and Hahne,
//! "Dynamic queue length thresholds for shared-memory packet switches", IEEE/ACM
//! ToN 1998): every queue of every port draws from one pool of B bytes, and queue
//! i may grow only to T(t) = α·(B − Q(t)), where Q(t) is what the whole pool holds.
//! A lone congested queue settles at α/(1+α)·B and leaves the rest for others.
//!
//! The pool must see every byte leave, so ports using it wake at the end of every
//! transmission (see `crate::net::port`).

use crate::engine::Time;
use crate::switch::queues::QueueStore;

/// The switch's shared pool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SharedPool {
    /// Pool size B in bytes.
    pub size: u64,
    /// Bytes held by all ports of the switch.
    pub used: u64,
    /// α.
    pub alpha: f64,
}

impl SharedPool {
    /// Whether a packet of `size` bytes may join queue `i` (of `qs`).
    #[inline]
    pub fn admit<Q: QueueStore>(&self, qs: &Q, now: Time, i: usize, size: u32) -> bool {
        let size = size as u64;
        if self.used + size > self.size {
            return false;
        }
        let threshold = self.alpha * (self.size - self.used) as f64;
        (qs.len(i, now) + size) as f64 <= threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PktId;
    use crate::switch::queues::QueueSet;

    #[test]
    fn threshold_shrinks_as_the_pool_fills() {
        let mut qs = QueueSet::new(1);
        let mut pool = SharedPool {
            size: 1000,
            used: 0,
            alpha: 1.0,
        };
        let mut n = 0;
        while pool.admit(&qs, 0, 0, 100) {
            qs.push(0, 0, PktId(n), 100);
            pool.used += 100;
            n += 1;
        }
        // a lone queue stops at alpha/(1+alpha) of the pool
        assert_eq!(pool.used, 500);
    }
}
