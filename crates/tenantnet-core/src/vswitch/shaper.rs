//! A shaper in a host's virtual switch: a queue in front of the NIC and the token
//! bucket that paces it (MBFQ §4's microscheduler, Fig. 1(c)). A host policy
//! instantiates shapers per VM or per VM pair and sets their rates; while its bucket
//! is off a shaper passes everything through.
//!
//! A packet the bucket allows goes straight on to the NIC; otherwise it waits here
//! in arrival order. The queue pushes back instead of dropping: a TCP sender is told
//! how much room is left before it sends ([`Shaper::room`]) and is woken when a
//! departure makes room, the way a Linux socket is throttled by its qdisc (TCP
//! small queues). Only senders that cannot be told to wait (UDP) lose packets at
//! a full queue, and those drops are counted by the caller.
//!
//! The bucket counts bytes today; a packet's cost in tokens is its wire size.

use std::collections::VecDeque;

use super::token_bucket::TokenBucket;
use crate::engine::Time;
use crate::net::{FlowId, PktId, VmId};

/// Index of a shaper among all of a run's shapers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShaperId(pub u32);

impl ShaperId {
    /// As an index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }

    /// Every VM's own shaper, created for each VM before any policy's: VM `v`'s is
    /// shaper `v`.
    #[inline]
    pub fn of_vm(v: VmId) -> ShaperId {
        ShaperId(v.0)
    }
}

/// What happened to a packet offered to a shaper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// It goes on to the NIC now.
    Pass,
    /// It waits in the shaper's queue.
    Queued,
    /// The queue was full (UDP only).
    Dropped,
}

/// A queue and its token bucket.
#[derive(Clone, Debug)]
pub struct Shaper {
    /// The VM whose packets it holds.
    pub vm: VmId,
    /// Set while a wake-up event for this shaper is pending at that time.
    pub wake_at: Option<Time>,
    /// How its host serves it (its host vswitch's service).
    pub service: super::service::Service,
    queue: VecDeque<(PktId, u32)>,
    bytes: u64,
    limit: u64,
    bucket: TokenBucket,
    shaping: bool,
    requested: Option<u64>,
    cap: Option<u64>,
    blocked: VecDeque<FlowId>,
}

impl Shaper {
    /// A shaper for VM `vm` with an empty queue of `limit` bytes, a bucket of `burst`
    /// bytes at `rate_bps`, and its bucket off.
    pub fn new(vm: VmId, rate_bps: u64, limit: u64, burst: u64) -> Self {
        Shaper {
            vm,
            wake_at: None,
            service: Default::default(),
            queue: VecDeque::new(),
            bytes: 0,
            limit,
            bucket: TokenBucket::bytes(rate_bps, burst),
            shaping: false,
            requested: None,
            cap: None,
            blocked: VecDeque::new(),
        }
    }

    /// An empty shaper for the same VM, with the same queue limit, bucket depth and
    /// service, its bucket off: a policy's shaper for one of the VM's pairs.
    pub fn sibling(&self) -> Shaper {
        let mut s = Shaper::new(self.vm, self.bucket.rate(), self.limit, self.bucket.burst());
        s.service = self.service;
        s
    }

    /// The rate the bucket enforces, if it is on.
    pub fn shaping_rate(&self) -> Option<u64> {
        self.shaping.then(|| self.bucket.rate())
    }

    /// Bytes a TCP sender may still hand over before it must wait.
    #[inline]
    pub fn room(&self) -> u64 {
        if self.shaping {
            self.limit.saturating_sub(self.bytes)
        } else {
            u64::MAX
        }
    }

