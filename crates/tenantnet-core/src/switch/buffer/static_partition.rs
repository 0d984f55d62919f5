//! Static partition (BarberQ §II-A, Eq. 3, the strawman): queue i may hold at most
//! τ_i = w_i/Σw·B. It guarantees each queue its share of the buffer, and so of the
//! bandwidth, but is not work-conserving: a lone active queue can never use more
//! than τ_i, which may be less than a bandwidth-delay product.

use super::{Arrival, BufferParams, BufferRule};
use crate::engine::Time;
use crate::switch::queues::QueueStore;

/// The `static_partition` policy.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StaticPartition;

impl BufferRule for StaticPartition {
    #[inline(always)]
    fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool {
        admit(a.qs, a.now, a.queue, a.size, a.tau[a.queue])
    }

    fn configure(_: &BufferParams) -> Result<Self, (&'static str, String)> {
        Ok(StaticPartition)
    }

    fn check_weights(&self, weights: &[u32], buffer: u64, packet: u64) -> Result<(), String> {
        if shares_fit(weights, buffer, packet) {
            return Ok(());
        }
        Err(format!(
            "weights {weights:?} leave a queue a static share of the {buffer}-byte buffer smaller than one full-size packet ({packet} bytes)"
        ))
    }
}

/// Whether every queue's share τ_i of a `buffer`-byte port under `weights` holds
/// at least one `packet`-byte packet (else that queue could never admit one).
pub fn shares_fit(weights: &[u32], buffer: u64, packet: u64) -> bool {
    super::weighted_shares(weights, buffer)
        .iter()
        .all(|&tau| tau >= packet)
}

/// Whether a packet of `size` bytes fits queue `i` under its share `tau`.
#[inline]
pub fn admit<Q: QueueStore>(qs: &Q, now: Time, i: usize, size: u32, tau: u64) -> bool {
    qs.len(i, now) + size as u64 <= tau
}
