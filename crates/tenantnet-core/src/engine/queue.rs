//! The pending-event set: a calendar of short time buckets in front of a heap.
//!
//! A key is `time << 64 | tie << 32 | code`: the event time, a 32-bit tie-break and
//! the 32-bit event code that `crate::sim::Event` packs (its kind, then the id it
//! carries). One unsigned comparison orders events by time, then by tie-break. The
//! tie-break follows the run's [`Ties`] rule:
//!
//! - [`Ties::Scheduled`]: an insertion counter, so simultaneous events
//!   come in the order they were scheduled. The counter wraps after 2^32 insertions;
//!   that could only reorder events scheduled for the same picosecond more than four
//!   billion insertions apart, and never affects determinism. A part of a partitioned
//!   network cannot compute it: it would need to know how many events the other
//!   parts have scheduled.
//! - [`Ties::Partitioned`] (the default): the rank of the [`Origin`] that scheduled the
//!   event among all origins at that time, then (from one origin) the code: kind,
//!   then id. The ranks at each instant are a permutation of the origins drawn afresh
//!   from the time and the run's seed ([`EventQueue::rank`]), so that no port wins every tie
//!   (with a fixed order, lowest port first, eight identical NewReno flows through
//!   one drop-tail queue split the link unevenly). The order of two simultaneous
//!   events then depends only on what they are, when they happen and what scheduled
//!   them, never on when they were scheduled: one part of a partitioned network,
//!   which owns its nodes' ports, orders its own events exactly as the whole run
//!   does. The ids that differ from one partitioning to another are packets' (each
//!   part keeps its own pool), and they never decide an order: one port's packets
//!   leave one at a time, each taking time, so two packet events of one kind from
//!   one port never fall on the same picosecond.
//!
//! Under either rule a run is a pure function of the scenario and seed, and an event
//! scheduled for the current time that sorts before the one being handled comes next.
//!
//! Events are popped in exactly that key order whatever the layout below (the tests
//! check it against a sorted reference), so the layout changes speed, never results.
//!
//! Layout (a calendar queue, Brown 1988, with a heap for the bucket being served, as
//! in ladder queues): time is cut into buckets of `2^shift` ps. The events of the
//! current bucket are in a small binary heap ([`KeyHeap`]); the events of the next
//! buckets (1024 by default) wait unsorted in a ring of vectors, with a bitmap of the
//! occupied ones; anything later waits in a second heap and moves into the ring when
//! the window reaches it. In a packet simulation nearly every event is scheduled
//! within one packet time plus one link delay of now, so with a window of a few
//! times that ([`EventQueue::for_horizon`]) most events are pushed once into a
//! vector and popped from a heap of a handful of keys, instead of sifting through
//! all pending events: on the k = 8 permutation the single heap this replaced
//! held about 2 500 events (12 levels) and its pops were a third of all instructions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::heap::KeyHeap;
use super::Time;

/// What scheduled an event: the run's global generators and controllers
/// ([`Origin::GLOBAL`]) or a port of the node that did ([`Origin::port`]: the port a
/// packet leaves by, or a host's NIC for the host's own timers). Simultaneous events
/// are ordered by their origins' ranks at that time, then by kind and id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin(u32);

impl Origin {
    /// The flow starts, samples, host ticks and controllers of the whole run.
    pub const GLOBAL: Origin = Origin(0);

    /// Port `i` (its index in the network).
    #[inline]
    pub fn port(i: u32) -> Origin {
        Origin(i + 1)
    }
}

/// Odd multipliers of the ranks' permutations (Fibonacci hashing's and MurmurHash3's).
const MIX_TIME: u64 = 0x9E37_79B9_7F4A_7C15;
const MIX_ORIGIN: u32 = 0x85EB_CA6B;

/// Buckets in the ring of [`EventQueue::new`] (a power of two, at least 64).
const BUCKETS: usize = 1024;
/// Bucket width of [`EventQueue::new`]: 2^16 ps = 65.5 ns, a window of 67 us.
const DEFAULT_SHIFT: u32 = 16;

