//! The single FIFO queue that nearly every port is: the [`QueueStore`] of a port
//! with one queue, with the same semantics as [`QueueSet`](super::QueueSet) and
//! none of its per-queue indexing. Queue indices passed to it are always 0.

use std::collections::VecDeque;

use super::queues::{OnWire, QueueStats, QueueStore};
use crate::engine::Time;
use crate::packet::ids::PktId;

/// One FIFO queue and the packet in service.
#[derive(Default)]
#[repr(C)]
#[derive(Clone)]
pub struct OneQueue {
    waiting: u64,
    svc: OnWire,
    last_change: Time,
    area: u128,
    fifo: VecDeque<(PktId, u32)>,
    stats: QueueStats,
}

impl OneQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    fn integrate(&mut self, t: Time) {
        let held = self.waiting + self.svc.bytes();
        self.area += held as u128 * (t - self.last_change) as u128;
        self.last_change = t;
    }
}

impl QueueStore for OneQueue {
    #[inline(always)]
    fn count(&self) -> usize {
        1
    }

    #[inline(always)]
    fn nonempty_mask(&self) -> u64 {
        !self.fifo.is_empty() as u64
    }

    #[inline(always)]
    fn any_waiting(&self) -> bool {
        !self.fifo.is_empty()
    }

    #[inline(always)]
    fn head(&self, _: usize) -> Option<(PktId, u32)> {
        self.fifo.front().copied()
    }

    #[inline(always)]
    fn tail_size(&self, _: usize) -> Option<u32> {
        self.fifo.back().map(|e| e.1)
    }

    #[inline(always)]
    fn total(&self, now: Time) -> u64 {
        self.waiting + self.svc.held(now)
    }

    #[inline(always)]
    fn len(&self, _: usize, now: Time) -> u64 {
        self.total(now)
    }

    #[inline(always)]
    fn settle(&mut self, now: Time) -> u64 {
        match self.svc.retire(now) {
            Some((until, bytes)) => {
                // integrate up to the finish with the packet still counted
                self.area += (self.waiting + bytes) as u128 * (until - self.last_change) as u128;
                self.last_change = until;
                bytes
            }
            None => 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, now: Time, _: usize, id: PktId, size: u32) {
        self.integrate(now);
        self.fifo.push_back((id, size));
        self.waiting += size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.waiting + self.svc.bytes());
    }

    #[inline(always)]
    fn start(&mut self, _: usize, until: Time) -> (PktId, bool) {
        let (id, size) = self.fifo.pop_front().expect("start on a non-empty queue");
        self.waiting -= size as u64;
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += size as u64;
        self.svc.start(size as u64, until);
        (id, self.fifo.is_empty())
    }

    #[inline(always)]
    fn start_direct(&mut self, now: Time, _: usize, size: u32, until: Time) {
        debug_assert!(self.fifo.is_empty());
        self.integrate(now);
        self.svc.start(size as u64, until);
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(size as u64);
    }

    fn evict_tail(&mut self, now: Time, _: usize) -> Option<(PktId, u32)> {
        self.integrate(now);
        let (id, size) = self.fifo.pop_back()?;
        self.waiting -= size as u64;
        self.stats.evictions += 1;
        Some((id, size))
    }

    fn count_drop(&mut self, _: usize) {
        self.stats.drops += 1;
    }

    fn count_mark(&mut self, _: usize) {
        self.stats.marks += 1;
    }

    fn finish(&mut self, now: Time) -> u64 {
        let released = self.settle(now);
        self.integrate(now);
        released
    }

    fn stats(&self, _: usize) -> QueueStats {
        QueueStats {
            area: self.area,
            ..self.stats
        }
    }

    #[inline]
    fn tx_bytes(&self, _: usize) -> u64 {
        self.stats.tx_bytes
    }

    fn waiting_packets(&self) -> u64 {
        self.fifo.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::queues::QueueSet;

    /// The same operations on a OneQueue and a one-queue QueueSet agree.
    #[test]
    fn agrees_with_a_single_queue_set() {
        let mut a = OneQueue::new();
        let mut b = QueueSet::new(1);
        fn run<Q: QueueStore>(q: &mut Q) -> Vec<u64> {
            let mut out = Vec::new();
            q.push(0, 0, PktId(1), 100);
            q.push(5, 0, PktId(2), 50);
            out.push(q.total(5));
            q.settle(10);
            let (id, empty) = q.start(0, 30);
            out.push(id.0 as u64 + empty as u64 * 10);
            out.push(q.total(20));
            out.push(q.settle(35));
            q.push(40, 0, PktId(3), 70);
            out.push(q.evict_tail(45, 0).map_or(0, |e| e.1 as u64));
            q.finish(60);
            let s = q.stats(0);
            out.extend([
                s.tx_bytes,
                s.evictions,
                s.max_bytes,
                s.area as u64,
                q.waiting_packets(),
            ]);
            out
        }
        assert_eq!(run(&mut a), run(&mut b));
    }
}
