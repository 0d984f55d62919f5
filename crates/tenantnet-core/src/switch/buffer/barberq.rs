//! BarberQ (Kim and Lee, IEEE Communications Letters 2019), Algorithm 1.
//!
//! The port buffer B is completely shared by the port's queues, as with best
//! effort. When an arrival P for queue i would overflow it (line 1) and queue i is
//! *unsatisfied*, holding less than its share τ_i = w_i/Σw·B even with P
//! (line 2: size(P) + q_i < τ_i), the switch picks as victim the longest
//! *satisfied* queue j, q_j ≥ τ_j (lines 3–8), and evicts its tail packets until P
//! fits (lines 9–14); it stops, and drops P instead, rather than push q_j below τ_j
//! (lines 10–11). An overflowing arrival for a satisfied queue is dropped (line 16).
//!
//! Choices where the pseudocode is silent: q counts the packet on the wire, which
//! cannot be evicted, so a victim with nothing waiting cannot give room and the
//! arrival is dropped; with no satisfied queue at all the arrival is dropped; ties
//! in length go to the lower-numbered queue (the linear search of line 4 keeps the
//! first maximum).

use super::{Arrival, BufferParams, BufferRule};
use crate::engine::Time;
use crate::packet::ids::PktId;
use crate::switch::queues::QueueStore;

/// The `barberq` policy.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BarberQ;

impl BufferRule for BarberQ {
    #[inline(always)]
    fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool {
        admit(a.qs, a.now, a.queue, a.size, a.buffer, a.tau, a.evicted)
    }

    fn configure(_: &BufferParams) -> Result<Self, (&'static str, String)> {
        Ok(BarberQ)
    }
}

/// Admits a packet of `size` bytes for queue `i` of a port with buffer `buffer` and
/// shares `tau`, evicting as Algorithm 1 does; evicted packets are appended to
/// `evicted` as (queue, packet). Returns whether the arrival is enqueued.
pub fn admit<Q: QueueStore>(
    qs: &mut Q,
    now: Time,
    i: usize,
    size: u32,
    buffer: u64,
    tau: &[u64],
    evicted: &mut Vec<(usize, PktId)>,
) -> bool {
    let size = size as u64;
    if size + qs.total(now) <= buffer {
        return true; // line 19: room for it
    }
    if size + qs.len(i, now) >= tau[i] {
        return false; // line 16: queue i is satisfied
    }
    // lines 3-8: the longest satisfied queue
    let mut victim: Option<(usize, u64)> = None;
    for (k, &t) in tau.iter().enumerate() {
        let q = qs.len(k, now);
        if q >= t && victim.is_none_or(|(_, best)| q > best) {
            victim = Some((k, q));
        }
    }
    let Some((j, _)) = victim else { return false };
    // lines 9-14: trim its tail
    while size + qs.total(now) > buffer {
        let Some(tail) = qs.tail_size(j) else {
            return false;
        };
        if qs.len(j, now) - (tail as u64) < tau[j] {
            return false; // line 11: queue j would lose its guarantee
        }
        let (id, _) = qs.evict_tail(now, j).expect("tail exists");
        evicted.push((j, id));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::queues::QueueSet;

    fn fill(qs: &mut QueueSet, i: usize, n: u32, first_id: u32) {
        for k in 0..n {
            qs.push(0, i, PktId(first_id + k), 100);
        }
    }

    #[test]
    fn unsatisfied_arrival_evicts_the_longest_satisfied_tail() {
        // B = 1000, two queues, tau = 500 each; queue 1 hogs the buffer
        let mut qs = QueueSet::new(2);
        fill(&mut qs, 1, 10, 0);
        let mut ev = Vec::new();
        assert!(admit(&mut qs, 0, 0, 100, 1000, &[500, 500], &mut ev));
        assert_eq!(ev, vec![(1, PktId(9))]);
        assert_eq!(qs.len(1, 0), 900);
        assert_eq!(qs.stats(1).evictions, 1);
    }

    #[test]
    fn satisfied_arrival_is_dropped_when_full() {
        let mut qs = QueueSet::new(2);
        fill(&mut qs, 0, 5, 0);
        fill(&mut qs, 1, 5, 10);
        let mut ev = Vec::new();
        // queue 0 holds 500 = tau: with the packet it is not below tau
        assert!(!admit(&mut qs, 0, 0, 100, 1000, &[500, 500], &mut ev));
        assert!(ev.is_empty());
    }

    #[test]
    fn eviction_stops_before_the_victim_drops_below_its_share() {
        // B = 900, tau = 300 each; q = [150, 400, 350] (full)
        let mut qs = QueueSet::new(3);
        qs.push(0, 0, PktId(0), 150);
        fill(&mut qs, 1, 4, 10);
        fill(&mut qs, 2, 3, 20);
        qs.push(0, 2, PktId(23), 50);
        let tau = [300, 300, 300];
        let mut ev = Vec::new();
        // 140 B for queue 0 (150 + 140 < 300): victim queue 1 gives one packet
        // (400 -> 300) but a second would leave it at 200 < tau: drop the arrival
        assert!(!admit(&mut qs, 0, 0, 140, 900, &tau, &mut ev));
        assert_eq!(ev, vec![(1, PktId(13))]);
        // 90 B now fits after that eviction without another one
        assert!(admit(&mut qs, 0, 0, 90, 900, &tau, &mut ev));
        assert_eq!(ev.len(), 1);
        // with two queues trimming the victim to tau always makes room
        let mut two = QueueSet::new(2);
        fill(&mut two, 0, 1, 0);
        fill(&mut two, 1, 9, 10);
        assert!(admit(&mut two, 0, 0, 250, 1000, &[400, 600], &mut ev));
        assert_eq!(two.len(1, 0), 600);
    }

    #[test]
    fn victim_is_the_longest_satisfied_queue() {
        // 3 queues, tau = 300 each, B = 900; q = [0, 400, 500]
        let mut qs = QueueSet::new(3);
        fill(&mut qs, 1, 4, 0);
        fill(&mut qs, 2, 5, 10);
        let mut ev = Vec::new();
        assert!(admit(&mut qs, 0, 0, 100, 900, &[300, 300, 300], &mut ev));
        assert_eq!(ev, vec![(2, PktId(14))]);
    }
}
