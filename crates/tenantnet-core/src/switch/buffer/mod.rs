//! Buffer management: whether an arriving packet may enter its queue.
//!
//! * [`tail_drop`]: the port buffer B is completely shared by the port's queues; a
//!   packet is dropped only when the port is full (BarberQ's "best effort").
//! * [`static_partition`]: queue i may hold at most τ_i = w_i/Σw·B (BarberQ Eq. 3,
//!   its strawman).
//! * [`barberq`]: complete sharing, but an arrival for an unsatisfied queue evicts
//!   tail packets of the longest satisfied queue (BarberQ Alg. 1).
//! * [`shared_dt`]: a switch-wide pool with Choudhury–Hahne dynamic thresholds.
//!
//! Adding one: a file with a type implementing [`BufferRule`], plus its line in the
//! `buffer_policies!` registration below.

pub mod barberq;
pub mod shared_dt;
pub mod static_partition;
pub mod tail_drop;

pub use shared_dt::SharedPool;

use crate::engine::Time;
use crate::packet::ids::PktId;
use crate::switch::queues::QueueStore;

/// What the buffer policies are configured from: the scenario's `[network]` keys
/// they read, gathered by the scenario's builder (`scenario/build/fabric.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferParams {
    /// α of the `dynamic_threshold` policy (`network.dt_alpha`).
    pub dt_alpha: f64,
}

/// What a buffer policy sees when a packet arrives at a port.
pub struct Arrival<'a, Q> {
    /// The port's queues.
    pub qs: &'a mut Q,
    /// Now.
    pub now: Time,
    /// The queue the packet is for.
    pub queue: usize,
    /// Its size, bytes.
    pub size: u32,
    /// The port buffer B, bytes.
    pub buffer: u64,
    /// Each queue's share τ_i = w_i/Σw·B. A reference to the port's vector, not a
    /// slice: making a slice reads the vector's pointer and length from its
    /// allocation, a cache miss per packet on large fabrics even under policies that
    /// never look at the shares.
    pub tau: &'a Vec<u64>,
    /// The switch-wide pool, for a port that draws on one.
    pub pool: Option<&'a SharedPool>,
    /// Packets evicted to make room, as (queue, packet): the port frees them.
    pub evicted: &'a mut Vec<(usize, PktId)>,
}

/// A buffer policy: whether an arriving packet may enter its queue.
pub trait BufferRule {
    /// Admits or refuses the arrival (evicting packets if the policy does).
    fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool;

    /// The policy configured from `[network]`'s keys, or the key (under `network.`)
    /// that is wrong and what it expected.
    fn configure(p: &BufferParams) -> Result<Self, (&'static str, String)>
    where
        Self: Sized;

    /// α of a switch-wide pool with dynamic thresholds, for a policy that draws on
    /// one (its ports then wake at every departure to return bytes to the pool).
    fn pool_alpha(&self) -> Option<f64> {
        None
    }

    /// Whether queue weights suit the policy on a `buffer`-byte port with
    /// `packet`-byte packets (an explanation if not).
    fn check_weights(&self, _weights: &[u32], _buffer: u64, _packet: u64) -> Result<(), String> {
        Ok(())
    }
}

/// The buffer policies, one line each: `Variant(Type) = "name"`. The scenario's
/// names ([`BufferPolicyKind`]), the configured policy ([`BufferPolicy`]) and the
/// port's admission dispatch are generated from it.
macro_rules! buffer_policies {
    ($($(#[$doc:meta])* $v:ident($t:ty) = $name:literal;)*) => {
        $crate::kinds::named_kinds! {
            /// A buffer policy's name in scenarios.
            BufferPolicyKind { $($(#[$doc])* $v = $name,)* }
        }

        /// A configured buffer policy.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum BufferPolicy {
            $($(#[$doc])* $v($t),)*
        }

        impl BufferPolicy {
            /// Its kind.
            pub fn kind(&self) -> BufferPolicyKind {
                match self { $(BufferPolicy::$v(_) => BufferPolicyKind::$v,)* }
            }

            /// Policy `kind` configured from `[network]`'s keys.
            pub fn configure(
                kind: BufferPolicyKind,
                p: &BufferParams,
            ) -> Result<Self, (&'static str, String)> {
                match kind { $(BufferPolicyKind::$v => Ok(BufferPolicy::$v(<$t>::configure(p)?)),)* }
            }

            /// See [`BufferRule::admit`].
            #[inline(always)]
            pub fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool {
                match self { $(BufferPolicy::$v(p) => p.admit(a),)* }
            }

            /// See [`BufferRule::pool_alpha`].
            pub fn pool_alpha(&self) -> Option<f64> {
                match self { $(BufferPolicy::$v(p) => p.pool_alpha(),)* }
            }

            /// See [`BufferRule::check_weights`].
            pub fn check_weights(&self, w: &[u32], buffer: u64, packet: u64) -> Result<(), String> {
                match self { $(BufferPolicy::$v(p) => p.check_weights(w, buffer, packet),)* }
            }
        }
    };
}

buffer_policies! {
    /// The port buffer completely shared by its queues; tail drop ("best effort").
    TailDrop(tail_drop::TailDrop) = "tail_drop";
    /// Queue i may hold at most w_i/Σw of the port buffer (BarberQ's strawman).
    StaticPartition(static_partition::StaticPartition) = "static_partition";
    /// Complete sharing with eviction from the longest satisfied queue (BarberQ Alg. 1).
    BarberQ(barberq::BarberQ) = "barberq";
    /// A switch-wide pool with Choudhury–Hahne dynamic thresholds.
    DynamicThreshold(shared_dt::DynamicThreshold) = "dynamic_threshold";
}

impl Default for BufferPolicy {
    fn default() -> Self {
        BufferPolicy::TailDrop(tail_drop::TailDrop)
    }
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
