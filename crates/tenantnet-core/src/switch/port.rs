//! An output port: its queues (a [`QueueStore`]), the scheduler that picks which
//! queue sends next, the buffer policy that admits (or evicts) packets, ECN
//! marking, and the transmitter that serializes one packet at a time onto the
//! outgoing link. A single queue with tail drop is the plain FIFO port.
//!
//! The port's logic ([`PortCore`]) is written once, generic over the queue store,
//! and compiled twice: for a single [`OneQueue`] and for a [`QueueSet`]. A FIFO port
//! therefore runs the same code as an eight-queue port with every per-queue
//! decision folded away at compile time.
//!
//! **Occupancy** counts every byte the port holds: packets waiting and the packet
//! being serialized, which leaves the buffer when its last bit is on the wire (as in
//! htsim, where a packet is dequeued at the end of its service).
//!
//! **Serialization** is exact: a back-to-back train of packets finishes at
//! `start + floor(Σ bits·10¹² / rate)` picoseconds, because the remainder of each
//! division is carried into the next packet; there is no per-packet rounding drift.
//!
//! **Events.** A port schedules a wake-up (`TxDone`) only when a packet waits behind
//! the one being sent, so a packet that finds the port idle costs one event (its
//! arrival at the far end). Ports drawing on a switch-wide shared pool are *eager*:
//! they also wake when the last packet of a busy period finishes, because the pool
//! must see its bytes leave on time.
//!
//! **ECN** marking (the threshold, its scope and the instant it is tested) is in
//! `switch/port/marking.rs`.

use super::buffer::{weighted_shares, Arrival, BufferPolicy, SharedPool};
pub use super::ecn::{EcnConfig, EcnMarkPoint};
use super::queues::{QueueSet, QueueStats, QueueStore};
use super::sched::{Scheduler, SchedulerKind};
use super::OneQueue;
use crate::engine::{Time, PS_PER_SEC};
use crate::packet::ids::{NodeId, PktId};
use crate::packet::PacketPool;

/// Queues and scheduling of one port.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// One weight per queue (the number of queues is their count).
    pub weights: Vec<u32>,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// DWRR bytes per unit of weight per round.
    pub quantum: u64,
    /// Strict-priority queues of SP over DWRR.
    pub strict: usize,
}

impl QueueConfig {
    /// One FIFO queue.
    pub fn fifo() -> Self {
        QueueConfig {
            weights: vec![1],
            scheduler: SchedulerKind::Strict,
            quantum: 1500,
            strict: 0,
        }
    }
}

/// Buffer, queues, scheduling and marking of one port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// Port buffer B in bytes (per-port policies).
    pub buffer: u64,
    /// ECN marking.
    pub ecn: EcnConfig,
    /// Queues and scheduler.
    pub queues: QueueConfig,
    /// Buffer management.
    pub policy: BufferPolicy,
}

impl PortConfig {
    /// A FIFO port with a tail-drop limit of `buffer` bytes.
    pub fn fifo(buffer: u64, ecn: EcnConfig) -> Self {
        PortConfig {
            buffer,
            ecn,
            queues: QueueConfig::fifo(),
            policy: BufferPolicy::default(),
        }
    }
}

/// Counters of one port over the whole run (sums of its queues' counters, except
/// the largest occupancy, which is the port's own).
pub type PortStats = QueueStats;

/// What happened to a packet offered to a port.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// The buffer policy refused it; the caller frees the packet.
    Dropped,
    /// The port was idle: the packet is on the wire and reaches the peer at
    /// `arrive`; an eager port also asks to be woken at `wake`.
    Transmit {
        /// Arrival at the peer.
        arrive: Time,
        /// The port's wake-up, if it needs one.
        wake: Option<Time>,
    },
    /// The packet waits; if `Some`, the caller schedules the port's wake-up then.
    Queued(Option<Time>),
}