/// The pending events of one simulation.
pub struct EventQueue {
    /// Events of bucket `cur` (and any pushed for an earlier time).
    cur_heap: KeyHeap,
    /// Absolute number (time >> shift) of the bucket being served.
    cur: u64,
    /// Buckets `cur + 1 ..= cur + ring.len() - 1`, at index `bucket & mask`.
    ring: Vec<Vec<u128>>,
    mask: u64,
    /// One bit per ring slot: whether it holds events.
    occupied: Vec<u64>,
    /// Events in the ring.
    in_ring: usize,
    /// Events at or after bucket `cur + ring.len()`.
    far: KeyHeap,
    shift: u32,
    /// The tie-break rule.
    ties: Ties,
    /// [`Ties::Scheduled`]'s insertion counter.
    counter: u32,
    /// Drawn from the run's seed: which permutations of the origins
    /// [`Ties::Partitioned`]'s ranks use.
    salt: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_layout(DEFAULT_SHIFT, BUCKETS)
    }
}

#[inline]
fn time_of(k: u128) -> Time {
    (k >> 64) as Time
}

/// How simultaneous events (to the picosecond) are ordered (the module's comment);
/// a scenario's `simulation.ties`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// In the order they were scheduled.
    Scheduled,
    /// By a rank of the port that scheduled them (or the run's own generators), drawn
    /// afresh at each instant from the seed, then by kind: an order each part of a
    /// partitioned network can compute, as a parallel run needs (the default).
    #[default]
    Partitioned,
}

impl EventQueue {
    /// An empty queue with the default bucket width.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty queue whose window covers about four times `horizon` ps: pass the
    /// longest time ahead that events are commonly scheduled (a packet's
    /// serialization plus its link's delay). On the permutation at k = 8 and 16,
    /// windows from 1 to 32 times the horizon ran equally fast, and so did rings of
    /// 128 to 2048 buckets; at a quarter of the horizon most events went through
    /// the far heap and the run took 30 % longer, and rings of 16 384 buckets or
    /// more were slower (the ring's vectors leave the cache).
    pub fn for_horizon(horizon: Time) -> Self {
        let width = (4 * horizon.max(1)).div_ceil(BUCKETS as u64);
        Self::with_layout(
            width.next_power_of_two().trailing_zeros().clamp(4, 40),
            BUCKETS,
        )
    }

    /// An empty queue with buckets of `2^shift` ps and a ring of `buckets`
    /// (rounded up to a power of two, at least 64).
    pub fn with_layout(shift: u32, buckets: usize) -> Self {
        let buckets = buckets.next_power_of_two().max(64);
        EventQueue {
            cur_heap: KeyHeap::default(),
            cur: 0,
            ring: (0..buckets).map(|_| Vec::new()).collect(),
            mask: buckets as u64 - 1,
            occupied: vec![0; buckets / 64],
            in_ring: 0,
            far: KeyHeap::default(),
            shift,
            ties: Ties::Scheduled,
            counter: 0,
            salt: 0,
            popped: 0,
        }
    }

    /// The queue, ordering simultaneous events by rule `ties` (with [`Ties::Partitioned`],
    /// by permutations of their origins drawn from `seed`).
    pub fn with_ties(mut self, ties: Ties, seed: u64) -> Self {
        self.ties = ties;
        self.salt = seed.wrapping_mul(MIX_TIME);
        self
    }

    /// An empty queue laid out and tied as this one (a partition's of a parallel
    /// run, or the run's once its partitions took its events).
    pub fn empty_like(&self) -> Self {
        EventQueue {
            ties: self.ties,
            salt: self.salt,
            ..Self::with_layout(self.shift, self.ring.len())
        }
    }

    /// The rank of origin `by` among all origins at time `at`: for each instant (and
    /// seed) a permutation of the origins (a multiplication by an odd constant, a
    /// bijection of u32, then an exclusive-or with bits drawn from the time and seed), so two
    /// origins never share a rank, and which of two comes first changes from instant
    /// to instant, each way about half the time.
    #[inline]
    pub fn rank(&self, at: Time, by: Origin) -> u32 {
        let x = ((at ^ self.salt).wrapping_mul(MIX_TIME) >> 32) as u32;
        by.0.wrapping_mul(MIX_ORIGIN) ^ x
    }

