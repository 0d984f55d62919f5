//! Static partition (BarberQ §II-A, Eq. 3, the strawman): queue i may hold at most
//! τ_i = w_i/Σw·B. It guarantees each queue its share of the buffer, and so of the
//! bandwidth, but is not work-conserving: a lone active queue can never use more
//! than τ_i, which may be less than a bandwidth-delay product.

use crate::engine::Time;
use crate::switch::queues::QueueStore;

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
