//! The queues of one port and the bytes they hold.
//!
//! A queue's length counts its waiting packets and, while it is on the wire, the
//! packet it last sent: a packet occupies the buffer until its last bit has left
//! (as in htsim). The transmitter does not schedule an event for the end of every
//! transmission, so the end of the one in service is noticed lazily:
//! [`QueueStore::settle`] retires it, at its exact finish time, whenever the port is
//! next touched.
//!
//! Each queue integrates its length over time exactly (byte·picoseconds), updated
//! only when that queue changes, so per-queue mean occupancy costs nothing per event
//! for the queues an event does not touch.
//!
//! Two stores implement the same interface: [`QueueSet`], any number of queues, and
//! [`OneQueue`](super::fifo::OneQueue), the single FIFO that nearly every port is.
//! The port's logic is written once over [`QueueStore`] and compiled for each, so a
//! FIFO port pays nothing for the machinery it does not use.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::packet::ids::PktId;

/// Counters of one queue over the whole run.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueStats {
    /// Packets sent.
    pub tx_pkts: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Arrivals dropped by the buffer policy.
    pub drops: u64,
    /// Packets evicted from this queue to make room for others (BarberQ).
    pub evictions: u64,
    /// Packets marked CE in this queue.
    pub marks: u64,
    /// Longest length seen, bytes.
    pub max_bytes: u64,
    /// ∫ length dt in byte·picoseconds (complete after `finish`).
    pub area: u128,
}

impl QueueStats {
    /// Adds `o` into `self` (the longest length is the larger one).
    pub fn add(&mut self, o: &QueueStats) {
        self.tx_pkts += o.tx_pkts;
        self.tx_bytes += o.tx_bytes;
        self.drops += o.drops;
        self.evictions += o.evictions;
        self.marks += o.marks;
        self.area += o.area;
        self.max_bytes = self.max_bytes.max(o.max_bytes);
    }
}

/// The queues of a port, as the port's logic sees them. Queue indices are
/// `0..count()`; every mutating call is made after [`settle`](QueueStore::settle)
/// at the same time.
pub trait QueueStore {
    /// Number of queues.
    fn count(&self) -> usize;
    /// Bit i set when queue i has waiting packets.
    fn nonempty_mask(&self) -> u64;
    /// Whether any packet waits.
    fn any_waiting(&self) -> bool;
    /// The head packet of queue `i` and its size.
    fn head(&self, i: usize) -> Option<(PktId, u32)>;
    /// Size of the tail packet of queue `i` (waiting packets only).
    fn tail_size(&self, i: usize) -> Option<u32>;
    /// Bytes held by all queues at `now`, the packet on the wire included.
    fn total(&self, now: Time) -> u64;
    /// Bytes held by queue `i` at `now`, its packet on the wire included.
    fn len(&self, i: usize, now: Time) -> u64;
    /// Retires the packet on the wire if it finished by `now`; returns its bytes.
    fn settle(&mut self, now: Time) -> u64;
    /// Appends a packet to queue `i`.
    fn push(&mut self, now: Time, i: usize, id: PktId, size: u32);
    /// Takes the head of queue `i` onto the wire until `until`; returns it and
    /// whether the queue is now empty. The queue's length does not change (its head
    /// moves from waiting to the wire), so neither does its integral.
    fn start(&mut self, i: usize, until: Time) -> (PktId, bool);
    /// Puts a packet straight on the wire for queue `i` (nothing waited).
    fn start_direct(&mut self, now: Time, i: usize, size: u32, until: Time);
    /// Removes the tail of queue `i` (an eviction).
    fn evict_tail(&mut self, now: Time, i: usize) -> Option<(PktId, u32)>;
    /// Counts a drop against queue `i`.
    fn count_drop(&mut self, i: usize);
    /// Counts a CE mark in queue `i`.
    fn count_mark(&mut self, i: usize);
    /// Brings every integral up to `now` (the run may go on); returns the bytes of a
    /// transmission that ended, as [`settle`](Self::settle) does.
    fn finish(&mut self, now: Time) -> u64;
    /// Counters of queue `i`, its integral included.
    fn stats(&self, i: usize) -> QueueStats;
    /// Bytes sent by queue `i`.
    fn tx_bytes(&self, i: usize) -> u64;
    /// Waiting packets in all queues.
    fn waiting_packets(&self) -> u64;
}