/// Queue weights and what derives from them, kept out of line (used when marking
/// and by weighted buffer policies, not on every packet of a plain FIFO).
#[derive(Clone)]
struct Shares {
    weights: Vec<u32>,
    sum: u64,
    /// τ_i = w_i/Σw · B.
    tau: Vec<u64>,
}

impl Shares {
    fn new(weights: &[u32], buffer: u64) -> Self {
        Shares {
            weights: weights.to_vec(),
            sum: weights.iter().map(|&w| w as u64).sum(),
            tau: weighted_shares(weights, buffer),
        }
    }
}

/// Everything of a port but its queues: the link, the transmitter, and the
/// policies that act on the queues. Its methods are generic over the queue store.
#[derive(Clone)]
pub struct PortCore {
    busy_until: Time,
    remainder: u64,
    /// The rate it sends at, bit/s: its link's, or its clock's (`Port::clocked`).
    pub rate_bps: u64,
    /// Propagation delay in picoseconds.
    pub delay: Time,
    buffer: u64,
    /// Largest occupancy seen, in bytes.
    pub max_bytes: u64,
    /// The node at the other end of the link.
    pub peer: NodeId,
    /// The node that owns this port.
    pub node: NodeId,
    /// Index of the switch-wide pool this port draws on, if any.
    pub pool: Option<u32>,
    ecn: EcnConfig,
    policy: BufferPolicy,
    wake_pending: bool,
    /// The packet being serialized and its queue (for marking at its end).
    wire: (PktId, usize),
    sched: Scheduler,
    shares: Box<Shares>,
}

#[derive(Clone)]

enum Store {
    One(OneQueue),
    Many(QueueSet),
}

/// One direction of a link, with the queues in front of it.
#[derive(Clone)]
pub struct Port {
    /// The link, transmitter and policies.
    pub core: PortCore,
    store: Store,
    /// The link's rate as the scenario set it, bit/s: what the port is configured
    /// and reported by. It sends at `core.rate_bps`, which `network.clock_ppm` sets a
    /// few parts per million off it ([`Port::clocked`]).
    nominal_bps: u64,
}

impl Port {
    /// A port of `node` sending to `peer` over a link of `rate_bps` and `delay`.
    pub fn new(node: NodeId, peer: NodeId, rate_bps: u64, delay: Time, cfg: &PortConfig) -> Self {
        let q = &cfg.queues;
        let store = if q.weights.len() == 1 {
            Store::One(OneQueue::new())
        } else {
            Store::Many(QueueSet::new(q.weights.len()))
        };
        let core = PortCore {
            busy_until: 0,
            remainder: 0,
            rate_bps,
            delay,
            buffer: cfg.buffer,
            max_bytes: 0,
            peer,
            node,
            pool: None,
            ecn: cfg.ecn,
            policy: cfg.policy,
            wake_pending: false,
            wire: (PktId(0), 0),
            sched: Scheduler::new(q.scheduler, &q.weights, q.quantum, q.strict),
            shares: Box::new(Shares::new(&q.weights, cfg.buffer)),
        };
        Port {
            core,
            store,
            nominal_bps: rate_bps,
        }
    }

    /// This port with its clock off its link's rate: it sends at `clock_bps`
    /// (`network.clock_ppm`), while [`rate_bps`](Self::rate_bps), by which guarantees,
    /// loads, ideal completion times and utilisation are reckoned, stays the link's.
    pub fn clocked(mut self, clock_bps: u64) -> Self {
        self.core.rate_bps = clock_bps;
        self
    }

    /// The node that owns this port.
    #[inline]
    pub fn node(&self) -> NodeId {
        self.core.node
    }

    /// The node at the other end of the link.
    #[inline]
    pub fn peer(&self) -> NodeId {
        self.core.peer
    }

    /// The link's rate in bit/s, as the scenario set it (see [`Port::clocked`]).
    pub fn rate_bps(&self) -> u64 {
        self.nominal_bps
    }

