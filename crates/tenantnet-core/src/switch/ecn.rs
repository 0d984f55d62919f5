//! ECN marking of a multi-queue port (RFC 3168 CE on ECT packets) against a
//! threshold K in bytes, with three scopes:
//!
//! * `Port`: mark when the port's occupancy exceeds K (one threshold for all queues).
//! * `Queue`: mark when the packet's own queue exceeds K (per-queue ECN, as in
//!   BarberQ §III-B: "each service queue has the same marking threshold").
//! * `Pmsb`: mark when the port exceeds K *and* the packet's queue exceeds its
//!   weighted share of it, w_i/Σw·K (PMSB, Pan et al., ICDCS 2018, "per-port
//!   marking with selective blindness"; BarberQ §III-B: 550 KB port threshold,
//!   ≈ 69 KB per-queue share with 8 equal queues).
//!
//! Where the test is made (on enqueue, or on dequeue with the packet counted) is
//! the port's [`EcnMarkPoint`].

crate::kinds::named_kinds! {
    /// Where ports apply the ECN threshold (`network.ecn_mark`).
    EcnMarkPoint {
        /// Mark an arriving packet if the occupancy it finds exceeds K (DCTCP paper).
        Enqueue = "enqueue",
        /// Mark a packet as it starts transmission if the occupancy, itself included, exceeds K.
        Dequeue = "dequeue",
        /// Mark a packet as its last bit leaves if the occupancy, itself included, exceeds K (htsim's ECNQueue).
        End = "end",
    }
}

/// ECN marking of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnConfig {
    /// Marking threshold K in bytes; `None` disables marking.
    pub threshold: Option<u64>,
    /// Where the threshold is applied.
    pub at: EcnMarkPoint,
    /// What it is compared with.
    pub scope: EcnScope,
}

crate::kinds::named_kinds! {
    /// What the ECN threshold is compared with (`network.ecn_scope`).
    EcnScope {
        /// The port's occupancy.
        Port = "port",
        /// The packet's queue's occupancy.
        Queue = "queue",
        /// PMSB: port above K and the queue above its weighted share of K.
        Pmsb = "pmsb",
    }
}

/// Whether a packet should be marked, given the occupancies it is judged against.
#[inline]
pub fn over_threshold(
    scope: EcnScope,
    k: u64,
    port: u64,
    queue: u64,
    weight: u32,
    weight_sum: u64,
) -> bool {
    match scope {
        EcnScope::Port => port > k,
        EcnScope::Queue => queue > k,
        EcnScope::Pmsb => {
            port > k && (queue as u128) * (weight_sum as u128) > (k as u128) * (weight as u128)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        assert!(over_threshold(EcnScope::Port, 100, 101, 0, 1, 8));
        assert!(!over_threshold(EcnScope::Queue, 100, 1000, 100, 1, 8));
        assert!(over_threshold(EcnScope::Queue, 100, 0, 101, 1, 8));
        // PMSB: 8 equal queues, K = 800: share 100
        assert!(!over_threshold(EcnScope::Pmsb, 800, 900, 100, 1, 8));
        assert!(over_threshold(EcnScope::Pmsb, 800, 900, 101, 1, 8));
        assert!(!over_threshold(EcnScope::Pmsb, 800, 800, 500, 1, 8));
    }
}