/// The packet on the wire. Its bytes stay in the buffer until its last bit has left,
/// which is noticed lazily: [`retire`](OnWire::retire) at the next touch.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnWire {
    bytes: u64,
    until: Time,
}

impl OnWire {
    /// Bytes it still holds at `now`.
    #[inline(always)]
    pub fn held(&self, now: Time) -> u64 {
        if now < self.until {
            self.bytes
        } else {
            0
        }
    }

    /// Bytes it held when last seen (before any lazy retirement).
    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// If it finished by `now`, retires it and returns (finish time, bytes).
    #[inline(always)]
    pub fn retire(&mut self, now: Time) -> Option<(Time, u64)> {
        if self.bytes > 0 && self.until <= now {
            let done = (self.until, self.bytes);
            self.bytes = 0;
            return Some(done);
        }
        None
    }

    /// Puts `bytes` on the wire until `until`.
    #[inline(always)]
    pub fn start(&mut self, bytes: u64, until: Time) {
        debug_assert_eq!(self.bytes, 0, "the previous packet must have been retired");
        self.bytes = bytes;
        self.until = until;
    }
}

/// One queue of a [`QueueSet`]: waiting packets with their sizes. Laid out so that
/// what every push and transmission touches shares the first cache line.
#[derive(Default)]
#[repr(C)]
#[derive(Clone)]
struct Queue {
    fifo: VecDeque<(PktId, u32)>,
    waiting: u64,
    last_change: Time,
    area: u128,
    stats: QueueStats,
}

/// Any number of queues, and the packet in service.
#[derive(Clone)]
pub struct QueueSet {
    queues: Vec<Queue>,
    nonempty: u64,
    waiting: u64,
    svc_queue: usize,
    svc: OnWire,
}

impl QueueSet {
    /// `n` empty queues (1 to 64).
    pub fn new(n: usize) -> Self {
        assert!((1..=64).contains(&n), "1 to 64 queues per port");
        QueueSet {
            queues: (0..n).map(|_| Queue::default()).collect(),
            nonempty: 0,
            waiting: 0,
            svc_queue: 0,
            svc: OnWire::default(),
        }
    }

    /// Queue `i`'s length as its integral last saw it (no lazy retirement).
    #[inline(always)]
    fn held(&self, i: usize) -> u64 {
        self.queues[i].waiting
            + if i == self.svc_queue {
                self.svc.bytes()
            } else {
                0
            }
    }

    #[inline(always)]
    fn integrate(&mut self, i: usize, t: Time) {
        let held = self.held(i);
        let q = &mut self.queues[i];
        q.area += held as u128 * (t - q.last_change) as u128;
        q.last_change = t;
    }
}

impl QueueStore for QueueSet {
    #[inline(always)]
    fn count(&self) -> usize {
        self.queues.len()
    }

    #[inline(always)]
    fn nonempty_mask(&self) -> u64 {
        self.nonempty
    }

    #[inline(always)]
    fn any_waiting(&self) -> bool {
        self.nonempty != 0
    }

    #[inline(always)]
    fn head(&self, i: usize) -> Option<(PktId, u32)> {
        self.queues[i].fifo.front().copied()
    }

    #[inline(always)]
    fn tail_size(&self, i: usize) -> Option<u32> {
        self.queues[i].fifo.back().map(|e| e.1)
    }

    #[inline(always)]
    fn total(&self, now: Time) -> u64 {
        self.waiting + self.svc.held(now)
    }

    #[inline(always)]
    fn len(&self, i: usize, now: Time) -> u64 {
        let svc = if i == self.svc_queue {
            self.svc.held(now)
        } else {
            0
        };
        self.queues[i].waiting + svc
    }

