//! How a sender's window grows on an ACK of new data: Reno's slow start and
//! congestion avoidance (RFC 5681), CUBIC's (`cubic.rs`), and the RTT sample each such
//! ACK gives, which CUBIC and its HyStart read.

use super::super::cubic::hystart::AckSample;
use super::{TcpSender, Time};

impl TcpSender {
    /// The window's growth by `acked` bytes newly acknowledged outside recovery:
    /// slow start up to ssthresh, then a segment a window (or CUBIC's).
    #[inline(always)]
    pub(super) fn grow(&mut self, acked: u64, mss: u64) {
        if self.cubic.is_some() {
            return self.grow_cubic(acked, mss);
        }
        self.slow_start(acked);
        if self.cwnd >= self.ssthresh {
            while self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += mss;
            }
        } else {
            self.ca_acked = 0;
        }
    }

    /// An RTT sample from an ACK of new data at `now` echoing `ts_echo`; CUBIC is
    /// told the ACK (`cubic.rs`), and when HyStart finds the path full, slow start
    /// ends: ssthresh becomes the window.
    #[inline]
    pub(super) fn rtt_sample(&mut self, now: Time, ts_echo: Time, mss: u64) {
        let r = now.saturating_sub(ts_echo);
        self.rtt.sample(r);
        if self.cubic.is_some() {
            self.cubic_ack(now, r, mss);
        }
    }

    /// [`TcpSender::rtt_sample`]'s CUBIC part (kept apart so NewReno's and
    /// DCTCP's path stays inlined).
    #[inline(never)]
    fn cubic_ack(&mut self, now: Time, rtt: Time, mss: u64) {
        let s = AckSample {
            now,
            rtt,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            cwnd: self.cwnd / mss,
            mss,
            srtt: self.rtt.srtt().unwrap_or(0),
        };
        let slow_start = self.cwnd < self.ssthresh;
        let Some(c) = self.cubic.as_deref_mut() else {
            return;
        };
        if c.ack_at(&s, slow_start).is_some() {
            self.ssthresh = self.cwnd;
        }
    }

    /// Slow start by the bytes `acked` up to ssthresh; what is left over counts
    /// toward congestion avoidance.
    #[inline]
    fn slow_start(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            let room = self.ssthresh - self.cwnd;
            self.cwnd += acked.min(room);
            self.ca_acked += acked - acked.min(room);
        } else {
            self.ca_acked += acked;
        }
    }

    /// [`TcpSender::grow`] for CUBIC: Reno's slow start, then CUBIC's growth by
    /// the whole segments acknowledged (kept apart so NewReno's and DCTCP's stays
    /// inlined).
    #[inline(never)]
    fn grow_cubic(&mut self, acked: u64, mss: u64) {
        self.slow_start(acked);
        let Some(c) = self.cubic.as_deref_mut() else {
            return;
        };
        if self.cwnd < self.ssthresh {
            self.ca_acked = 0;
        } else if self.ca_acked >= mss {
            let segs = self.ca_acked / mss;
            self.ca_acked -= segs * mss;
            self.cwnd += c.on_ack(self.cwnd / mss, segs) * mss;
        }
    }
}
