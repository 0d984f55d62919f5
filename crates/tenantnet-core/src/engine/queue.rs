//! The pending-event set: a calendar of short time buckets in front of a heap.
//!
//! A key is `time << 64 | counter << 32 | code`: the event time, a 32-bit insertion
//! counter and the 32-bit event code that `crate::sim::Event` packs. One unsigned
//! comparison orders events by time and, at equal times, by insertion, so a run is a
//! pure function of the scenario and seed. The counter wraps after 2^32 insertions;
//! that could only reorder events scheduled for the same picosecond more than four
//! billion insertions apart, and never affects determinism.
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

use super::heap::KeyHeap;
use super::Time;

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
    counter: u32,
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
            counter: 0,
            popped: 0,
        }
    }

    /// Schedules event `code` at time `at`.
    #[inline]
    pub fn push(&mut self, at: Time, code: u32) {
        let k = ((at as u128) << 64) | ((self.counter as u128) << 32) | code as u128;
        self.counter = self.counter.wrapping_add(1);
        self.insert(k);
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
        if let Some(k) = self.cur_heap.peek() {
            return Some(time_of(k));
        }
        if self.in_ring > 0 {
            let slot = ((self.cur + self.next_occupied()) & self.mask) as usize;
            return self.ring[slot].iter().min().map(|&k| time_of(k));
        }
        self.far.peek().map(time_of)
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
    /// event loop: once a second loop (`Sim::run_profiling_cut`'s) popped events, the
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
        loop {
            if let Some(top) = self.cur_heap.peek() {
                if time_of(top) > limit {
                    return None;
                }
                self.cur_heap.pop_min();
                self.popped += 1;
                return Some((time_of(top), top as u32));
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

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.popped
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

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(30, 1);
        q.push(10, 2);
        q.push(30, 3);
        q.push(10, 4);
        q.push(20, 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, 2), (10, 4), (20, 5), (30, 1), (30, 3)]);
        assert_eq!(q.processed(), 5);
        assert!(q.is_empty());
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::new();
        q.push(100, 1);
        q.push(50, 2);
        assert_eq!(q.pop_until(40), None);
        assert_eq!(q.peek_time(), Some(50));
        assert_eq!(q.pop_until(60), Some((50, 2)));
        assert_eq!(q.pop_until(60), None);
        q.push(70, 3); // after the last popped (50), before the pending 100
        assert_eq!(q.pop(), Some((70, 3)));
        assert_eq!(q.pop(), Some((100, 1)));
    }

    #[test]
    fn matches_a_sorted_reference_under_random_load() {
        // the default layout; a tiny ring of narrow buckets, so most events go
        // through the far heap and the ring wraps often; one bucket wider than
        // every delay below 2^30 ps, so most events stay in the current heap
        for (shift, buckets) in [(DEFAULT_SHIFT, BUCKETS), (4, 64), (6, 64), (30, 64)] {
            random_load(EventQueue::with_layout(shift, buckets));
        }
        random_load(EventQueue::for_horizon(8_200_000));
    }

    #[test]
    fn an_event_earlier_than_the_bucket_served_still_comes_first() {
        // pop_until may move the calendar past `now` before finding nothing due;
        // an event then scheduled between `now` and that bucket must come first
        let mut q = EventQueue::with_layout(10, 64);
        q.push(1 << 20, 1);
        assert_eq!(q.pop_until(5), None);
        q.push(7, 2);
        q.push(1 << 40, 3);
        q.push(6, 4);
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
        // a discrete-event workload: each pop schedules 0-3 events at or after it
        let mut rng = Rng::stream(9, "q");
        let mut reference: Vec<(Time, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        let mut push = |q: &mut EventQueue, r: &mut Vec<(Time, u64, u32)>, t: Time, code: u32| {
            q.push(t, code);
            r.push((t, seq, code));
            seq += 1;
        };
        for i in 0..50 {
            push(&mut q, &mut reference, rng.below(1000), i);
        }
        let mut now = 0;
        let mut popped = Vec::new();
        while let Some((t, code)) = q.pop() {
            assert!(t >= now);
            now = t;
            popped.push((t, code));
            if popped.len() < 20_000 {
                for _ in 0..rng.below(4) {
                    let delay = match rng.below(4) {
                        0 => 0,
                        1 => rng.below(100),
                        2 => rng.below(1 << 24),
                        _ => rng.below(1 << 40),
                    };
                    push(&mut q, &mut reference, now + delay, rng.below(1000) as u32);
                }
            }
        }
        reference.sort();
        let expect: Vec<(Time, u32)> = reference.iter().map(|&(t, _, c)| (t, c)).collect();
        assert_eq!(popped, expect);
    }
}