    #[inline(always)]
    fn settle(&mut self, now: Time) -> u64 {
        match self.svc.retire(now) {
            Some((until, bytes)) => {
                // integrate up to the finish with the packet still counted
                let i = self.svc_queue;
                let q = &mut self.queues[i];
                q.area += (q.waiting + bytes) as u128 * (until - q.last_change) as u128;
                q.last_change = until;
                bytes
            }
            None => 0,
        }
    }

    #[inline]
    fn push(&mut self, now: Time, i: usize, id: PktId, size: u32) {
        self.integrate(i, now);
        let q = &mut self.queues[i];
        q.fifo.push_back((id, size));
        q.waiting += size as u64;
        self.waiting += size as u64;
        self.nonempty |= 1 << i;
        let len = self.held(i);
        let q = &mut self.queues[i];
        q.stats.max_bytes = q.stats.max_bytes.max(len);
    }

    #[inline]
    fn start(&mut self, i: usize, until: Time) -> (PktId, bool) {
        let q = &mut self.queues[i];
        let (id, size) = q.fifo.pop_front().expect("start on a non-empty queue");
        q.waiting -= size as u64;
        q.stats.tx_pkts += 1;
        q.stats.tx_bytes += size as u64;
        let empty = q.fifo.is_empty();
        if empty {
            self.nonempty &= !(1 << i);
        }
        self.waiting -= size as u64;
        self.svc_queue = i;
        self.svc.start(size as u64, until);
        (id, empty)
    }

    #[inline]
    fn start_direct(&mut self, now: Time, i: usize, size: u32, until: Time) {
        debug_assert_eq!(self.nonempty, 0);
        self.integrate(i, now);
        self.svc_queue = i;
        self.svc.start(size as u64, until);
        let q = &mut self.queues[i];
        q.stats.tx_pkts += 1;
        q.stats.tx_bytes += size as u64;
        q.stats.max_bytes = q.stats.max_bytes.max(size as u64);
    }

    fn evict_tail(&mut self, now: Time, i: usize) -> Option<(PktId, u32)> {
        self.integrate(i, now);
        let q = &mut self.queues[i];
        let (id, size) = q.fifo.pop_back()?;
        q.waiting -= size as u64;
        q.stats.evictions += 1;
        if q.fifo.is_empty() {
            self.nonempty &= !(1 << i);
        }
        self.waiting -= size as u64;
        Some((id, size))
    }

    fn count_drop(&mut self, i: usize) {
        self.queues[i].stats.drops += 1;
    }

    fn count_mark(&mut self, i: usize) {
        self.queues[i].stats.marks += 1;
    }

    fn finish(&mut self, now: Time) -> u64 {
        let released = self.settle(now);
        for i in 0..self.queues.len() {
            self.integrate(i, now);
        }
        released
    }

    fn stats(&self, i: usize) -> QueueStats {
        let q = &self.queues[i];
        QueueStats {
            area: q.area,
            ..q.stats
        }
    }

    #[inline]
    fn tx_bytes(&self, i: usize) -> u64 {
        self.queues[i].stats.tx_bytes
    }

    fn waiting_packets(&self) -> u64 {
        self.queues.iter().map(|q| q.fifo.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_integrals_and_lazy_retirement() {
        let mut qs = QueueSet::new(2);
        qs.push(0, 0, PktId(1), 100);
        qs.push(0, 1, PktId(2), 50);
        assert_eq!((qs.total(0), qs.len(0, 0), qs.len(1, 0)), (150, 100, 50));
        assert_eq!(qs.nonempty_mask(), 0b11);
        // queue 0's packet on the wire from 10 to 30
        assert_eq!(qs.start(0, 30), (PktId(1), true));
        assert_eq!(qs.nonempty_mask(), 0b10);
        assert_eq!(qs.len(0, 20), 100, "on the wire still counts");
        assert_eq!(qs.len(0, 30), 0);
        assert_eq!(qs.settle(40), 100);
        assert_eq!(qs.settle(40), 0);
        qs.finish(40);
        assert_eq!((qs.stats(0).area, qs.stats(1).area), (100 * 30, 50 * 40));
        assert_eq!(qs.evict_tail(40, 1), Some((PktId(2), 50)));
        assert_eq!(qs.stats(1).evictions, 1);
        assert!(!qs.any_waiting());
    }
}