    /// Schedules event `code` at time `at` on behalf of `by`.
    #[inline]
    pub fn push(&mut self, at: Time, by: Origin, code: u32) {
        let tie = match self.ties {
            Ties::Scheduled => {
                let c = self.counter;
                self.counter = c.wrapping_add(1);
                c
            }
            Ties::Partitioned => self.rank(at, by),
        };
        self.insert(((at as u128) << 64) | ((tie as u128) << 32) | code as u128);
    }

    #[inline]
    fn insert(&mut self, k: u128) {
        let b = time_of(k) >> self.shift;
        if b <= self.cur {
            self.cur_heap.push(k);
        } else if b - self.cur <= self.mask {
            let slot = (b & self.mask) as usize;
            self.ring[slot].push(k);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_ring += 1;
        } else {
            self.far.push(k);
        }
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.peek_key().map(time_of)
    }

    /// Distance from `cur` to the next occupied ring bucket (1 ..= ring.len() - 1);
    /// the ring must hold an event.
    fn next_occupied(&self) -> u64 {
        debug_assert!(self.in_ring > 0);
        let start = ((self.cur + 1) & self.mask) as usize;
        let mut w = start / 64;
        let mut bits = self.occupied[w] & (!0u64 << (start % 64));
        loop {
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                return ((slot + self.ring.len() - start) as u64 & self.mask) + 1;
            }
            w = (w + 1) % self.occupied.len();
            bits = self.occupied[w];
        }
    }

    /// Moves the calendar to the next bucket that holds events; false when no event
    /// is pending. Only called with the current bucket's heap empty. Inlined into every
    /// event loop: once a second loop (`CutProfile::measure`'s) popped events, the
    /// compiler kept this, or `pop_until` with it, out of the plain loop, and the
    /// permutation took 0.9 % (or 7 %) more instructions.
    #[inline(always)]
    fn advance(&mut self) -> bool {
        debug_assert!(self.cur_heap.is_empty());
        if self.in_ring > 0 {
            self.cur += self.next_occupied();
            let slot = (self.cur & self.mask) as usize;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.in_ring -= self.ring[slot].len();
            self.cur_heap.take_from(&mut self.ring[slot]);
        } else if let Some(k) = self.far.peek() {
            self.cur = time_of(k) >> self.shift;
        } else {
            return false;
        }
        // the window now reaches further: bring in the far events it covers
        while let Some(k) = self.far.peek() {
            if (time_of(k) >> self.shift) - self.cur > self.mask {
                break;
            }
            self.far.pop_min();
            self.insert(k);
        }
        true
    }

    /// Removes and returns the earliest event as (time, code) if its time is at most
    /// `limit`; otherwise leaves the queue's events as they are. Inlined, with
    /// `advance`, into every event loop (see `advance`).
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, u32)> {
        self.pop_unless(|top| time_of(top) > limit)
    }

    /// Removes and returns the earliest event's key if it is below `bound` (the key
    /// of the first event not to process): what a partition of a parallel run
    /// processes in one window. Its time is `key >> 64`, its code `key as u32`.
    #[inline]
    pub fn pop_before(&mut self, bound: u128) -> Option<u128> {
        self.pop_key_unless(|top| top >= bound)
    }

    /// The codes of the earliest events of the bucket being served (the top of its
    /// heap and the top's children, up to three): the next event, cheaply, in nearly
    /// every case, and two likely soon after (for [`prefetch`](super::prefetch)).
    #[inline]
    pub fn peek_near(&self) -> impl Iterator<Item = u32> + '_ {
        let k = self.cur_heap.keys();
        k[..k.len().min(3)].iter().map(|&k| k as u32)
    }

    /// The key of the earliest pending event.
    pub fn peek_key(&self) -> Option<u128> {
        if let Some(k) = self.cur_heap.peek() {
            return Some(k);
        }
        if self.in_ring > 0 {
            let slot = ((self.cur + self.next_occupied()) & self.mask) as usize;
            return self.ring[slot].iter().min().copied();
        }
        self.far.peek()
    }

    /// The rule ordering simultaneous events.
    pub fn ties(&self) -> Ties {
        self.ties
    }

    #[inline(always)]
    fn pop_unless(&mut self, beyond: impl Fn(u128) -> bool) -> Option<(Time, u32)> {
        (self.pop_key_unless(beyond)).map(|top| (time_of(top), top as u32))
    }

    #[inline(always)]
    fn pop_key_unless(&mut self, beyond: impl Fn(u128) -> bool) -> Option<u128> {
        loop {
            if let Some(top) = self.cur_heap.peek() {
                if beyond(top) {
                    return None;
                }
                self.cur_heap.pop_min();
                self.popped += 1;
                return Some(top);
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// Removes and returns the earliest event as (time, code).
    pub fn pop(&mut self) -> Option<(Time, u32)> {
        self.pop_until(Time::MAX)
    }

    /// The codes of all pending events, in no particular order.
    pub fn codes(&self) -> impl Iterator<Item = u32> + '_ {
        let ring = self.ring.iter().flatten();
        let keys = self.cur_heap.keys().iter().chain(ring);
        keys.chain(self.far.keys()).map(|&k| k as u32)
    }

    /// Events popped so far (and those counted by [`count_handled`](Self::count_handled)).
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Counts an event handled without being scheduled (a host's handoff made at
    /// once, `sim::handoff`), so that the count is the same either way.
    pub fn count_handled(&mut self) {
        self.popped += 1;
    }

    /// Events still pending.
    pub fn len(&self) -> usize {
        self.cur_heap.len() + self.in_ring + self.far.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;
    use std::collections::BTreeSet;

    impl EventQueue {
        fn push_g(&mut self, at: Time, code: u32) {
            self.push(at, Origin::GLOBAL, code);
        }
    }

    /// A queue of [`Ties::Partitioned`] with `seed`.
    fn part(seed: u64) -> EventQueue {
        EventQueue::new().with_ties(Ties::Partitioned, seed)
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push_g(30, 1);
        q.push_g(10, 2);
        q.push_g(30, 3);
        q.push_g(10, 4);
        q.push_g(20, 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, 2), (10, 4), (20, 5), (30, 1), (30, 3)]);
        assert_eq!(q.processed(), 5);
        assert!(q.is_empty());
    }

    #[test]
    fn simultaneous_events_go_by_rank_then_by_code_whenever_they_were_scheduled() {
        let q0 = part(7);
        let (a, b) = (Origin::port(3), Origin::port(4));
        let first = |q: &mut EventQueue, pushes: &[(Origin, u32)]| {
            for &(by, code) in pushes {
                q.push(10, by, code);
            }
            std::iter::from_fn(|| q.pop())
                .map(|(_, c)| c)
                .collect::<Vec<_>>()
        };
        let order = first(&mut part(7), &[(b, 4), (a, 6), (b, 1), (a, 2)]);
        let again = first(&mut part(7), &[(a, 2), (b, 1), (a, 6), (b, 4)]);
        assert_eq!(order, again, "the order of scheduling does not matter");
        let (lo, hi) = if q0.rank(10, a) < q0.rank(10, b) {
            ([2, 6], [1, 4])
        } else {
            ([1, 4], [2, 6])
        };
        assert_eq!(
            order,
            [lo, hi].concat(),
            "by rank, then each origin's by code"
        );
        // an event scheduled now, for now, that sorts first comes next
        let mut q = part(7);
        q.push(20, a, 8);
        q.push(20, a, 9);
        assert_eq!(q.pop(), Some((20, 8)));
        q.push(20, a, 7);
        assert_eq!(q.pop(), Some((20, 7)));
        assert_eq!(q.pop(), Some((20, 9)));
    }

    #[test]
    fn no_origin_wins_every_tie() {
        // adjacent ports, and the global origin against a port: over 1000 instants
        // each comes first about half the time; at one instant the ranks of 1000
        // origins are distinct; another seed draws other permutations
        let q = part(1);
        for (a, b) in [
            (Origin::port(0), Origin::port(1)),
            (Origin::GLOBAL, Origin::port(5)),
        ] {
            let wins = (0..1000u64)
                .filter(|&t| q.rank(t * 1_000, a) < q.rank(t * 1_000, b))
                .count();
            assert!((400..=600).contains(&wins), "{wins} of 1000");
        }
        let ranks: BTreeSet<u32> = (0..1000).map(|i| q.rank(12_345, Origin::port(i))).collect();
        assert_eq!(ranks.len(), 1000);
        let other = part(2);
        let flips = (0..1000u64)
            .filter(|&t| {
                let (a, b) = (Origin::port(0), Origin::port(1));
                (q.rank(t, a) < q.rank(t, b)) != (other.rank(t, a) < other.rank(t, b))
            })
            .count();
        assert!((400..=600).contains(&flips), "{flips} of 1000");
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::new();
        q.push_g(100, 1);
        q.push_g(50, 2);
        assert_eq!(q.pop_until(40), None);
        assert_eq!(q.peek_time(), Some(50));
        assert_eq!(q.pop_until(60), Some((50, 2)));
        assert_eq!(q.pop_until(60), None);
        q.push_g(70, 3); // after the last popped (50), before the pending 100
        assert_eq!(q.pop(), Some((70, 3)));
        assert_eq!(q.pop(), Some((100, 1)));
    }

    #[test]
    fn matches_a_sorted_reference_under_random_load() {
        // the default layout; a tiny ring of narrow buckets, so most events go
        // through the far heap and the ring wraps often; one bucket wider than
        // every delay below 2^30 ps, so most events stay in the current heap
        for ties in [Ties::Scheduled, Ties::Partitioned] {
            for (shift, buckets) in [(DEFAULT_SHIFT, BUCKETS), (4, 64), (6, 64), (30, 64)] {
                random_load(EventQueue::with_layout(shift, buckets).with_ties(ties, 3));
            }
            random_load(EventQueue::for_horizon(8_200_000).with_ties(ties, 3));
        }
    }

    #[test]
    fn an_event_earlier_than_the_bucket_served_still_comes_first() {
        // pop_until may move the calendar past `now` before finding nothing due;
        // an event then scheduled between `now` and that bucket must come first
        let mut q = EventQueue::with_layout(10, 64);
        q.push_g(1 << 20, 1);
        assert_eq!(q.pop_until(5), None);
        q.push_g(7, 2);
        q.push_g(1 << 40, 3);
        q.push_g(6, 4);
        assert_eq!(q.peek_time(), Some(6));
        assert_eq!(q.len(), 4);
        let mut codes: Vec<u32> = q.codes().collect();
        codes.sort();
        assert_eq!(codes, vec![1, 2, 3, 4]);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(6, 4), (7, 2), (1 << 20, 1), (1 << 40, 3)]);
        assert!(q.is_empty());
    }

    fn random_load(mut q: EventQueue) {
        // a discrete-event workload: each pop schedules 0-3 events at or after it,
        // each from one of four origins; every pop must be the smallest pending
        // (time, tie-break, code) of a sorted reference: the insertion sequence or
        // the origin's rank
        let mut rng = Rng::stream(9, "q");
        let mut reference = BTreeSet::new();
        let mut seq = 0u64;
        let mut push = |q: &mut EventQueue, r: &mut BTreeSet<_>, t: Time, code: u32| {
            let o = code % 4;
            let by = if o == 0 {
                Origin::GLOBAL
            } else {
                Origin::port(o - 1)
            };
            let tie = match q.ties {
                Ties::Scheduled => seq,
                Ties::Partitioned => q.rank(t, by) as u64,
            };
            r.insert((t, tie, code));
            q.push(t, by, code);
            seq += 1;
        };
        for i in 0..50 {
            push(&mut q, &mut reference, rng.below(1000), i);
        }
        let (mut now, mut pops, mut next) = (0, 0, 50);
        while let Some((t, code)) = q.pop() {
            assert!(t >= now);
            now = t;
            let (rt, _, rc) = reference.pop_first().expect("the reference holds it");
            assert_eq!((t, code), (rt, rc), "pop {pops}");
            pops += 1;
            if pops < 20_000 {
                for _ in 0..rng.below(4) {
                    let delay = match rng.below(4) {
                        0 => 0,
                        1 => rng.below(100),
                        2 => rng.below(1 << 24),
                        _ => rng.below(1 << 40),
                    };
                    // distinct codes, as the simulation's events at one time and
                    // origin are, from a random origin
                    next += 1 + rng.below(4) as u32;
                    push(&mut q, &mut reference, now + delay, next);
                }
            }
        }
        assert!(reference.is_empty());
        assert!(pops > 20_000);
    }
}
