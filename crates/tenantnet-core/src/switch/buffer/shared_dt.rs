//! A switch-wide shared buffer with dynamic thresholds (Choudhury and Hahne,
//! "Dynamic queue length thresholds for shared-memory packet switches", IEEE/ACM
//! ToN 1998): every queue of every port draws from one pool of B bytes, and queue
//! i may grow only to T(t) = α·(B − Q(t)), where Q(t) is what the whole pool holds.
//! A lone congested queue settles at α/(1+α)·B and leaves the rest for others.
//!
//! The pool must see every byte leave, so ports using it wake at the end of every
//! transmission (see `crate::switch::port`).

use super::{Arrival, BufferParams, BufferRule};
use crate::engine::Time;
use crate::switch::queues::QueueStore;

/// The `dynamic_threshold` policy: its ports draw on their switch's [`SharedPool`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DynamicThreshold {
    /// α: a queue may grow to α times the free pool (`network.dt_alpha`).
    pub alpha: f64,
}

impl BufferRule for DynamicThreshold {
    #[inline(always)]
    fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool {
        a.pool
            .is_some_and(|p| p.admit(a.qs, a.now, a.queue, a.size))
    }

    fn configure(p: &BufferParams) -> Result<Self, (&'static str, String)> {
        if !(p.dt_alpha.is_finite() && p.dt_alpha > 0.0) {
            return Err(("dt_alpha", "expected a positive number such as 1.0".into()));
        }
        Ok(DynamicThreshold { alpha: p.dt_alpha })
    }

    fn pool_alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

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
    use crate::packet::ids::PktId;
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
