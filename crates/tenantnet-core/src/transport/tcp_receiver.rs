//! The TCP receiver: cumulative ACKs, an out-of-order reassembly list, optional
//! delayed ACKs, and ECN echo.
//!
//! * Without delayed ACKs every data segment is acknowledged at once and the ACK
//!   echoes that segment's CE mark: the per-packet ECE echo DCTCP needs (§3.1).
//! * With delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2) an ACK goes out every
//!   second in-order segment or when the timer expires, and at once for out-of-order
//!   segments and for segments that fill a hole. The ECE bit follows DCTCP's
//!   two-state machine (§3.1, Fig. 10): when the CE mark of arriving segments
//!   changes, the receiver first acknowledges the segments received so far with the
//!   old state, so the sender sees exactly how many bytes were marked.
//! * Linux's quick ACKs (`transport.quick_acks`): the first segments of a
//!   connection are acknowledged at once even with delayed ACKs; and with
//!   `transport.ack_push` so is the segment that ends the application's data.
//! * The ACK echoes the send time of the oldest segment it acknowledges (RFC 7323
//!   §4.3) for the sender's RTT estimate.
//! * With SACK (`transport.recovery = "sack"`) every ACK carries the out-of-order
//!   ranges, the one holding the segment that triggered it first (RFC 2018 §4), and
//!   a segment that arrives again is reported in a D-SACK block (RFC 2883).

use super::sack::{SackOption, SackReporter};
use crate::engine::timer::{Fired, LazyTimer};
use crate::engine::Time;

/// An ACK the receiver wants sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Cumulative acknowledgement number.
    pub ack: u64,
    /// ECN-echo.
    pub ece: bool,
    /// Echoed send time.
    pub ts: Time,
    /// SACK blocks (none without SACK).
    pub sack: SackOption,
}

/// A data segment as the receiver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSegment {
    /// Sequence number of its first byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Whether it arrived CE-marked.
    pub ce: bool,
    /// Its send time, to echo.
    pub ts: Time,
    /// Whether it ends the application's data and is to be acknowledged at once
    /// (`transport.ack_push`: Linux ACKs a PSH segment when the application
    /// reads it).
    pub push: bool,
}

/// What a receiver call asks of the simulator.
#[derive(Debug, Default)]
pub struct ReceiverOut {
    /// ACKs to send, in order.
    pub acks: Vec<Ack>,
    /// Schedule the delayed-ACK timer event at this time.
    pub delack_event: Option<Time>,
}

/// One TCP receiver.
#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Next byte expected: everything before it was delivered in order.
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    unacked: u32,
    ce_state: bool,
    pending_ts: Time,
    delack: LazyTimer,
    /// SACK's reporting state, when SACK is on.
    sack: Option<Box<SackReporter>>,
    /// A duplicate segment to report in the next ACK (D-SACK).
    dup: Option<(u64, u64)>,
    /// Quick ACKs left: segments still acknowledged at once with delayed ACKs.
    quick: u32,
}

impl TcpReceiver {
    /// A receiver expecting byte 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// A receiver that puts SACK blocks on its ACKs.
    pub fn with_sack() -> Self {
        TcpReceiver {
            sack: Some(Box::default()),
            ..Self::default()
        }
    }

    /// This receiver, acknowledging its first `n` segments at once even with
    /// delayed ACKs (Linux's quick-ACK mode at a connection's start).
    pub fn with_quick_acks(self, n: u32) -> Self {
        TcpReceiver { quick: n, ..self }
    }

