//! Buffer management: whether an arriving packet may enter its queue.
//!
//! * `TailDrop`: the port buffer B is completely shared by the port's queues; a
//!   packet is dropped only when the port is full (BarberQ's "best effort").
//! * [`static_partition`]: queue i may hold at most τ_i = w_i/Σw·B (BarberQ Eq. 3,
//!   its strawman).
//! * [`barberq`]: complete sharing, but an arrival for an unsatisfied queue evicts
//!   tail packets of the longest satisfied queue (BarberQ Alg. 1).
//! * [`shared_dt`]: a switch-wide pool with Choudhury–Hahne dynamic thresholds.

pub mod barberq;
pub mod shared_dt;
pub mod static_partition;

pub use shared_dt::SharedPool;

/// Buffer-policy kinds, as scenarios name them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferPolicy {
    /// Complete sharing of the port buffer, tail drop.
    TailDrop,
    /// Per-queue static shares of the port buffer.
    StaticPartition,
    /// BarberQ eviction over a completely shared port buffer.
    BarberQ,
    /// Dynamic thresholds over a switch-wide pool, with parameter α.
    DynamicThreshold {
        /// α: a queue may grow to α times the free pool.
        alpha: f64,
    },
}

/// τ_i = w_i/Σw · B for every queue (BarberQ Eq. 3), rounded down.
pub fn weighted_shares(weights: &[u32], buffer: u64) -> Vec<u64> {
    let sum: u64 = weights.iter().map(|&w| w as u64).sum();
    weights
        .iter()
        .map(|&w| (buffer as u128 * w as u128 / sum.max(1) as u128) as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shares_follow_weights() {
        assert_eq!(
            super::weighted_shares(&[1, 1, 2], 1000),
            vec![250, 250, 500]
        );
        assert_eq!(super::weighted_shares(&[1; 8], 1_000_000), vec![125_000; 8]);
    }
}