    /// Propagation delay of the link.
    pub fn delay(&self) -> Time {
        self.core.delay
    }

    /// When the packet it is sending ends (in the past when it is idle): no packet can
    /// go on its wire before then.
    pub fn busy_until(&self) -> Time {
        self.core.busy_until
    }

    /// The port buffer B, bytes.
    pub fn buffer(&self) -> u64 {
        self.core.buffer
    }

    /// Index of the switch-wide pool this port draws on, if any.
    #[inline]
    pub fn pool(&self) -> Option<u32> {
        self.core.pool
    }

    fn queues(&self) -> &dyn QueueStore {
        match &self.store {
            Store::One(q) => q,
            Store::Many(q) => q,
        }
    }

    /// Number of queues.
    #[inline]
    pub fn queue_count(&self) -> usize {
        self.shares_weights().len()
    }

    fn shares_weights(&self) -> &[u32] {
        &self.core.shares.weights
    }

    /// The queue weights.
    pub fn weights(&self) -> &[u32] {
        self.shares_weights()
    }

    /// Whether only its own wake-ups (see [`Port::wake_due_by`]) and packets
    /// joining it change the port: not one on a shared pool, whose wakes at every
    /// departure also free the pool's bytes; and, unless `waiting`, with no packet
    /// waiting.
    pub fn self_contained(&self, waiting: bool) -> bool {
        self.pool().is_none() && (waiting || self.held_packets() == 0)
    }

    /// When the port's pending wake-up is due, if one is, at or before `t`.
    pub fn wake_due_by(&self, t: Time) -> Option<Time> {
        (self.core.wake_pending && self.core.busy_until <= t).then_some(self.core.busy_until)
    }

    /// Bytes held at `now` (waiting plus being serialized).
    pub fn occupancy(&self, now: Time) -> u64 {
        self.queues().total(now)
    }

    /// Bytes queue `i` holds at `now`.
    pub fn queue_occupancy(&self, i: usize, now: Time) -> u64 {
        self.queues().len(i, now)
    }

    /// Counters of queue `i` (occupancy integral complete after `finish`).
    pub fn queue_stats(&self, i: usize) -> QueueStats {
        self.queues().stats(i)
    }

    /// Bytes queue `i` has sent.
    pub fn queue_tx_bytes(&self, i: usize) -> u64 {
        self.queues().tx_bytes(i)
    }

    /// Totals over the run (occupancy integral complete after `finish`).
    pub fn stats(&self) -> PortStats {
        let q = self.queues();
        let mut t = PortStats::default();
        for i in 0..q.count() {
            t.add(&q.stats(i));
        }
        t.max_bytes = self.core.max_bytes;
        t
    }

    /// Bytes transmitted so far.
    #[inline]
    pub fn tx_bytes(&self) -> u64 {
        let q = self.queues();
        (0..q.count()).map(|i| q.tx_bytes(i)).sum()
    }

    /// Sets new queue weights: the scheduler's, and the buffer and marking shares
    /// that derive from them. Fails if the port has a single queue, if the count
    /// differs or a weight is 0, or if under static partitioning a queue's share of
    /// the buffer would be smaller than `packet` bytes (the rule a scenario's
    /// `network.weights` obey).
    pub fn set_weights(&mut self, weights: &[u32], packet: u64) -> Result<(), String> {
        if self.queue_count() == 1 {
            return Err(
                "the port has a single queue (network.queues = 1); weights apply to ports with 2 or more queues".into(),
            );
        }
        if weights.len() != self.queue_count() || weights.contains(&0) {
            return Err(format!(
                "expected {} weights, each at least 1, got {weights:?}",
                self.queue_count()
            ));
        }
        self.core
            .policy
            .check_weights(weights, self.core.buffer, packet)?;
        self.core.sched.set_weights(weights);
        *self.core.shares = Shares::new(weights, self.core.buffer);
        Ok(())
    }