    /// Packets waiting.
    pub fn held(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Offers a packet of `size` wire bytes at `now`. `may_drop` is false for
    /// packets of senders that respect [`room`](Self::room) (TCP), which are always
    /// taken.
    #[inline]
    pub fn offer(&mut self, now: Time, id: PktId, size: u32, may_drop: bool) -> Offer {
        if !self.shaping {
            return Offer::Pass;
        }
        if self.queue.is_empty() && self.bucket.conform_at() <= now {
            self.bucket.take(now, size as u64);
            return Offer::Pass;
        }
        if may_drop && self.bytes + size as u64 > self.limit {
            return Offer::Dropped;
        }
        self.queue.push_back((id, size));
        self.bytes += size as u64;
        Offer::Queued
    }

    /// Takes the head packet if it may leave at `now`.
    #[inline]
    pub fn pop_ready(&mut self, now: Time) -> Option<PktId> {
        let &(id, size) = self.queue.front()?;
        if self.shaping {
            if self.bucket.conform_at() > now {
                return None;
            }
            self.bucket.take(now, size as u64);
        }
        self.queue.pop_front();
        self.bytes -= size as u64;
        Some(id)
    }

    /// When the head packet may leave, if one waits.
    pub fn next_departure(&self) -> Option<Time> {
        (!self.queue.is_empty()).then(|| {
            if self.shaping {
                self.bucket.conform_at()
            } else {
                0
            }
        })
    }

    /// Switches the bucket on at `rate_bps` (keeping its state if it was on) or,
    /// with `None`, off; a cap ([`set_cap`](Self::set_cap)) still holds.
    pub fn set_shaping(&mut self, now: Time, rate_bps: Option<u64>) {
        self.requested = rate_bps;
        self.apply(now);
    }

    /// A ceiling on the rate whatever [`set_shaping`](Self::set_shaping) asks
    /// (`None`: lifted).
    pub fn set_cap(&mut self, now: Time, cap_bps: Option<u64>) {
        self.cap = cap_bps;
        self.apply(now);
    }

    fn apply(&mut self, now: Time) {
        let rate = match (self.requested, self.cap) {
            (Some(r), Some(c)) => Some(r.min(c)),
            (r, None) => r,
            (None, c) => c,
        };
        match rate {
            Some(r) => {
                if !self.shaping {
                    self.bucket.refill(now);
                }
                self.bucket.set_rate(now, r);
                self.shaping = true;
            }
            None => self.shaping = false,
        }
    }

    /// Notes that flow `f` stopped for lack of room.
    pub fn block(&mut self, f: FlowId) {
        self.blocked.push_back(f);
    }

    /// The flow that has waited longest for room.
    pub fn first_blocked(&self) -> Option<FlowId> {
        self.blocked.front().copied()
    }

    /// Removes [`first_blocked`](Self::first_blocked) from the waiting list.
    pub fn pop_blocked(&mut self) -> Option<FlowId> {
        self.blocked.pop_front()
    }

    /// Flows waiting for room.
    pub fn blocked(&self) -> usize {
        self.blocked.len()
    }
}

/// Every shaper of a run, and the ones whose rate changed since the datapath last
/// looked (it then releases what they now allow and wakes their senders).
#[derive(Clone, Debug, Default)]
pub struct Shapers {
    list: Vec<Shaper>,
    touched: Vec<ShaperId>,
}

impl Shapers {
    /// Adds a shaper; its id.
    pub fn add(&mut self, s: Shaper) -> ShaperId {
        self.list.push(s);
        ShaperId(self.list.len() as u32 - 1)
    }

    /// Switches shaper `s`'s bucket on at `rate_bps` or off (`None`) at `now`.
    pub fn set_rate(&mut self, now: Time, s: ShaperId, rate_bps: Option<u64>) {
        self.list[s.idx()].set_shaping(now, rate_bps);
        self.touched.push(s);
    }

    /// Caps every shaper of VM `vm` at `cap_bps` (`None`: lifts the cap).
    pub fn set_cap(&mut self, now: Time, vm: VmId, cap_bps: Option<u64>) {
        for (i, s) in self.list.iter_mut().enumerate() {
            if s.vm == vm {
                s.set_cap(now, cap_bps);
                self.touched.push(ShaperId(i as u32));
            }
        }
    }

    /// Whether a shaper's rate was set since the last [`take_touched`](Self::take_touched).
    #[inline]
    pub fn any_touched(&self) -> bool {
        !self.touched.is_empty()
    }

