//! The TCP sender: NewReno (RFC 5681 slow start and congestion avoidance, RFC 6582
//! fast retransmit and fast recovery, RFC 6298 retransmission timer) and DCTCP's
//! window reduction on top of it.
//!
//! Choices where the RFCs leave room:
//! * Window growth counts bytes (RFC 3465, appropriate byte counting): in slow start
//!   cwnd grows by the bytes newly acknowledged (L unbounded, as Linux); in
//!   congestion avoidance by one MSS per cwnd of bytes acknowledged.
//! * A segment is sent when it fits: flight + segment ≤ cwnd.
//! * RTT is sampled on every ACK that advances `snd_una`, from the echoed send
//!   timestamp (RFC 7323), so retransmissions need no Karn exclusion.
//! * After a timeout the sender goes back to `snd_una` (go-back-N) with cwnd = 1 MSS.
//!   ssthresh becomes max(FlightSize/2, 2·MSS) (RFC 5681 eq. 4), except that it is
//!   left alone when the timer expires again before any new ACK (RFC 5681 §3.1:
//!   "held constant") or expires during fast recovery, where FlightSize has been
//!   inflated by the new data recovery sent and the congestion episode already set
//!   ssthresh (RFC 5681 only bounds it from above; Linux's `tcp_enter_loss` does the
//!   same).
//! * On a full ACK fast recovery ends with cwnd = min(ssthresh, flight + MSS)
//!   (RFC 6582 §3.2 step 3, first option).
//! * The retransmission timer is restarted by ACKs of new data, but during fast
//!   recovery only by the first partial ACK (RFC 6582 §3.2 step 5, the "Impatient"
//!   variant of RFC 2582 §4): with many losses in one window the timer then expires
//!   and go-back-N repairs them faster than one hole per round trip. It is not
//!   restarted by a retransmission while it runs (RFC 6298 §5.1).
//! * ECE (DCTCP, or NewReno with `ecn`) cuts the window at most once per window of
//!   data and not during loss recovery; DCTCP cuts to cwnd·(1 − α/2), NewReno
//!   halves (RFC 3168 §6.1.2); both floor at 2 MSS and set ssthresh = cwnd.

use super::dctcp::DctcpEstimator;
use super::rtt::RttEstimator;
use super::{CongestionControl, TcpConfig};
use crate::engine::timer::{Fired, LazyTimer};
use crate::engine::Time;

/// A segment the sender wants on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Whether these bytes were sent before.
    pub retx: bool,
}

/// What a sender call asks of the simulator, and the room the host has for it.
#[derive(Debug)]
pub struct SenderOut {
    /// Segments to transmit, in order.
    pub segments: Vec<Segment>,
    /// Schedule the retransmission-timer event at this time.
    pub rto_event: Option<Time>,
    /// Input: wire bytes of new segments the host takes in this call before the
    /// sender must wait (a VM's vswitch queue pushing back); `u64::MAX`: no limit.
    /// Each segment sent uses MSS + header of it.
    pub room: u64,
    /// Set when the sender stopped for lack of `room` with its window still open:
    /// it must be woken ([`TcpSender::resume`]) when room frees up.
    pub blocked: bool,
}

impl Default for SenderOut {
    fn default() -> Self {
        SenderOut {
            segments: Vec::new(),
            rto_event: None,
            room: u64::MAX,
            blocked: false,
        }
    }
}

/// Counters of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    /// Segments retransmitted (fast retransmit, recovery and timeouts).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Window reductions on ECE.
    pub ecn_cuts: u64,
}