    /// Offers packet `id` to queue `queue` at `now`. `pool` is the switch's shared
    /// pool when the port draws on one; packets the buffer policy evicts to make
    /// room are appended to `evicted`, with their queues, for the caller to free.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Time,
        id: PktId,
        queue: usize,
        pkts: &mut PacketPool,
        pool: Option<&mut SharedPool>,
        evicted: &mut Vec<(usize, PktId)>,
    ) -> Admit {
        let core = &mut self.core;
        match &mut self.store {
            Store::One(q) => core.enqueue(q, now, id, queue, pkts, pool, evicted),
            Store::Many(q) => core.enqueue(q, now, id, queue, pkts, pool, evicted),
        }
    }

    /// The port's wake-up at `now`: the packet on the wire has finished. Starts the
    /// next one, if any waits, returning it and when it reaches the peer; and says
    /// when to wake the port again. A wake-up from before the current transmission
    /// (possible only for eager ports) is stale and changes nothing.
    #[inline]
    pub fn tx_done(
        &mut self,
        now: Time,
        pkts: &mut PacketPool,
        pool: Option<&mut SharedPool>,
    ) -> (Option<(PktId, Time)>, Option<Time>) {
        let core = &mut self.core;
        match &mut self.store {
            Store::One(q) => core.tx_done(q, now, pkts, pool),
            Store::Many(q) => core.tx_done(q, now, pkts, pool),
        }
    }

    /// Brings the occupancy integrals up to `now`, for results; the run may go on.
    /// A port on a shared pool returns its released bytes to `pool`.
    pub fn finish(&mut self, now: Time, pool: Option<&mut SharedPool>) {
        let released = match &mut self.store {
            Store::One(q) => q.finish(now),
            Store::Many(q) => q.finish(now),
        };
        if let Some(p) = pool {
            p.used -= released;
        }
    }

    /// Packets waiting in the port (for the conservation check). The packet being
    /// serialized is not counted: its arrival at the peer is already an event.
    pub fn held_packets(&self) -> u64 {
        self.queues().waiting_packets()
    }
}

impl PortCore {
    /// Whether the port must wake at every departure (it draws on a shared pool).
    #[inline(always)]
    fn eager(&self) -> bool {
        self.pool.is_some()
    }

    /// Serializes `size` bytes from `now`: sets when the wire is free again. Exact in
    /// `u64`: scenarios keep packets within `MAX_PACKET` bytes and rates within
    /// `MAX_RATE_BPS`, so `size · 8 · 10^12 + carry` < 6·10^17.
    #[inline(always)]
    fn serialize(&mut self, now: Time, size: u64) {
        debug_assert!(
            size <= crate::units::MAX_PACKET && self.rate_bps <= crate::units::MAX_RATE_BPS
        );
        let carry = if now == self.busy_until {
            self.remainder
        } else {
            0
        };
        let bits_ps = size * 8 * PS_PER_SEC + carry;
        self.busy_until = now + bits_ps / self.rate_bps;
        self.remainder = bits_ps % self.rate_bps;
    }

