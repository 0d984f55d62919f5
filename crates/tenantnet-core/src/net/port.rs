//! An output port: a tail-drop FIFO with a byte limit, the transmitter that
//! serializes one packet at a time onto the outgoing link, and ECN marking.
//!
//! **Occupancy** counts every byte the port holds: packets waiting and the packet
//! being serialized, which leaves the buffer only when its last bit is on the wire
//! (as in htsim, where a packet is dequeued at the end of its service).
//!
//! **Serialization** is exact: a back-to-back train of packets finishes at
//! `start + floor(Σ bits·10¹² / rate)` picoseconds, because the remainder of each
//! division is carried into the next packet; there is no per-packet rounding drift.
//!
//! **Events.** A port schedules a wake-up (`TxDone`) only when a packet waits behind
//! the one being sent. A packet that finds the port idle starts at once and the only
//! event it causes is its arrival at the far end (`Admit::Transmit`), so an
//! uncongested hop costs one event per packet rather than two.
//!
//! **ECN** (RFC 3168 CE marking of ECT packets) with threshold K in bytes, at one of
//! two points, chosen per scenario:
//! * [`EcnMarkPoint::Enqueue`]: mark an arriving packet if the occupancy it finds
//!   exceeds K (DCTCP, SIGCOMM 2010, §3.1: "the queue occupancy is greater than K
//!   upon its arrival").
//! * [`EcnMarkPoint::Dequeue`]: mark a packet when it starts transmission if the
//!   occupancy, itself included, exceeds K (htsim's `ECNQueue` marks on dequeue).

use std::collections::VecDeque;

use super::ids::{NodeId, PktId};
use super::packet::{flags, Packet, PacketPool};
use crate::engine::{Time, PS_PER_SEC};

/// Where a port applies its ECN threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EcnMarkPoint {
    /// When the packet arrives at the queue.
    #[default]
    Enqueue,
    /// When the packet starts transmission.
    Dequeue,
}

/// ECN marking of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnConfig {
    /// Marking threshold K in bytes; `None` disables marking.
    pub threshold: Option<u64>,
    /// Where the threshold is applied.
    pub at: EcnMarkPoint,
}

/// Buffer and marking configuration of one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// Tail-drop limit on the port's occupancy, in bytes.
    pub buffer: u64,
    /// ECN marking.
    pub ecn: EcnConfig,
}

/// Counters of one port over the whole run.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    /// Packets transmitted onto the link.
    pub tx_pkts: u64,
    /// Bytes transmitted onto the link.
    pub tx_bytes: u64,
    /// Packets dropped because the buffer was full.
    pub drops: u64,
    /// Packets marked CE here.
    pub marks: u64,
    /// ∫ occupancy dt, in byte·picoseconds.
    pub area: u128,
    /// Largest occupancy seen, in bytes.
    pub max_bytes: u64,
}

/// What happened to a packet offered to a port.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// The buffer was full; the caller frees the packet.
    Dropped,
    /// The port was idle: the packet is on the wire and reaches the peer at this time.
    Transmit(Time),
    /// The packet waits; if `Some`, the caller schedules the port's wake-up then.
    Queued(Option<Time>),
}

/// One direction of a link, with the queue in front of it.
pub struct Port {
    /// The node that owns this port.
    pub node: NodeId,
    /// The node at the other end of the link.
    pub peer: NodeId,
    /// Link rate in bit/s.
    pub rate_bps: u64,
    /// Propagation delay in picoseconds.
    pub delay: Time,
    /// Buffer and marking configuration.
    pub cfg: PortConfig,
    /// Counters.
    pub stats: PortStats,
    fifo: VecDeque<PktId>,
    queued_bytes: u64,
    in_service: u64,
    busy_until: Time,
    remainder: u64,
    wake_pending: bool,
    last_change: Time,
}

impl Port {
    /// A port of `node` sending to `peer` over a link of `rate_bps` and `delay`.
    pub fn new(node: NodeId, peer: NodeId, rate_bps: u64, delay: Time, cfg: PortConfig) -> Self {
        Port {
            node,
            peer,
            rate_bps,
            delay,
            cfg,
            stats: PortStats::default(),
            fifo: VecDeque::new(),
            queued_bytes: 0,
            in_service: 0,
            busy_until: 0,
            remainder: 0,
            wake_pending: false,
            last_change: 0,
        }
    }

    /// Bytes held at `now` (waiting plus being serialized).
    #[inline]
    pub fn occupancy(&self, now: Time) -> u64 {
        self.queued_bytes
            + if now < self.busy_until {
                self.in_service
            } else {
                0
            }
    }

