//! Packets and the pool they live in. A packet is 48 bytes of plain data; slots are
//! recycled through a free list, so the hot path never allocates. The bottom of the
//! datapath: the ids every element indexes by and the packet every element moves.

pub mod ids;

use crate::engine::Time;
use ids::{FlowId, HostId, NodeId, PairId, PktId, NO_PAIR};

/// Packet flag bits.
pub mod flags {
    /// A pure acknowledgement (no payload).
    pub const ACK: u8 = 1;
    /// ECN-capable transport (ECT(0)), RFC 3168.
    pub const ECT: u8 = 2;
    /// Congestion experienced, set by a marking queue.
    pub const CE: u8 = 4;
    /// ECN-echo, set by a receiver in an ACK.
    pub const ECE: u8 = 8;
    /// Payload retransmitted by the sender.
    pub const RETX: u8 = 16;
    /// A host-to-host control packet of a host policy; it belongs to no flow and
    /// carries a [`ControlPayload`](super::ControlPayload).
    pub const CONTROL: u8 = 32;
    /// An ACK that retraces its flow's data path (`network.ack_path = "symmetric"`).
    pub const PINNED: u8 = 64;
    /// Data counted against its sender's TCP-small-queues limit until its last bit
    /// leaves its host's NIC (`transport.limit_output_bytes`).
    pub const TSQ: u8 = 128;
}

/// One packet in flight.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Data: sequence number of the first payload byte. ACK: cumulative ACK number.
    pub seq: u64,
    /// Data: time the sender sent it. ACK: the echoed send time (RFC 7323 TSecr).
    pub ts: Time,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// The host it is routed to.
    pub dst: HostId,
    /// The node the packet is travelling to (set when a port transmits it).
    pub at: NodeId,
    /// Size on the wire, headers included, in bytes.
    pub size: u32,
    /// Data: payload bytes. ACK: its SACK option's handle plus one, 0 for none
    /// (`crate::sim::sack_store`). Control: part of its [`ControlPayload`].
    pub len: u32,
    /// ECMP hash of the packet's flow and direction.
    pub hash: u32,
    /// Its directed VM pair ([`NO_PAIR`] when neither end is a VM),
    /// so host policies see sender and receiver without a lookup by flow.
    pub pair: PairId,
    /// `flags::*` bits.
    pub flags: u8,
    /// Differentiated-services code point (0–63).
    pub dscp: u8,
    /// The rate epoch of the two-colour shaper that released it red (Trinity's
    /// `refined` profile counts a cut per epoch; 0 elsewhere). Fits the struct's
    /// padding: a packet stays 48 bytes.
    pub epoch: u16,
}

impl Default for Packet {
    fn default() -> Self {
        Packet {
            seq: 0,
            ts: 0,
            flow: FlowId::default(),
            dst: HostId::default(),
            at: NodeId::default(),
            size: 0,
            len: 0,
            hash: 0,
            pair: NO_PAIR,
            flags: 0,
            dscp: 0,
            epoch: 0,
        }
    }
}

impl Packet {
    /// Whether flag bit `f` is set.
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// A control packet carrying `payload` (its other fields at their defaults).
    pub fn control(payload: ControlPayload) -> Self {
        let (seq, ts, len) = match payload {
            ControlPayload::Offer { offer } => (offer, 0, 1),
            ControlPayload::Feedback { word, offer } => (word, offer, 0),
        };
        Packet {
            seq,
            ts,
            len,
            flow: FlowId(u32::MAX),
            flags: flags::CONTROL,
            ..Default::default()
        }
    }

    /// What a control packet carries; `None` for any other packet.
    #[inline]
    pub fn control_payload(&self) -> Option<ControlPayload> {
        if !self.has(flags::CONTROL) {
            return None;
        }
        Some(match self.len {
            1 => ControlPayload::Offer { offer: self.seq },
            _ => ControlPayload::Feedback {
                word: self.seq,
                offer: self.ts,
            },
        })
    }
}

/// What a host policy's control packet says. A control packet has no payload
/// bytes, no flow and no send time, so the packet keeps the message in its `seq`,
/// `ts` and `len` (a packet stays 48 bytes); [`Packet::control`] and
/// [`Packet::control_payload`] are the only code that knows where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlPayload {
    /// A sender's message about the pair it travels on: its offer for the pair's
    /// guarantee, bit/s (ElasticSwitch's guarantee partitioning).
    Offer {
        /// The sender's offer, bit/s.
        offer: u64,
    },
    /// A receiver's feedback about the reverse of the pair it travels on.
    Feedback {
        /// The receiver's counts (`vswitch::channels::RxCounts`' words).
        word: u64,
        /// The receiver's offer for the pair's guarantee, bit/s (`u64::MAX`: none).
        offer: u64,
    },
}

