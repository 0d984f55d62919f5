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
//!
//! A shaper may instead be a Trinity channel ([`Shaper::two_colour`]): a priority
//! lane and a second, red bucket, colouring what it releases
//! (`vswitch/two_colour.rs`).

use std::collections::VecDeque;

use super::token_bucket::TokenBucket;
use super::two_colour::{Colour, Lane, TwoColour};
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
    /// It goes on to the NIC now, in this colour if the shaper colours packets.
    Pass(Option<Colour>),
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
    queue: VecDeque<(PktId, u32)>,
    bytes: u64,
    limit: u64,
    bucket: TokenBucket,
    shaping: bool,
    requested: Option<u64>,
    cap: Option<u64>,
    blocked: VecDeque<FlowId>,
    /// The priority lane and red bucket of a two-colour shaper.
    colours: Option<Box<TwoColour>>,
}

impl Shaper {
    /// A shaper for VM `vm` with an empty queue of `limit` bytes, a bucket of `burst`
    /// bytes at `rate_bps`, and its bucket off.
    pub fn new(vm: VmId, rate_bps: u64, limit: u64, burst: u64) -> Self {
        Shaper {
            vm,
            wake_at: None,
            queue: VecDeque::new(),
            bytes: 0,
            limit,
            bucket: TokenBucket::bytes(rate_bps, burst),
            shaping: false,
            requested: None,
            cap: None,
            blocked: VecDeque::new(),
            colours: None,
        }
    }

    /// A two-colour shaper (a Trinity channel) for VM `vm`: its green bucket at
    /// `green_bps` and red bucket at `red_bps`, each of `burst` bytes and full, a
    /// queue limit of `limit` bytes per lane; `priority_below` and `dscp` as in
    /// [`TwoColour`]. Its buckets are always on.
    pub fn two_colour(
        vm: VmId,
        (green_bps, red_bps): (u64, u64),
        (limit, burst): (u64, u64),
        priority_below: u64,
        dscp: [u8; 2],
    ) -> Self {
        let mut s = Shaper::new(vm, green_bps, limit, burst);
        s.shaping = true;
        s.requested = Some(green_bps);
        s.colours = Some(Box::new(TwoColour::new(
            red_bps,
            burst,
            priority_below,
            dscp,
        )));
        s
    }

    /// Sets the colour-transition delay τ of a two-colour shaper.
    pub fn with_tau(mut self, tau: Time) -> Self {
        if let Some(c) = self.colours.as_deref_mut() {
            c.tau = tau;
        }
        self
    }

    /// The queue limit, bytes (per lane).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The priority lane and red bucket, if this is a two-colour shaper.
    #[inline]
    pub fn colours(&self) -> Option<&TwoColour> {
        self.colours.as_deref()
    }

    /// Sets R_W of a two-colour shaper at `now` (nothing for a plain one).
    pub fn set_red_rate(&mut self, now: Time, bps: u64) {
        if let Some(c) = self.colours.as_deref_mut() {
            c.set_red_rate(now, bps);
        }
    }

    /// The lane a packet joins: the priority lane for TCP data whose last byte
    /// (`end`, its offset in the flow) is below the shaper's threshold, when it has
    /// one; otherwise the normal lane.
    #[inline]
    pub fn lane_of(&self, tcp_data_end: Option<u64>) -> Lane {
        match (self.colours.as_deref(), tcp_data_end) {
            (Some(c), Some(end)) if end < c.priority_below => Lane::Priority,
            _ => Lane::Normal,
        }
    }
    /// An empty shaper for the same VM, with the same queue limit and bucket depth,
    /// its bucket off: a policy's shaper for one of the VM's pairs.
    pub fn sibling(&self) -> Shaper {
        Shaper::new(self.vm, self.bucket.rate(), self.limit, self.bucket.burst())
    }

    /// The rate the bucket enforces, if it is on.
    pub fn shaping_rate(&self) -> Option<u64> {
        self.shaping.then(|| self.bucket.rate())
    }

    /// Bytes a TCP sender may still hand over before it must wait.
    #[inline]
    pub fn room(&self) -> u64 {
        self.room_in(Lane::Normal)
    }