    /// Starts the next packet the scheduler picks (the port is idle at `now` and a
    /// packet waits); returns it and its arrival time at the peer.
    #[inline(always)]
    fn start_next<Q: QueueStore>(
        &mut self,
        qs: &mut Q,
        now: Time,
        pkts: &mut PacketPool,
    ) -> (PktId, Time) {
        let i = if qs.count() == 1 {
            0
        } else {
            self.sched.select(qs).expect("a packet waits")
        };
        let (id, size) = qs.head(i).expect("selected queue has a head");
        self.serialize(now, size as u64);
        match self.ecn.at {
            // judged with the packet still counted in its queue
            EcnMarkPoint::Dequeue => self.mark_if_over(qs, &mut pkts[id], i, now, 0),
            EcnMarkPoint::End => self.start_end_marking(qs, &mut pkts[id], (id, i), size as u64),
            EcnMarkPoint::Enqueue => {}
        }
        let (_, empty) = qs.start(i, self.busy_until);
        if qs.count() > 1 {
            self.sched.dequeued(i, empty);
        }
        pkts[id].at = self.peer;
        (id, self.busy_until + self.delay)
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn enqueue<Q: QueueStore>(
        &mut self,
        qs: &mut Q,
        now: Time,
        id: PktId,
        queue: usize,
        pkts: &mut PacketPool,
        mut pool: Option<&mut SharedPool>,
        evicted: &mut Vec<(usize, PktId)>,
    ) -> Admit {
        let released = qs.settle(now);
        if let Some(p) = pool.as_deref_mut() {
            p.used -= released;
        }
        let i = if qs.count() == 1 {
            0
        } else {
            queue.min(qs.count() - 1)
        };
        let size = pkts[id].size;
        let before = evicted.len();
        let admitted = self.policy.admit(Arrival {
            qs,
            now,
            queue: i,
            size,
            buffer: self.buffer,
            tau: &self.shares.tau,
            pool: pool.as_deref(),
            evicted,
        });
        if evicted.len() > before {
            for &(j, _) in &evicted[before..] {
                self.sched.evicted(j, qs.head(j).is_none());
            }
        }
        if !admitted {
            qs.count_drop(i);
            return Admit::Dropped;
        }
        if let Some(p) = pool {
            p.used += size as u64;
        }
        if self.ecn.at == EcnMarkPoint::Enqueue {
            self.mark_if_over(qs, &mut pkts[id], i, now, 0);
        }
        self.max_bytes = self.max_bytes.max(qs.total(now) + size as u64);
        if !qs.any_waiting() && now >= self.busy_until {
            // idle: straight onto the wire (any scheduler would pick it); judged at
            // dequeue with itself counted, in an otherwise empty port
            match self.ecn.at {
                EcnMarkPoint::Dequeue => self.mark_if_over(qs, &mut pkts[id], i, now, size as u64),
                EcnMarkPoint::End => {
                    self.start_end_marking(qs, &mut pkts[id], (id, i), size as u64)
                }
                EcnMarkPoint::Enqueue => {}
            }
            self.serialize(now, size as u64);
            qs.start_direct(now, i, size, self.busy_until);
            pkts[id].at = self.peer;
            let wake = self.eager().then(|| {
                self.wake_pending = true;
                self.busy_until
            });
            return Admit::Transmit {
                arrive: self.busy_until + self.delay,
                wake,
            };
        }
        qs.push(now, i, id, size);
        if qs.count() > 1 {
            self.sched.enqueued(i, size);
        }
        if self.wake_pending {
            Admit::Queued(None)
        } else {
            self.wake_pending = true;
            Admit::Queued(Some(self.busy_until))
        }
    }

    #[inline(always)]
    fn tx_done<Q: QueueStore>(
        &mut self,
        qs: &mut Q,
        now: Time,
        pkts: &mut PacketPool,
        pool: Option<&mut SharedPool>,
    ) -> (Option<(PktId, Time)>, Option<Time>) {
        if now < self.busy_until {
            // stale: an eager port restarted since this wake was scheduled (a packet
            // arrived at the very instant the wire freed); the current wake stands
            return (None, None);
        }
        self.wake_pending = false;
        let released = qs.settle(now);
        if let Some(p) = pool {
            p.used -= released;
        }
        if self.ecn.at == EcnMarkPoint::End {
            // the packet that just finished, judged with what arrived meanwhile
            let (id, i) = self.wire;
            let size = pkts[id].size as u64;
            self.mark_if_over(qs, &mut pkts[id], i, now, size);
        }
        if !qs.any_waiting() {
            return (None, None);
        }
        let started = self.start_next(qs, now, pkts);
        let wake = (qs.any_waiting() || self.eager()).then(|| {
            self.wake_pending = true;
            self.busy_until
        });
        (Some(started), wake)
    }
}

mod marking;
#[cfg(test)]
mod tests;