    /// The shapers whose rate was set since the last call, in the order they were set.
    pub fn take_touched(&mut self, into: &mut Vec<ShaperId>) {
        into.clear();
        into.append(&mut self.touched);
    }

    /// Packets waiting in every shaper.
    pub fn held(&self) -> u64 {
        self.list.iter().map(|s| s.held()).sum()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

impl std::ops::Index<ShaperId> for Shapers {
    type Output = Shaper;
    #[inline]
    fn index(&self, s: ShaperId) -> &Shaper {
        &self.list[s.idx()]
    }
}

impl std::ops::IndexMut<ShaperId> for Shapers {
    #[inline]
    fn index_mut(&mut self, s: ShaperId) -> &mut Shaper {
        &mut self.list[s.idx()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    #[test]
    fn an_unshaped_shaper_passes_everything_and_has_unlimited_room() {
        let mut sh = Shaper::new(VmId(0), 1_000_000, 3000, 0);
        assert_eq!(sh.room(), u64::MAX);
        for i in 0..100 {
            assert_eq!(sh.offer(0, PktId(i), 1500, true), Offer::Pass);
        }
    }

    #[test]
    fn a_shaping_shaper_paces_queues_and_pushes_back() {
        // 12 Mb/s: one 1500-byte packet per ms; no burst beyond one packet
        let mut sh = Shaper::new(VmId(0), 12_000_000, 4500, 0);
        sh.set_shaping(0, Some(12_000_000));
        assert_eq!(sh.offer(0, PktId(0), 1500, false), Offer::Pass);
        assert_eq!(sh.offer(0, PktId(1), 1500, false), Offer::Queued);
        assert_eq!(sh.offer(0, PktId(2), 1500, false), Offer::Queued);
        assert_eq!(sh.room(), 1500);
        assert_eq!(sh.next_departure(), Some(MS));
        assert_eq!(sh.pop_ready(MS - 1), None);
        assert_eq!(sh.pop_ready(MS), Some(PktId(1)));
        assert_eq!(sh.next_departure(), Some(2 * MS));
        // TCP packets are always taken (the sender respects room); UDP is dropped
        assert_eq!(sh.offer(MS, PktId(3), 1500, false), Offer::Queued);
        assert_eq!(sh.offer(MS, PktId(4), 1500, false), Offer::Queued);
        assert_eq!(sh.room(), 0);
        assert_eq!(sh.offer(MS, PktId(5), 1500, true), Offer::Dropped);
        assert_eq!(sh.held(), 3);
        // switching the microscheduler off releases everything at once
        sh.set_shaping(MS, None);
        let out: Vec<_> = std::iter::from_fn(|| sh.pop_ready(MS)).collect();
        assert_eq!(out, vec![PktId(2), PktId(3), PktId(4)]);
    }

    #[test]
    fn a_cap_holds_over_any_rate_and_lifts() {
        let mut sh = Shaper::new(VmId(0), 1, 1500, 0);
        sh.set_cap(0, Some(1_000_000));
        assert_eq!(sh.shaping_rate(), Some(1_000_000));
        sh.set_shaping(0, Some(5_000_000));
        assert_eq!(sh.shaping_rate(), Some(1_000_000));
        sh.set_shaping(0, Some(500_000));
        assert_eq!(sh.shaping_rate(), Some(500_000));
        sh.set_cap(0, None);
        assert_eq!(sh.shaping_rate(), Some(500_000));
        sh.set_shaping(0, None);
        assert_eq!((sh.shaping_rate(), sh.room()), (None, u64::MAX));
    }

    #[test]
    fn blocked_flows_wake_in_order() {
        let mut sh = Shaper::new(VmId(0), 1, 1500, 0);
        sh.block(FlowId(4));
        sh.block(FlowId(2));
        assert_eq!(sh.first_blocked(), Some(FlowId(4)));
        assert_eq!(sh.pop_blocked(), Some(FlowId(4)));
        assert_eq!((sh.blocked(), sh.pop_blocked()), (1, Some(FlowId(2))));
    }
}
