//! Schedulers: which queue of a port sends next. Every one is work-conserving: it
//! returns a queue whenever any queue has a waiting packet.
//!
//! * [`strict`]: strict priority, queue 0 highest.
//! * [`wrr`]: weighted round robin, up to w_i packets per round.
//! * [`dwrr`]: deficit weighted round robin (Shreedhar–Varghese DRR), quantum·w_i
//!   bytes per round.
//! * [`wfq`]: weighted fair queueing with virtual start and finish tags (SCFQ).
//! * [`sp_dwrr`]: the first `strict` queues in strict priority above a DWRR group
//!   of the rest, the hierarchy commodity switches ship (BarberQ's macrobenchmark,
//!   Trinity).
//!
//! *Adding a scheduler:* a file here with a type implementing [`SchedulerRule`], plus
//! its line in the `schedulers!` registration below.
//!
//! Weights may change while the simulation runs (QShare rebinds every control
//! interval); a change applies from the next decision on.

pub mod dwrr;
pub mod sp_dwrr;
pub mod strict;
pub mod wfq;
pub mod wrr;

use super::queues::QueueStore;

/// What a scheduler is configured from: the port's queue weights and the scenario's
/// keys (`network.quantum`, `network.strict_queues`).
#[derive(Clone, Copy, Debug)]
pub struct SchedParams<'a> {
    /// One weight per queue.
    pub weights: &'a [u32],
    /// DWRR's bytes per unit of weight per round.
    pub quantum: u64,
    /// The strict queues of SP over DWRR.
    pub strict: usize,
}

/// A scheduler: which queue of a port sends next, told of every packet that joins,
/// leaves or is evicted.
pub trait SchedulerRule {
    /// The scheduler over the port's queues.
    fn configure(p: &SchedParams<'_>) -> Self
    where
        Self: Sized;

    /// The queue to send from next, if any packet waits.
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize>;

    /// A packet of `size` bytes joined queue `i`.
    #[inline]
    fn enqueued(&mut self, _i: usize, _size: u32) {}

    /// The head of queue `i` left; `now_empty` if the queue has no more waiting.
    #[inline]
    fn dequeued(&mut self, _i: usize, _now_empty: bool) {}

    /// The tail of queue `i` was evicted; `now_empty` if it has no more waiting.
    fn evicted(&mut self, _i: usize, _now_empty: bool) {}

    /// New weights, one per queue; a change applies from the next decision on.
    fn set_weights(&mut self, _weights: &[u32]) {}
}

/// The schedulers, one line each: `Variant(Type) = "name"`. The scenario's names
/// ([`SchedulerKind`], whose doc comment is the scenario schema's description), the
/// port's scheduler ([`Scheduler`], its state out of line so that a port stays small:
/// ports are touched in random order) and its dispatch are generated from it.
macro_rules! schedulers {
    ($($(#[$doc:meta])* $v:ident($t:ty) = $name:literal;)*) => {
        $crate::kinds::named_kinds! {
            /// Scheduler across a port's queues.
            #[schemars(rename = "SchedulerSpec")]
            SchedulerKind (default Dwrr) { $($(#[$doc])* $v = $name,)* }
        }

        /// A port's scheduler and its state.
        #[derive(Clone, Debug)]
        pub enum Scheduler {
            $($(#[$doc])* $v(Box<$t>),)*
        }

        impl Scheduler {
            fn configured(kind: SchedulerKind, p: &SchedParams<'_>) -> Self {
                match kind { $(SchedulerKind::$v => Scheduler::$v(Box::new(<$t>::configure(p))),)* }
            }

            /// See [`SchedulerRule::select`].
            #[inline]
            pub fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
                match self { $(Scheduler::$v(s) => s.select(qs),)* }
            }

            /// See [`SchedulerRule::enqueued`].
            #[inline]
            pub fn enqueued(&mut self, i: usize, size: u32) {
                match self { $(Scheduler::$v(s) => s.enqueued(i, size),)* }
            }

            /// See [`SchedulerRule::dequeued`].
            #[inline]
            pub fn dequeued(&mut self, i: usize, now_empty: bool) {
                match self { $(Scheduler::$v(s) => s.dequeued(i, now_empty),)* }
            }

            /// See [`SchedulerRule::evicted`].
            pub fn evicted(&mut self, i: usize, now_empty: bool) {
                match self { $(Scheduler::$v(s) => s.evicted(i, now_empty),)* }
            }

            /// See [`SchedulerRule::set_weights`].
            pub fn set_weights(&mut self, weights: &[u32]) {
                match self { $(Scheduler::$v(s) => s.set_weights(weights),)* }
            }
        }
    };
}

schedulers! {
    /// Strict priority, queue 0 highest.
    Strict(strict::Strict) = "strict";
    /// Weighted round robin (packets per round by weight).
    Wrr(wrr::Wrr) = "wrr";
    /// Deficit weighted round robin (bytes per round by weight).
    Dwrr(dwrr::Dwrr) = "dwrr";
    /// Weighted fair queueing (virtual start/finish tags).
    Wfq(wfq::Wfq) = "wfq";
    /// Strict-priority queues 0..strict_queues above a DWRR group of the rest.
    SpDwrr(sp_dwrr::SpDwrr) = "sp_dwrr";
}

impl Scheduler {
    /// A scheduler of `kind` over `weights.len()` queues; `quantum` is DWRR's bytes
    /// per unit of weight per round; `strict` the strict queues of SP over DWRR.
    pub fn new(kind: SchedulerKind, weights: &[u32], quantum: u64, strict: usize) -> Self {
        // one queue: nothing to share
        let kind = if weights.len() == 1 {
            SchedulerKind::Strict
        } else {
            kind
        };
        Self::configured(
            kind,
            &SchedParams {
                weights,
                quantum,
                strict,
            },
        )
    }
}
