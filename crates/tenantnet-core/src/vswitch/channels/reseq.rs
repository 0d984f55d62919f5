//! Trinity's resequencing buffer at the receiver (§III-C Problem #3, T:L755-762):
//! a green packet that arrives while earlier bytes of its flow are missing (red
//! packets still queued behind it in the network) is held; when the missing bytes
//! arrive, it goes to the transport with them, in order; if they have not arrived
//! within the timeout, everything held goes on as it is. Red packets and
//! retransmissions are never held.
//!
//! The hook sees arrivals and the hosts' ticks, not timers of its own: a timeout is
//! noticed at the flow's next arrival or the next tick, whichever comes first.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::Time;
use crate::net::Packet;

/// One flow's resequencing state.
#[derive(Clone, Debug, Default)]
pub struct Reseq {
    /// The next byte expected in order.
    next: u64,
    /// Held packets by sequence number, with when each arrived.
    held: BTreeMap<u64, (Time, Packet)>,
    /// The held packets' arrival times (with their sequence numbers), oldest first.
    arrivals: BTreeSet<(Time, u64)>,
    /// When the oldest packet still held arrived.
    since: Time,
}

impl Reseq {
    /// Whether packets are held.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Packets held.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Data packet `p` (`green`: it may be held) arrives at `now`: appends to `out`
    /// what goes to the transport now, in order (`p` itself, unless it is held).
    pub fn arrive(
        &mut self,
        p: &Packet,
        green: bool,
        now: Time,
        timeout: Time,
        out: &mut Vec<Packet>,
    ) {
        if self.holding() && now.saturating_sub(self.since) >= timeout {
            self.flush(out);
        }
        let end = p.seq + p.len as u64;
        if green && p.seq > self.next {
            if !self.holding() {
                self.since = now;
            }
            if let Some((then, _)) = self.held.insert(p.seq, (now, *p)) {
                self.arrivals.remove(&(then, p.seq));
            }
            self.arrivals.insert((now, p.seq));
            return;
        }
        out.push(*p);
        self.next = self.next.max(end);
        let mut released = false;
        while let Some((&seq, _)) = self.held.first_key_value() {
            if seq > self.next {
                break;
            }
            let (seq, (then, q)) = self.held.pop_first().expect("a held packet");
            self.arrivals.remove(&(then, seq));
            self.next = self.next.max(q.seq + q.len as u64);
            out.push(q);
            released = true;
        }
        // the timeout runs from the oldest packet still held (unchanged unless some
        // were handed on)
        if released || !self.holding() {
            self.since = self.arrivals.first().map_or(now, |a| a.0);
        }
    }

    /// Hands on everything held if it has waited `timeout` by `now`.
    pub fn expire(&mut self, now: Time, timeout: Time, out: &mut Vec<Packet>) {
        if self.holding() && now.saturating_sub(self.since) >= timeout {
            self.flush(out);
        }
    }

    /// Hands on everything held, in order.
    fn flush(&mut self, out: &mut Vec<Packet>) {
        self.arrivals.clear();
        while let Some((_, (_, q))) = self.held.pop_first() {
            self.next = self.next.max(q.seq + q.len as u64);
            out.push(q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u64) -> Packet {
        Packet {
            seq,
            len: 100,
            ..Default::default()
        }
    }

    fn seqs(v: &[Packet]) -> Vec<u64> {
        v.iter().map(|p| p.seq).collect()
    }

    #[test]
    fn a_green_packet_past_a_gap_waits_for_it() {
        let (mut r, mut out) = (Reseq::default(), Vec::new());
        r.arrive(&pkt(0), false, 0, 1000, &mut out);
        // 100 and 200 are red and late; 300 and 400 are green and overtake them
        r.arrive(&pkt(300), true, 10, 1000, &mut out);
        r.arrive(&pkt(400), true, 11, 1000, &mut out);
        assert_eq!((seqs(&out), r.held()), (vec![0], 2));
        r.arrive(&pkt(100), false, 20, 1000, &mut out);
        assert_eq!(seqs(&out), vec![0, 100]);
        r.arrive(&pkt(200), false, 30, 1000, &mut out);
        assert_eq!(seqs(&out), vec![0, 100, 200, 300, 400]);
        assert!(!r.holding());
    }

    #[test]
    fn red_packets_pass_and_a_timeout_releases_what_is_held() {
        let (mut r, mut out) = (Reseq::default(), Vec::new());
        // a red packet past a gap (a loss) goes on at once
        r.arrive(&pkt(200), false, 0, 1000, &mut out);
        assert_eq!(seqs(&out), vec![200]);
        r.arrive(&pkt(500), true, 5, 1000, &mut out);
        r.expire(1004, 1000, &mut out);
        assert_eq!(r.held(), 1);
        r.expire(1005, 1000, &mut out);
        assert_eq!(seqs(&out), vec![200, 500]);
        // a retransmission below what was handed on passes too
        r.arrive(&pkt(300), true, 2000, 1000, &mut out);
        assert_eq!(seqs(&out), vec![200, 500, 300]);
        // the timeout runs from the oldest packet still held, not the first ever held
        let (mut r, mut out) = (Reseq::default(), Vec::new());
        r.arrive(&pkt(100), true, 0, 1000, &mut out); // waits for 0
        r.arrive(&pkt(300), true, 900, 1000, &mut out); // waits for 200
        r.arrive(&pkt(0), false, 950, 1000, &mut out); // releases 0 and 100
        assert_eq!((seqs(&out), r.held()), (vec![0, 100], 1));
        r.expire(1500, 1000, &mut out);
        assert_eq!(r.held(), 1, "300 has waited 600 only");
        r.expire(1900, 1000, &mut out);
        assert_eq!(seqs(&out), vec![0, 100, 300]);
    }
}