    /// Bytes a TCP sender may still hand over to `lane` before it must wait.
    #[inline]
    pub fn room_in(&self, lane: Lane) -> u64 {
        if !self.shaping {
            return u64::MAX;
        }
        let held = match (lane, self.colours.as_deref()) {
            (Lane::Priority, Some(c)) => c.priority_bytes(),
            _ => self.bytes,
        };
        self.limit.saturating_sub(held)
    }

    /// Packets waiting.
    pub fn held(&self) -> u64 {
        self.queue.len() as u64 + self.colours.as_ref().map_or(0, |c| c.priority_len() as u64)
    }

    /// Offers a packet of `size` wire bytes at `now`. `may_drop` is false for
    /// packets of senders that respect [`room`](Self::room) (TCP), which are always
    /// taken.
    #[inline]
    pub fn offer(&mut self, now: Time, id: PktId, size: u32, may_drop: bool) -> Offer {
        self.offer_in(now, id, size, may_drop, Lane::Normal)
    }

    /// Offers a packet to `lane` (see [`offer`](Self::offer)).
    #[inline]
    pub fn offer_in(
        &mut self,
        now: Time,
        id: PktId,
        size: u32,
        may_drop: bool,
        lane: Lane,
    ) -> Offer {
        if !self.shaping {
            return Offer::Pass(None);
        }
        if self.colours.is_some() {
            return self.offer_coloured(now, (id, size), may_drop, lane);
        }
        if self.queue.is_empty() && self.bucket.conform_at() <= now {
            self.bucket.take(now, size as u64);
            return Offer::Pass(None);
        }
        if may_drop && self.bytes + size as u64 > self.limit {
            return Offer::Dropped;
        }
        self.queue.push_back((id, size));
        self.bytes += size as u64;
        Offer::Queued
    }

    /// A two-colour shaper's offer: the packet leaves at once, coloured, if its lane
    /// is empty and a token of a colour it may spend is there.
    fn offer_coloured(
        &mut self,
        now: Time,
        (id, size): (PktId, u32),
        may_drop: bool,
        lane: Lane,
    ) -> Offer {
        let c = self.colours.as_deref().expect("a two-colour shaper");
        let empty = match lane {
            Lane::Priority => c.priority_empty(),
            Lane::Normal => self.queue.is_empty(),
        };
        if empty {
            if let Some(colour) = self.colour_now(now, lane) {
                self.spend(now, colour, size);
                return Offer::Pass(Some(colour));
            }
        }
        if may_drop && self.room_in(lane) < size as u64 {
            return Offer::Dropped;
        }
        match lane {
            Lane::Priority => self
                .colours
                .as_deref_mut()
                .expect("two colours")
                .push_priority(id, size),
            Lane::Normal => {
                self.queue.push_back((id, size));
                self.bytes += size as u64;
            }
        }
        Offer::Queued
    }

    /// The colour a packet at the head of `lane` would leave in at `now`, if it may
    /// leave: green from the priority lane; from the normal lane green while the
    /// priority lane is empty, else red.
    fn colour_now(&self, now: Time, lane: Lane) -> Option<Colour> {
        let c = self.colours.as_deref()?;
        match lane {
            Lane::Priority => (self.bucket.conform_at() <= now).then_some(Colour::Green),
            Lane::Normal if c.priority_empty() && self.green_at(c) <= now => Some(Colour::Green),
            Lane::Normal => (c.red_at() <= now).then_some(Colour::Red),
        }
    }

    /// When the normal lane may next send green (τ included).
    #[inline]
    fn green_at(&self, c: &TwoColour) -> Time {
        c.green_after(self.bucket.conform_at(), self.bucket.full_at())
    }

    /// Spends `size` bytes of `colour`'s tokens.
    fn spend(&mut self, now: Time, colour: Colour, size: u32) {
        let c = self.colours.as_deref_mut().expect("two colours");
        match colour {
            Colour::Green => self.bucket.take(now, size as u64),
            Colour::Red => c.take_red(now, size),
        }
        c.count(colour, size);
    }

    /// Takes the next packet that may leave at `now`, with its colour if the shaper
    /// colours packets.
    #[inline]
    pub fn pop_ready(&mut self, now: Time) -> Option<(PktId, Option<Colour>)> {
        if self.colours.is_some() {
            return self.pop_coloured(now);
        }
        let &(id, size) = self.queue.front()?;
        if self.shaping {
            if self.bucket.conform_at() > now {
                return None;
            }
            self.bucket.take(now, size as u64);
        }
        self.queue.pop_front();
        self.bytes -= size as u64;
        Some((id, None))
    }