/// One TCP sender.
#[derive(Clone, Debug)]
pub struct TcpSender {
    /// Bytes the application gives the connection (`u64::MAX`: unbounded).
    pub limit: u64,
    /// Oldest unacknowledged byte.
    pub snd_una: u64,
    /// Next byte to send.
    pub snd_nxt: u64,
    /// Highest byte sent so far, plus one.
    pub snd_max: u64,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes.
    pub ssthresh: u64,
    /// Counters.
    pub stats: SenderStats,
    ca_acked: u64,
    dupacks: u32,
    in_recovery: bool,
    partial_acked: bool,
    backed_off: bool,
    recover: Option<u64>,
    cwr_end: u64,
    rtt: RttEstimator,
    rto_timer: LazyTimer,
    dctcp: Option<DctcpEstimator>,
    room_limited: bool,
}

impl TcpSender {
    /// A sender for `limit` bytes.
    pub fn new(cfg: &TcpConfig, limit: u64) -> Self {
        let mss = cfg.mss as u64;
        TcpSender {
            limit,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.init_cwnd as u64 * mss,
            ssthresh: cfg.init_ssthresh.map_or(u64::MAX, |s| s as u64 * mss),
            stats: SenderStats::default(),
            ca_acked: 0,
            dupacks: 0,
            in_recovery: false,
            partial_acked: false,
            backed_off: false,
            recover: None,
            cwr_end: 0,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            rto_timer: LazyTimer::default(),
            dctcp: (cfg.cc == CongestionControl::Dctcp)
                .then(|| DctcpEstimator::new(cfg.dctcp_alpha_init, cfg.dctcp_g)),
            room_limited: false,
        }
    }