    /// Out-of-order byte ranges held for reassembly.
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let i = self.ooo.partition_point(|r| r.1 < start);
        let mut s = start;
        let mut e = end;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once((s, e)));
    }

    fn ack_now(&mut self, ece: bool, ts: Time, out: &mut ReceiverOut) {
        let sack = match &self.sack {
            Some(r) => r.option(self.dup.take()),
            None => SackOption::default(),
        };
        out.acks.push(Ack {
            ack: self.rcv_nxt,
            ece,
            ts,
            sack,
        });
        self.unacked = 0;
        self.delack.cancel();
    }

    /// Segment `d` arrived at `now`; `delayed_ack` is the delayed-ACK timeout, if
    /// delayed ACKs are on.
    pub fn on_data(
        &mut self,
        now: Time,
        d: DataSegment,
        delayed_ack: Option<Time>,
        out: &mut ReceiverOut,
    ) {
        let DataSegment {
            seq,
            len,
            ce,
            ts,
            push,
        } = d;
        let end = seq + len as u64;
        if self.sack.is_some() {
            self.note_for_sack(seq, end);
        }
        let Some(timeout) = delayed_ack else {
            self.advance(seq, end);
            self.ack_now(ce, ts, out);
            return;
        };
        // DCTCP's state machine: a change of CE state flushes the pending ACK first.
        if ce != self.ce_state && self.unacked > 0 {
            let ts0 = self.pending_ts;
            self.ack_now(self.ce_state, ts0, out);
        }
        self.ce_state = ce;
        let had_holes = !self.ooo.is_empty();
        let in_order = seq <= self.rcv_nxt && end > self.rcv_nxt;
        self.advance(seq, end);
        if self.unacked == 0 {
            self.pending_ts = ts;
        }
        self.unacked += 1;
        let quick = self.quick > 0;
        self.quick = self.quick.saturating_sub(1);
        if !in_order || had_holes || self.unacked >= 2 || quick || push {
            let ts0 = self.pending_ts;
            self.ack_now(ce, ts0, out);
        } else {
            out.delack_event = self.delack.arm(now + timeout);
        }
    }

    /// SACK's bookkeeping for a segment `[seq, end)` about to be taken in: a
    /// duplicate is remembered for a D-SACK, an out-of-order one makes its range the
    /// first reported.
    fn note_for_sack(&mut self, seq: u64, end: u64) {
        // the first held range that ends at or after the segment's start
        let i = self.ooo.partition_point(|r| r.1 < seq);
        let held = self.ooo.get(i).is_some_and(|r| r.0 <= seq && end <= r.1);
        if end <= self.rcv_nxt || held {
            self.dup = Some((seq, end));
            return;
        }
        if seq > self.rcv_nxt {
            // the range it will lie in: it and the held ranges it touches
            let (mut lo, mut hi) = (seq, end);
            for &(s, e) in self.ooo[i..].iter().take_while(|r| r.0 <= end) {
                lo = lo.min(s);
                hi = hi.max(e);
            }
            if let Some(r) = self.sack.as_deref_mut() {
                r.arrived((lo, hi));
            }
        }
    }

    fn advance(&mut self, seq: u64, end: u64) {
        if end <= self.rcv_nxt {
            return;
        }
        if seq > self.rcv_nxt {
            self.insert_ooo(seq, end);
            return;
        }
        self.rcv_nxt = end;
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        if let Some(r) = self.sack.as_deref_mut() {
            r.delivered(self.rcv_nxt);
        }
    }

    /// The delayed-ACK timer event fired at `now`.
    pub fn on_delack_event(&mut self, now: Time, out: &mut ReceiverOut) {
        match self.delack.fire(now) {
            Fired::Expired if self.unacked > 0 => {
                let ts0 = self.pending_ts;
                self.ack_now(self.ce_state, ts0, out);
            }
            Fired::Reschedule(t) => out.delack_event = Some(t),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64, len: u32, ce: bool, ts: Time) -> DataSegment {
        DataSegment {
            seq,
            len,
            ce,
            ts,
            push: false,
        }
    }

    fn acks(out: &ReceiverOut) -> Vec<(u64, bool)> {
        out.acks.iter().map(|a| (a.ack, a.ece)).collect()
    }

    #[test]
    fn cumulative_acks_and_reassembly() {
        let mut r = TcpReceiver::new();
        let mut out = ReceiverOut::default();
        r.on_data(0, seg(0, 100, false, 0), None, &mut out);
        r.on_data(0, seg(200, 100, false, 0), None, &mut out); // hole at 100
        r.on_data(0, seg(400, 100, true, 0), None, &mut out);
        assert_eq!(r.ooo_ranges(), &[(200, 300), (400, 500)]);
        r.on_data(0, seg(100, 100, false, 0), None, &mut out); // fills the first hole
        r.on_data(0, seg(300, 100, false, 0), None, &mut out);
        assert_eq!(
            acks(&out),
            vec![
                (100, false),
                (100, false),
                (100, true),
                (300, false),
                (500, false)
            ]
        );
        assert!(r.ooo_ranges().is_empty());
        r.on_data(0, seg(0, 100, false, 0), None, &mut out); // old duplicate
        assert_eq!(out.acks.last().unwrap().ack, 500);
    }

    #[test]
    fn overlapping_ranges_merge() {
        let mut r = TcpReceiver::new();
        let mut out = ReceiverOut::default();
        r.on_data(0, seg(300, 100, false, 0), None, &mut out);
        r.on_data(0, seg(100, 100, false, 0), None, &mut out);
        r.on_data(0, seg(150, 200, false, 0), None, &mut out);
        assert_eq!(r.ooo_ranges(), &[(100, 400)]);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timer() {
        let mut r = TcpReceiver::new();
        let mut out = ReceiverOut::default();
        let d = Some(1000);
        r.on_data(0, seg(0, 100, false, 5), d, &mut out);
        assert!(out.acks.is_empty());
        assert_eq!(out.delack_event, Some(1000));
        r.on_data(10, seg(100, 100, false, 6), d, &mut out);
        assert_eq!(
            out.acks,
            vec![Ack {
                ack: 200,
                ece: false,
                ts: 5,
                ..Ack::default()
            }]
        );
        out = ReceiverOut::default();
        r.on_data(20, seg(200, 100, false, 7), d, &mut out);
        r.on_delack_event(1000, &mut out); // the first, cancelled timer's event
        assert!(out.acks.is_empty());
        let at = out.delack_event.unwrap();
        r.on_delack_event(at, &mut out);
        assert_eq!(
            out.acks,
            vec![Ack {
                ack: 300,
                ece: false,
                ts: 7,
                ..Ack::default()
            }]
        );
    }

    #[test]
    fn quick_acks_then_delayed_and_a_push_segment_at_once() {
        let mut r = TcpReceiver::new().with_quick_acks(2);
        let mut out = ReceiverOut::default();
        let d = Some(1000);
        for k in 0..5 {
            r.on_data(k * 10, seg(k * 100, 100, false, k), d, &mut out);
        }
        // two quick ACKs, then every second segment: 100, 200, 400; 500 waits
        let got: Vec<u64> = out.acks.iter().map(|a| a.ack).collect();
        assert_eq!(got, vec![100, 200, 400]);
        let last = DataSegment {
            push: true,
            ..seg(500, 100, false, 9)
        };
        out = ReceiverOut::default();
        r.on_data(60, last, d, &mut out);
        assert_eq!(acks(&out), vec![(600, false)], "the push segment at once");
    }

    #[test]
    fn sack_blocks_report_the_latest_range_first_and_duplicates() {
        let mut r = TcpReceiver::with_sack();
        let mut out = ReceiverOut::default();
        r.on_data(0, seg(0, 100, false, 0), None, &mut out);
        r.on_data(0, seg(200, 100, false, 0), None, &mut out);
        r.on_data(0, seg(400, 100, false, 0), None, &mut out);
        r.on_data(0, seg(300, 100, false, 0), None, &mut out); // joins 200-300 and 400-500
        let last = out.acks.last().unwrap();
        assert_eq!((last.ack, last.sack.blocks()), (100, &[(200, 500)][..]));
        r.on_data(0, seg(300, 100, false, 0), None, &mut out); // a duplicate: D-SACK
        let last = out.acks.last().unwrap();
        assert!(last.sack.dsack && last.sack.blocks() == [(300, 400), (200, 500)]);
        r.on_data(0, seg(100, 100, false, 0), None, &mut out); // fills the hole
        let last = out.acks.last().unwrap();
        assert_eq!((last.ack, last.sack.n), (500, 0));
        r.on_data(0, seg(0, 100, false, 0), None, &mut out); // below rcv_nxt: D-SACK
        let last = out.acks.last().unwrap();
        assert!(last.sack.dsack && last.sack.blocks() == [(0, 100)]);
        // without SACK, no blocks ever
        let mut plain = TcpReceiver::new();
        plain.on_data(0, seg(200, 100, false, 0), None, &mut out);
        assert_eq!(out.acks.last().unwrap().sack, SackOption::default());
    }

    #[test]
    fn dctcp_ce_change_flushes_with_old_state() {
        let mut r = TcpReceiver::new();
        let mut out = ReceiverOut::default();
        let d = Some(1000);
        r.on_data(0, seg(0, 100, false, 0), d, &mut out);
        r.on_data(1, seg(100, 100, true, 0), d, &mut out); // CE flips: ack 100 unmarked first
        assert_eq!(acks(&out), vec![(100, false)]);
        r.on_data(2, seg(200, 100, true, 0), d, &mut out);
        assert_eq!(acks(&out), vec![(100, false), (300, true)]);
    }
}