/// The arena of packets. It grows to the most packets alive at once; past `cap`
/// slots it still grows but raises [`over_cap`](Self::over_cap), which the
/// simulation checks after every event to stop a run that outgrows its memory
/// budget.
#[derive(Clone)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: u64,
    cap: usize,
    over_cap: bool,
}

/// Largest number of packets alive at once (event codes carry 27-bit ids).
pub const MAX_LIVE_PACKETS: usize = 1 << 27;

impl Default for PacketPool {
    fn default() -> Self {
        PacketPool::with_cap(MAX_LIVE_PACKETS)
    }
}

impl PacketPool {
    /// An empty pool that raises [`over_cap`](Self::over_cap) past `cap` slots.
    pub fn with_cap(cap: usize) -> Self {
        PacketPool {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            cap: cap.min(MAX_LIVE_PACKETS),
            over_cap: false,
        }
    }

    /// Whether the pool has grown past its cap.
    #[inline]
    pub fn over_cap(&self) -> bool {
        self.over_cap
    }

    /// Slots allocated (the most packets alive at once so far).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Stores `p` and returns its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PktId(i)
        } else {
            self.grow(p)
        }
    }

    #[cold]
    fn grow(&mut self, p: Packet) -> PktId {
        if self.slots.len() >= self.cap {
            self.over_cap = true;
        }
        // the simulation stops at `cap`, which is below this limit by far more than
        // one event can allocate
        assert!(
            self.slots.len() < MAX_LIVE_PACKETS,
            "more than {MAX_LIVE_PACKETS} packets in flight"
        );
        self.slots.push(p);
        PktId(self.slots.len() as u32 - 1)
    }

    /// Releases a packet's slot.
    #[inline]
    pub fn free(&mut self, id: PktId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id.0);
    }

    /// Packets currently alive (queued, in service or on a link).
    pub fn live(&self) -> u64 {
        self.live
    }
}

impl PacketPool {
    /// Packet `id`, if its slot exists (for a hint, which must not panic).
    #[inline]
    pub fn get(&self, id: PktId) -> Option<&Packet> {
        self.slots.get(id.idx())
    }

    /// Hints the processor to load packet `id` (no-op for an id not allocated).
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        if let Some(p) = self.get(id) {
            crate::engine::prefetch::prefetch(p);
        }
    }
}

impl std::ops::Index<PktId> for PacketPool {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PktId) -> &Packet {
        &self.slots[id.idx()]
    }
}

impl std::ops::IndexMut<PktId> for PacketPool {
    #[inline]
    fn index_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.idx()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_packet_gives_back_the_payload_it_was_made_with() {
        for payload in [
            ControlPayload::Offer { offer: 7_000_000 },
            ControlPayload::Feedback {
                word: 42,
                offer: u64::MAX,
            },
            ControlPayload::Feedback { word: 1, offer: 0 },
        ] {
            let p = Packet::control(payload);
            assert!(p.has(flags::CONTROL));
            assert_eq!(p.control_payload(), Some(payload));
        }
        assert_eq!(Packet::default().control_payload(), None);
    }

    #[test]
    fn slots_are_recycled() {
        let mut pool = PacketPool::default();
        let a = pool.alloc(Packet {
            seq: 1,
            ..Default::default()
        });
        let b = pool.alloc(Packet {
            seq: 2,
            ..Default::default()
        });
        assert_eq!(pool.live(), 2);
        pool.free(a);
        let c = pool.alloc(Packet {
            seq: 3,
            ..Default::default()
        });
        assert_eq!(c, a);
        assert_eq!(pool[c].seq, 3);
        assert_eq!(pool[b].seq, 2);
        assert_eq!(pool.live(), 2);
        assert_eq!(std::mem::size_of::<Packet>(), 48);
    }

    #[test]
    fn growing_past_the_cap_is_flagged_not_fatal() {
        let mut pool = PacketPool::with_cap(2);
        let a = pool.alloc(Packet::default());
        pool.alloc(Packet::default());
        assert!(!pool.over_cap());
        pool.free(a);
        pool.alloc(Packet::default()); // a recycled slot: no growth
        assert!(!pool.over_cap());
        pool.alloc(Packet::default());
        assert!(pool.over_cap());
        assert_eq!((pool.slots(), pool.live()), (3, 3));
    }
}