    /// Whether every byte the application gave has been acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.limit
    }

    /// DCTCP's current α, if this is a DCTCP sender.
    pub fn alpha(&self) -> Option<f64> {
        self.dctcp.as_ref().map(|d| d.alpha)
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }

    /// Stops giving the connection new data: it ends once what was sent is acked.
    pub fn stop(&mut self) {
        self.limit = self.limit.min(self.snd_max);
    }

    /// Opens the connection at `now`: sends the initial window.
    pub fn start(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        self.fill(now, cfg, out);
    }

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    fn loss_ssthresh(&self, mss: u64) -> u64 {
        (self.flight() / 2).max(2 * mss)
    }

    /// Room for a blocked sender again: sends what the window and `out.room` allow.
    pub fn resume(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        self.fill(now, cfg, out);
    }

    /// Sends new (or go-back-N) segments while the window and the host's room allow.
    /// A sender stopped by the host rather than by its window is not
    /// window-limited, so its window does not grow until it is again (the rule of
    /// RFC 7661 and Linux's `tcp_is_cwnd_limited`).
    fn fill(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let mss = cfg.mss as u64;
        let mut sent = false;
        self.room_limited = false;
        while self.snd_nxt < self.limit {
            let len = mss.min(self.limit - self.snd_nxt);
            if self.snd_nxt - self.snd_una + len > self.cwnd {
                break;
            }
            let wire = len + cfg.header as u64;
            if wire > out.room {
                self.room_limited = true;
                out.blocked = true;
                break;
            }
            out.room -= wire;
            let retx = self.snd_nxt < self.snd_max;
            out.segments.push(Segment {
                seq: self.snd_nxt,
                len: len as u32,
                retx,
            });
            self.stats.retransmits += retx as u64;
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            sent = true;
        }
        if sent && !self.rto_timer.is_armed() {
            out.rto_event = self.rto_timer.arm(now + self.rtt.rto());
        }
    }

    fn retransmit_head(&mut self, cfg: &TcpConfig, out: &mut SenderOut) {
        let len = (cfg.mss as u64).min(self.snd_max - self.snd_una);
        if len == 0 {
            return;
        }
        out.segments.push(Segment {
            seq: self.snd_una,
            len: len as u32,
            retx: true,
        });
        self.stats.retransmits += 1;
    }

    fn grow(&mut self, acked: u64, mss: u64) {
        if self.cwnd < self.ssthresh {
            let room = self.ssthresh - self.cwnd;
            self.cwnd += acked.min(room);
            self.ca_acked += acked - acked.min(room);
        } else {
            self.ca_acked += acked;
        }
        if self.cwnd >= self.ssthresh {
            while self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += mss;
            }
        } else {
            self.ca_acked = 0;
        }
    }

    /// Processes an ACK for `ack` arriving at `now`, carrying ECE or not and echoing
    /// the send time `ts_echo` of the segment that caused it.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u64,
        ece: bool,
        ts_echo: Time,
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) {
        if ack > self.snd_max {
            return; // acknowledges bytes never sent: ignore
        }
        let mss = cfg.mss as u64;
        let acked = ack.saturating_sub(self.snd_una);
        if let Some(d) = &mut self.dctcp {
            d.on_ack(acked, ece, ack.max(self.snd_una), self.snd_max);
        }
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.rtt.sample(now.saturating_sub(ts_echo));
            self.backed_off = false;
            let mut restart_timer = true;
            if self.in_recovery {
                if Some(ack) >= self.recover {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh.min(self.flight() + mss);
                } else {
                    // partial ACK: retransmit the next hole, deflate by the amount acked
                    self.retransmit_head(cfg, out);
                    self.cwnd = self.cwnd.saturating_sub(acked) + mss;
                    restart_timer = !self.partial_acked;
                    self.partial_acked = true;
                }
            } else {
                self.dupacks = 0;
                if !self.room_limited {
                    self.grow(acked, mss);
                }
            }
            if self.snd_una >= self.snd_max {
                self.rto_timer.cancel();
            } else if restart_timer {
                out.rto_event = self.rto_timer.arm(now + self.rtt.rto());
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += mss;
            } else if self.dupacks == cfg.dupack_threshold && self.recover.is_none_or(|r| ack >= r)
            {
                // RFC 6582 §3.2 step 1: enter only if the ACK covers more than
                // `recover`, the highest sequence number sent (`recover` here holds
                // snd_max, one past it, hence >=)
                self.ssthresh = self.loss_ssthresh(mss);
                self.cwnd = self.ssthresh + cfg.dupack_threshold as u64 * mss;
                self.recover = Some(self.snd_max);
                self.in_recovery = true;
                self.partial_acked = false;
                self.stats.fast_retransmits += 1;
                self.retransmit_head(cfg, out);
            }
        }
        if ece && !self.in_recovery && self.snd_una >= self.cwr_end && cfg.ect() {
            self.cwnd = match &self.dctcp {
                Some(d) => d.reduced_window(self.cwnd, 2 * mss),
                None => (self.cwnd / 2).max(2 * mss),
            };
            self.ssthresh = self.cwnd;
            self.ca_acked = 0;
            self.cwr_end = self.snd_max.max(self.snd_una + 1);
            self.stats.ecn_cuts += 1;
        }
        self.fill(now, cfg, out);
    }

    /// The retransmission-timer event fired at `now`.
    pub fn on_rto_event(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        match self.rto_timer.fire(now) {
            Fired::Stale => {}
            Fired::Reschedule(t) => out.rto_event = Some(t),
            Fired::Expired => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                let mss = cfg.mss as u64;
                if !self.in_recovery && !self.backed_off {
                    self.ssthresh = self.loss_ssthresh(mss);
                }
                self.backed_off = true;
                self.cwnd = mss;
                self.ca_acked = 0;
                self.snd_nxt = self.snd_una;
                self.in_recovery = false;
                self.dupacks = 0;
                self.recover = Some(self.snd_max);
                self.stats.timeouts += 1;
                self.rtt.backoff();
                self.fill(now, cfg, out);
                if !self.rto_timer.is_armed() {
                    out.rto_event = self.rto_timer.arm(now + self.rtt.rto());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            init_cwnd: 2,
            min_rto: 100,
            initial_rto: 1000,
            ..Default::default()
        }
    }

    fn seqs(out: &SenderOut) -> Vec<(u64, bool)> {
        out.segments.iter().map(|s| (s.seq, s.retx)).collect()
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let c = cfg();
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        assert_eq!(seqs(&out), vec![(0, false), (1000, false)]);
        assert_eq!(out.rto_event, Some(1000));
        out.segments.clear();
        s.on_ack(10, 1000, false, 0, &c, &mut out);
        s.on_ack(11, 2000, false, 0, &c, &mut out);
        assert_eq!(s.cwnd, 4000);
        assert_eq!(out.segments.len(), 4);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let c = TcpConfig {
            init_ssthresh: Some(2),
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        s.on_ack(10, 1000, false, 0, &c, &mut out);
        assert_eq!(s.cwnd, 2000);
        s.on_ack(10, 2000, false, 0, &c, &mut out);
        assert_eq!(s.cwnd, 3000);
    }

    #[test]
    fn three_dupacks_fast_retransmit_and_newreno_recovery() {
        let c = TcpConfig {
            init_cwnd: 10,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        assert_eq!(s.snd_max, 10_000);
        // segment 0 lost: the next three arrivals produce dupacks for 0
        out.segments.clear();
        for _ in 0..3 {
            s.on_ack(10, 0, false, 0, &c, &mut out);
        }
        assert_eq!(seqs(&out), vec![(0, true)]);
        assert_eq!(s.ssthresh, 5000);
        assert_eq!(s.cwnd, 8000);
        assert_eq!(s.stats.fast_retransmits, 1);
        // segment 3000 was lost too: the partial ACK retransmits it
        out.segments.clear();
        s.on_ack(20, 3000, false, 0, &c, &mut out);
        assert_eq!(
            out.segments[0],
            Segment {
                seq: 3000,
                len: 1000,
                retx: true
            }
        );
        // the full ACK ends recovery with cwnd <= ssthresh
        out.segments.clear();
        s.on_ack(30, 10_000, false, 0, &c, &mut out);
        assert!(s.cwnd <= 5000);
        assert_eq!(s.stats.retransmits, 2);
    }

    #[test]
    fn only_the_first_partial_ack_restarts_the_timer() {
        let c = TcpConfig {
            init_cwnd: 10,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        for _ in 0..3 {
            s.on_ack(10, 0, false, 0, &c, &mut out);
        }
        // first partial ACK: timer restarted (sample 20 -> rto = min_rto 100)
        out = SenderOut::default();
        s.on_ack(20, 2000, false, 0, &c, &mut out);
        assert_eq!(out.rto_event, Some(120));
        let deadline = 120;
        // later partial ACKs leave it alone, so it expires during recovery
        s.on_ack(30, 4000, false, 0, &c, &mut out);
        s.on_ack(40, 6000, false, 0, &c, &mut out);
        out = SenderOut::default();
        s.on_rto_event(deadline, &c, &mut out);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(
            out.segments[0],
            Segment {
                seq: 6000,
                len: 1000,
                retx: true
            }
        );
        assert_eq!(s.cwnd, 1000);
        // a timeout during recovery keeps the ssthresh recovery chose
        assert_eq!(s.ssthresh, 5000);
    }

    #[test]
    fn timeout_goes_back_to_snd_una_with_one_segment() {
        let c = TcpConfig {
            init_cwnd: 4,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        let at = out.rto_event.unwrap();
        out = SenderOut::default();
        s.on_rto_event(at, &c, &mut out);
        assert_eq!(seqs(&out), vec![(0, true)]);
        assert_eq!(s.cwnd, 1000);
        assert_eq!(s.ssthresh, 2000);
        assert_eq!(s.rto(), 2000, "backed off");
        assert_eq!(out.rto_event, Some(at + 2000));
        // expiring again for the same segment holds ssthresh constant
        let mut again = s.clone();
        let mut o = SenderOut::default();
        again.on_rto_event(at + 2000, &c, &mut o);
        assert_eq!((again.ssthresh, again.rto()), (2000, 4000));
        // an ACK covering everything that was delivered moves snd_nxt past the hole
        out = SenderOut::default();
        s.on_ack(at + 10, 4000, false, at, &c, &mut out);
        // slow start to ssthresh (2000), the other 3000 acked bytes count toward
        // congestion avoidance: one more MSS, cwnd 3000
        assert_eq!(s.cwnd, 3000);
        assert_eq!(s.snd_nxt, 4000 + 3000);
    }

    #[test]
    fn rto_rearm_later_schedules_no_event() {
        let c = cfg();
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        assert_eq!(out.rto_event.take(), Some(1000));
        // the first RTT sample shrinks the RTO to min_rto: an earlier event is needed
        s.on_ack(10, 1000, false, 0, &c, &mut out);
        assert_eq!(out.rto_event.take(), Some(110));
        s.on_ack(20, 2000, false, 10, &c, &mut out);
        assert_eq!(out.rto_event, None, "deadline moved later: no new event");
        // the event at 110 reschedules itself to the real deadline, 120
        let mut o2 = SenderOut::default();
        s.on_rto_event(110, &c, &mut o2);
        assert_eq!(o2.rto_event, Some(120));
        assert!(o2.segments.is_empty());
        // the superseded event at 1000 is stale
        let mut o3 = SenderOut::default();
        s.on_rto_event(1000, &c, &mut o3);
        assert!(o3.rto_event.is_none() && o3.segments.is_empty());
    }

    #[test]
    fn dctcp_cuts_once_per_window_by_alpha() {
        let c = TcpConfig {
            cc: CongestionControl::Dctcp,
            init_cwnd: 10,
            dctcp_alpha_init: 1.0,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        s.on_ack(10, 1000, true, 0, &c, &mut out);
        // alpha after the first (all-marked) window stays 1: cut to cwnd/2
        let after_first = s.cwnd;
        assert_eq!(after_first, (10_000u64 + 1000) / 2);
        s.on_ack(11, 2000, true, 0, &c, &mut out);
        assert_eq!(s.cwnd, after_first, "no second cut in the same window");
        assert_eq!(s.stats.ecn_cuts, 1);
    }

    #[test]
    fn finite_flow_stops_at_its_size() {
        let c = cfg();
        let mut s = TcpSender::new(&c, 2500);
        let mut out = SenderOut::default();
        s.start(0, &c, &mut out);
        s.on_ack(10, 2000, false, 0, &c, &mut out);
        assert_eq!(
            out.segments.last().unwrap(),
            &Segment {
                seq: 2000,
                len: 500,
                retx: false
            }
        );
        s.on_ack(20, 2500, false, 0, &c, &mut out);
        assert!(s.done());
    }

    #[test]
    fn a_sender_out_of_room_waits_and_does_not_grow_its_window() {
        let c = TcpConfig {
            init_cwnd: 10,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, u64::MAX);
        let mut out = SenderOut {
            room: 2 * 1040 + 100,
            ..Default::default()
        };
        s.start(0, &c, &mut out);
        assert_eq!(out.segments.len(), 2, "room for two 1040-byte packets");
        assert!(out.blocked);
        // ACKs while the host holds it back leave cwnd alone
        let mut out = SenderOut {
            room: 0,
            ..Default::default()
        };
        s.on_ack(10, 2000, false, 0, &c, &mut out);
        assert_eq!(s.cwnd, 10_000);
        assert!(out.segments.is_empty() && out.blocked);
        // room again: it sends up to its window, and is window-limited once more
        let mut out = SenderOut::default();
        s.resume(20, &c, &mut out);
        assert_eq!(out.segments.len(), 10);
        assert!(!out.blocked);
        s.on_ack(30, 3000, false, 0, &c, &mut out);
        assert_eq!(s.cwnd, 11_000, "slow start resumes");
    }
}