    /// A two-colour shaper's next packet: the priority lane's head on green tokens,
    /// else the normal lane's on green (priority lane empty) or red tokens.
    fn pop_coloured(&mut self, now: Time) -> Option<(PktId, Option<Colour>)> {
        let c = self.colours.as_deref()?;
        if let Some((id, size)) = c.priority_head() {
            if self.colour_now(now, Lane::Priority).is_some() {
                self.spend(now, Colour::Green, size);
                self.colours.as_deref_mut()?.pop_priority();
                return Some((id, Some(Colour::Green)));
            }
        }
        let &(id, size) = self.queue.front()?;
        let colour = self.colour_now(now, Lane::Normal)?;
        self.spend(now, colour, size);
        self.queue.pop_front();
        self.bytes -= size as u64;
        Some((id, Some(colour)))
    }

    /// When a two-colour shaper's next packet may leave, if one waits.
    fn next_coloured(&self, c: &TwoColour) -> Option<Time> {
        let green = self.bucket.conform_at();
        let short = (!c.priority_empty()).then_some(green);
        let long = (!self.queue.is_empty()).then(|| {
            if c.priority_empty() {
                self.green_at(c).min(c.red_at())
            } else {
                c.red_at()
            }
        });
        match (short, long) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When the head packet may leave, if one waits.
    pub fn next_departure(&self) -> Option<Time> {
        if let Some(c) = self.colours.as_deref() {
            return self.next_coloured(c);
        }
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

    /// Puts flows that still wait back at the head of the waiting list, in the
    /// order given (they keep their place ahead of those that waited less).
    pub fn block_first(&mut self, fs: &[FlowId]) {
        for &f in fs.iter().rev() {
            self.blocked.push_front(f);
        }
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

    /// Sets R_W of two-colour shaper `s` at `now`.
    pub fn set_red_rate(&mut self, now: Time, s: ShaperId, bps: u64) {
        self.list[s.idx()].set_red_rate(now, bps);
        self.touched.push(s);
    }

    /// Starts a new red epoch on two-colour shaper `s` (its red packets carry it).
    pub fn next_epoch(&mut self, s: ShaperId) {
        if let Some(c) = self.list[s.idx()].colours.as_deref_mut() {
            c.epoch = c.epoch.wrapping_add(1);
        }
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
            assert_eq!(sh.offer(0, PktId(i), 1500, true), Offer::Pass(None));
        }
    }

    #[test]
    fn a_shaping_shaper_paces_queues_and_pushes_back() {
        // 12 Mb/s: one 1500-byte packet per ms; no burst beyond one packet
        let mut sh = Shaper::new(VmId(0), 12_000_000, 4500, 0);
        sh.set_shaping(0, Some(12_000_000));
        assert_eq!(sh.offer(0, PktId(0), 1500, false), Offer::Pass(None));
        assert_eq!(sh.offer(0, PktId(1), 1500, false), Offer::Queued);
        assert_eq!(sh.offer(0, PktId(2), 1500, false), Offer::Queued);
        assert_eq!(sh.room(), 1500);
        assert_eq!(sh.next_departure(), Some(MS));
        assert_eq!(sh.pop_ready(MS - 1), None);
        assert_eq!(sh.pop_ready(MS), Some((PktId(1), None)));
        assert_eq!(sh.next_departure(), Some(2 * MS));
        // TCP packets are always taken (the sender respects room); UDP is dropped
        assert_eq!(sh.offer(MS, PktId(3), 1500, false), Offer::Queued);
        assert_eq!(sh.offer(MS, PktId(4), 1500, false), Offer::Queued);
        assert_eq!(sh.room(), 0);
        assert_eq!(sh.offer(MS, PktId(5), 1500, true), Offer::Dropped);
        assert_eq!(sh.held(), 3);
        // switching the microscheduler off releases everything at once
        sh.set_shaping(MS, None);
        let out: Vec<_> = std::iter::from_fn(|| sh.pop_ready(MS).map(|r| r.0)).collect();
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
