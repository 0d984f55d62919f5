//! A port's ECN marking (RFC 3168 CE marking of ECT packets) with threshold K in
//! bytes, scope as in [`crate::switch::ecn`], at one of three points
//! ([`EcnMarkPoint`](crate::switch::ecn::EcnMarkPoint)), chosen per scenario:
//! * `Enqueue`: mark an arriving packet if the occupancy it finds
//!   exceeds K (DCTCP, SIGCOMM 2010, §3.1: "the queue occupancy is greater than K
//!   upon its arrival").
//! * `Dequeue`: mark a packet when it starts transmission if the
//!   occupancy, itself included, exceeds K.
//! * `End`: mark a packet when its last bit leaves if the
//!   occupancy then, itself included, exceeds K: htsim's `ECNQueue` tests K in
//!   `completeService`, so packets that arrived during the serialization count.
//!   The packet is still travelling to the peer (links must have a delay), and a
//!   port wakes at that instant only when a packet waits; when none does, the
//!   packet is alone at its end and was judged so when it started.

use super::PortCore;
use crate::engine::Time;
use crate::packet::ids::PktId;
use crate::packet::{flags, Packet};
use crate::switch::ecn::{over_threshold, EcnScope};
use crate::switch::queues::QueueStore;

impl PortCore {
    /// Marks `pkt` (of queue `i`) CE if the occupancy it is judged against, plus
    /// `extra` bytes, exceeds the threshold. Occupancies are read only when a mark
    /// is possible, and the queue's only when the scope needs it.
    #[inline(always)]
    pub(super) fn mark_if_over<Q: QueueStore>(
        &mut self,
        qs: &mut Q,
        pkt: &mut Packet,
        i: usize,
        now: Time,
        extra: u64,
    ) {
        let Some(k) = self.ecn.threshold else { return };
        if !pkt.has(flags::ECT) || pkt.has(flags::CE) {
            return;
        }
        let port = qs.total(now) + extra;
        let queue = match self.ecn.scope {
            EcnScope::Port => 0,
            _ => qs.len(i, now) + extra,
        };
        self.mark_if(qs, pkt, i, k, (port, queue));
    }

    /// Marks `pkt` (of queue `i`) CE if occupancies `(port, queue)` exceed K.
    #[inline(always)]
    fn mark_if<Q: QueueStore>(
        &self,
        qs: &mut Q,
        pkt: &mut Packet,
        i: usize,
        k: u64,
        (port, queue): (u64, u64),
    ) {
        // the weights only where PMSB weighs the queue's share: they are out of line,
        // a cache miss a packet on large fabrics
        let (w, sum) = match self.ecn.scope {
            EcnScope::Pmsb => (self.shares.weights[i], self.shares.sum),
            _ => (1, 1),
        };
        if over_threshold(self.ecn.scope, k, port, queue, w, sum) {
            pkt.flags |= flags::CE;
            qs.count_mark(i);
        }
    }

    /// A packet starts serialization under [`EcnMarkPoint::End`]: it is remembered
    /// for its end, and judged as if alone (all it will be if nothing arrives while
    /// it is sent, when the port does not wake at its end).
    #[inline(always)]
    pub(super) fn start_end_marking<Q: QueueStore>(
        &mut self,
        qs: &mut Q,
        pkt: &mut Packet,
        (id, i): (PktId, usize),
        size: u64,
    ) {
        self.wire = (id, i);
        let Some(k) = self.ecn.threshold else { return };
        if pkt.has(flags::ECT) && !pkt.has(flags::CE) {
            self.mark_if(qs, pkt, i, k, (size, size));
        }
    }
}