    /// Packets waiting behind the one being serialized.
    pub fn waiting(&self) -> usize {
        self.fifo.len()
    }

    /// Brings the occupancy integral up to `now`, retiring a finished transmission
    /// that no event observed (the last packet of a busy period).
    #[inline]
    fn settle(&mut self, now: Time) {
        let mut held = self.queued_bytes + self.in_service;
        if self.in_service > 0 && self.busy_until <= now {
            self.stats.area += held as u128 * (self.busy_until - self.last_change) as u128;
            self.last_change = self.busy_until;
            self.in_service = 0;
            held = self.queued_bytes;
        }
        self.stats.area += held as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    /// Puts `pkt` on the wire at `now` (the port is idle); returns when it reaches the peer.
    #[inline]
    fn begin_tx(&mut self, now: Time, pkt: &mut Packet) -> Time {
        let carry = if now == self.busy_until {
            self.remainder
        } else {
            0
        };
        let bits_ps = pkt.size as u64 * 8 * PS_PER_SEC + carry;
        self.busy_until = now + bits_ps / self.rate_bps;
        self.remainder = bits_ps % self.rate_bps;
        self.in_service = pkt.size as u64;
        if self.cfg.ecn.at == EcnMarkPoint::Dequeue {
            self.mark_if_over(pkt, self.queued_bytes + pkt.size as u64);
        }
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += pkt.size as u64;
        pkt.at = self.peer;
        self.busy_until + self.delay
    }

    #[inline]
    fn mark_if_over(&mut self, pkt: &mut Packet, occupancy: u64) {
        if let Some(k) = self.cfg.ecn.threshold {
            if occupancy > k && pkt.has(flags::ECT) && !pkt.has(flags::CE) {
                pkt.flags |= flags::CE;
                self.stats.marks += 1;
            }
        }
    }

    /// Offers packet `id` to the port at `now`.
    #[inline]
    pub fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Admit {
        self.settle(now);
        let held = self.queued_bytes + self.in_service;
        let size = pkt.size as u64;
        if held + size > self.cfg.buffer {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        if self.cfg.ecn.at == EcnMarkPoint::Enqueue {
            self.mark_if_over(pkt, held);
        }
        self.stats.max_bytes = self.stats.max_bytes.max(held + size);
        if self.fifo.is_empty() && now >= self.busy_until {
            return Admit::Transmit(self.begin_tx(now, pkt));
        }
        self.fifo.push_back(id);
        self.queued_bytes += size;
        if self.wake_pending {
            Admit::Queued(None)
        } else {
            self.wake_pending = true;
            Admit::Queued(Some(self.busy_until))
        }
    }

    /// The port's wake-up at `now`: the packet on the wire has finished, so start the
    /// next. Returns the packet started, when it reaches the peer, and when to wake
    /// the port again (if more packets wait).
    #[inline]
    pub fn tx_done(&mut self, now: Time, pool: &mut PacketPool) -> (PktId, Time, Option<Time>) {
        debug_assert_eq!(now, self.busy_until);
        self.wake_pending = false;
        self.settle(now);
        let id = self
            .fifo
            .pop_front()
            .expect("port woken with an empty queue");
        let pkt = &mut pool[id];
        self.queued_bytes -= pkt.size as u64;
        let arrive = self.begin_tx(now, pkt);
        let wake = if self.fifo.is_empty() {
            None
        } else {
            self.wake_pending = true;
            Some(self.busy_until)
        };
        (id, arrive, wake)
    }

    /// Closes the occupancy integral at the end of the run.
    pub fn finish(&mut self, now: Time) {
        self.settle(now);
    }

    /// Packets waiting in the port (for the conservation check). The packet being
    /// serialized is not counted: its arrival at the peer is already an event.
    pub fn held_packets(&self) -> u64 {
        self.fifo.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(buffer: u64, k: Option<u64>, at: EcnMarkPoint) -> Port {
        let cfg = PortConfig {
            buffer,
            ecn: EcnConfig { threshold: k, at },
        };
        Port::new(NodeId(0), NodeId(1), 10_000_000_000, 1_000_000, cfg)
    }

    fn pkt(pool: &mut PacketPool, size: u32) -> PktId {
        pool.alloc(Packet {
            size,
            flags: flags::ECT,
            ..Default::default()
        })
    }

    #[test]
    fn idle_port_transmits_at_once_and_queues_behind() {
        let mut pool = PacketPool::default();
        let mut p = port(100_000, None, EcnMarkPoint::Enqueue);
        let a = pkt(&mut pool, 1500);
        // 1500 B at 10 Gb/s = 1.2 us, plus 1 us propagation
        assert_eq!(p.enqueue(0, a, &mut pool[a]), Admit::Transmit(2_200_000));
        assert_eq!(pool[a].at, NodeId(1));
        let b = pkt(&mut pool, 1500);
        assert_eq!(
            p.enqueue(100, b, &mut pool[b]),
            Admit::Queued(Some(1_200_000))
        );
        let c = pkt(&mut pool, 1500);
        assert_eq!(p.enqueue(200, c, &mut pool[c]), Admit::Queued(None));
        assert_eq!(p.occupancy(200), 4500);
        assert_eq!(
            p.tx_done(1_200_000, &mut pool),
            (b, 3_400_000, Some(2_400_000))
        );
        assert_eq!(p.tx_done(2_400_000, &mut pool), (c, 4_600_000, None));
        assert_eq!(p.occupancy(3_000_000), 1500);
        assert_eq!(p.occupancy(3_600_000), 0);
        p.finish(4_000_000);
        // area: 1500 B for [0,100], 3000 for [100,200], 4500 until 1.2us, 3000 until 2.4us, 1500 until 3.6us
        let expect = 1500u128 * 100
            + 3000 * 100
            + 4500 * (1_200_000 - 200)
            + 3000 * 1_200_000
            + 1500 * 1_200_000;
        assert_eq!(p.stats.area, expect);
        assert_eq!(p.stats.tx_pkts, 3);
    }

    #[test]
    fn serialization_is_exact_over_a_train() {
        // 3 Gb/s: 1500 B = 4 us exactly; 1 B = 2666.67 ps, so carry matters.
        let cfg = PortConfig {
            buffer: 1 << 30,
            ecn: EcnConfig::default(),
        };
        let mut p = Port::new(NodeId(0), NodeId(1), 3_000_000_000, 0, cfg);
        let mut pool = PacketPool::default();
        let first = pkt(&mut pool, 1);
        assert!(matches!(
            p.enqueue(0, first, &mut pool[first]),
            Admit::Transmit(_)
        ));
        let mut wake = None;
        for _ in 0..2999 {
            let id = pkt(&mut pool, 1);
            if let Admit::Queued(Some(w)) = p.enqueue(0, id, &mut pool[id]) {
                wake = Some(w);
            }
        }
        let mut t = wake.unwrap();
        let mut last_arrival = 0;
        loop {
            let (_, arrive, next) = p.tx_done(t, &mut pool);
            last_arrival = last_arrival.max(arrive);
            match next {
                Some(n) => t = n,
                None => break,
            }
        }
        // 3000 bytes at 3 Gb/s take exactly 8 us.
        assert_eq!(last_arrival, 8_000_000);
    }

    #[test]
    fn tail_drop_at_the_byte_limit() {
        let mut pool = PacketPool::default();
        let mut p = port(3000, None, EcnMarkPoint::Enqueue);
        let ids: Vec<_> = (0..3).map(|_| pkt(&mut pool, 1500)).collect();
        assert!(matches!(
            p.enqueue(0, ids[0], &mut pool[ids[0]]),
            Admit::Transmit(_)
        ));
        assert!(matches!(
            p.enqueue(0, ids[1], &mut pool[ids[1]]),
            Admit::Queued(_)
        ));
        assert_eq!(p.enqueue(0, ids[2], &mut pool[ids[2]]), Admit::Dropped);
        assert_eq!(p.stats.drops, 1);
    }

    #[test]
    fn marks_on_enqueue_above_k() {
        let mut pool = PacketPool::default();
        let mut p = port(100_000, Some(3000), EcnMarkPoint::Enqueue);
        let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500)).collect();
        for &id in &ids {
            p.enqueue(0, id, &mut pool[id]);
        }
        // occupancies found: 0, 1500, 3000, 4500 -> only the last exceeds K
        let marked: Vec<bool> = ids.iter().map(|&i| pool[i].has(flags::CE)).collect();
        assert_eq!(marked, vec![false, false, false, true]);
        assert_eq!(p.stats.marks, 1);
    }

    #[test]
    fn marks_on_dequeue_with_itself_counted() {
        let mut pool = PacketPool::default();
        let mut p = port(100_000, Some(3000), EcnMarkPoint::Dequeue);
        let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500)).collect();
        for &id in &ids {
            p.enqueue(0, id, &mut pool[id]);
        }
        // at each start the queue holds: 1500 (first, alone), then 4500, 3000, 1500
        let mut t = 1_200_000;
        while let (_, _, Some(n)) = p.tx_done(t, &mut pool) {
            t = n;
        }
        let marked: Vec<bool> = ids.iter().map(|&i| pool[i].has(flags::CE)).collect();
        assert_eq!(marked, vec![false, true, false, false]);
    }
}
