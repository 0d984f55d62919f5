//! The TCP sender: NewReno (RFC 5681 slow start and congestion avoidance, RFC 6582
//! fast retransmit and fast recovery, RFC 6298 retransmission timer), and DCTCP's
//! window reduction or CUBIC's congestion avoidance and reduction (`cubic.rs`) on
//! top of it.
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
//!
//! With `transport.recovery = "sack"` losses are found and repaired by SACK instead
//! (`sack_path.rs`), and with `"rack"` found by RACK-TLP (`rack_path.rs`);
//! everything else above holds. With `"reno_sack"` the ACKs are cumulative as here,
//! but recovery is Linux's: duplicate ACKs count in the pipe, and PRR sets the
//! window (`reno_path.rs`). The window's growth is in `growth.rs`.

mod growth;
mod rack_path;
mod reno_path;
mod sack_path;
mod state;
pub use state::CaState;

use super::cubic::Cubic;
use super::dctcp::DctcpEstimator;
use super::rtt::RttEstimator;
use super::sack::SackOption;
use super::Recovery;
use super::{CongestionControl, TcpConfig};
use super::{CwrReduction, DctcpCut, LossSsthresh};
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
    /// Tail loss probes sent (RACK-TLP).
    pub probes: u64,
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
    /// After a timeout, the data sent before it (snd_max then): Linux's Loss state.
    loss_until: u64,
    rtt: RttEstimator,
    rto_timer: LazyTimer,
    dctcp: Option<DctcpEstimator>,
    cubic: Option<Box<Cubic>>,
    room_limited: bool,
    /// The SACK sender's scoreboard and recovery state (`recovery = "sack"`).
    sack: Option<Box<sack_path::SackState>>,
    /// Linux's SACK-less recovery state (`recovery = "reno_sack"`).
    reno: Option<Box<reno_path::RenoSack>>,
    /// Whether ACKs take the SACK or the `reno_sack` path (one test for NewReno's).
    other_path: bool,
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
            loss_until: 0,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            rto_timer: LazyTimer::default(),
            dctcp: (cfg.cc == CongestionControl::Dctcp).then(|| cfg.dctcp_estimator()),
            cubic: (cfg.cc == CongestionControl::Cubic).then(Box::default),
            room_limited: false,
            sack: cfg
                .recovery
                .uses_sack()
                .then(|| Box::new(sack_path::SackState::new(cfg.recovery == Recovery::Rack))),
            reno: (cfg.recovery == Recovery::RenoSack).then(Box::default),
            other_path: cfg.recovery != Recovery::NewReno,
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
        self.send(now, cfg, out);
    }

    /// Takes the RTT sample `r` a handshake would have given before the first data
    /// segment (`transport.handshake_rtt`): SRTT and RTTVAR as after Linux's
    /// SYN-ACK (`tcp_synack_rtt_meas`), and the RTO from them (RFC 6298 §2.2).
    pub fn handshake(&mut self, r: Time) {
        self.rtt.sample(r);
    }

    /// Sends what the window allows: NextSeg's choice with SACK, else new (or
    /// go-back-N) segments.
    fn send(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        if self.sack.is_some() {
            self.fill_sack(now, cfg, out);
        } else if self.reno.is_some() {
            self.reno_send(now, cfg, out);
        } else {
            self.fill(now, cfg, out);
        }
    }

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// ssthresh after a loss: max(FlightSize/2, 2·SMSS) (RFC 5681 eq. 4), or half
    /// the window with `loss_ssthresh = "cwnd"` (Linux's `tcp_reno_ssthresh`); for
    /// CUBIC β of the window, the congestion event recorded (`cubic.rs`).
    fn loss_ssthresh(&mut self, cfg: &TcpConfig) -> u64 {
        let mss = cfg.mss as u64;
        if let Some(x) = self.cubic_cut(mss) {
            return x;
        }
        match cfg.loss_ssthresh {
            LossSsthresh::Flight => (self.flight() / 2).max(2 * mss),
            LossSsthresh::Cwnd => (self.cwnd / 2).max(2 * mss),
        }
    }

    /// For CUBIC, a congestion event at the window it has: the new ssthresh in
    /// bytes (`cubic.rs`); None for the others.
    fn cubic_cut(&mut self, mss: u64) -> Option<u64> {
        let cwnd = self.cwnd;
        self.cubic
            .as_deref_mut()
            .map(|c| c.congestion(cwnd / mss) * mss)
    }

    /// ssthresh at a retransmission timeout: RFC 5681's, but with SACK half the
    /// window when it is the smaller, as Linux's `tcp_enter_loss` sets it: while a
    /// hole stays at `snd_una` a SACK sender runs ahead, and the flight counts the
    /// megabytes the receiver holds above the hole, which are not in the network
    /// (eight 10 MB flows in a 100 KB buffer: ssthresh 1.96 MB after a timeout, and
    /// 5 024 drops where ns-3 had 649).
    fn timeout_ssthresh(&mut self, cfg: &TcpConfig) -> u64 {
        match (self.sack.is_some(), cfg.loss_ssthresh) {
            (true, LossSsthresh::Flight) if self.cubic.is_none() => {
                (self.flight().min(self.cwnd) / 2).max(2 * cfg.mss as u64)
            }
            _ => self.loss_ssthresh(cfg),
        }
    }

    /// Room for a blocked sender again: sends what the window and `out.room` allow.
    pub fn resume(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        self.send(now, cfg, out);
    }

    /// Sends new (or go-back-N) segments while the window and the host's room allow.
    /// A sender stopped by the host rather than by its window is not
    /// window-limited, so its window does not grow until it is again (the rule of
    /// RFC 7661 and Linux's `tcp_is_cwnd_limited`).
    fn fill(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        self.fill_past(now, cfg, out, 0);
    }

    /// [`TcpSender::fill`] with `credit` bytes out that the pipe does not count
    /// (`reno_sack`'s duplicate ACKs; 0 for NewReno, whose copy folds it away).
    #[inline(always)]
    fn fill_past(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut, credit: u64) {
        let mss = cfg.mss as u64;
        let mut sent = false;
        self.room_limited = false;
        while self.snd_nxt < self.limit {
            let len = mss.min(self.limit - self.snd_nxt);
            if self.snd_nxt - self.snd_una + len > self.cwnd + credit {
                break;
            }
            let retx = self.snd_nxt < self.snd_max;
            let seg = Segment {
                seq: self.snd_nxt,
                len: len as u32,
                retx,
            };
            if !self.emit(seg, cfg, out) {
                break;
            }
            self.stats.retransmits += retx as u64;
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            sent = true;
        }
        if sent && !self.rto_timer.is_armed() {
            self.arm_rto(now, out);
        }
    }

    /// (Re)starts the retransmission timer at `now`, asking for an event if one is
    /// needed (an event already asked for in this call is kept).
    #[inline]
    fn arm_rto(&mut self, now: Time, out: &mut SenderOut) {
        if let Some(t) = self.rto_timer.arm(now + self.rtt.rto()) {
            out.rto_event = Some(t);
        }
    }

    /// Hands `seg` to the host if it has room for it (MSS + header); else notes
    /// that the sender waits for room with its window open.
    #[inline]
    fn emit(&mut self, seg: Segment, cfg: &TcpConfig, out: &mut SenderOut) -> bool {
        let wire = seg.len as u64 + cfg.header as u64;
        if wire > out.room {
            self.room_limited = true;
            out.blocked = true;
            return false;
        }
        out.room -= wire;
        out.segments.push(seg);
        true
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

    /// Processes an ACK for `ack` arriving at `now`, carrying ECE or not, echoing
    /// the send time `ts_echo` of the segment that caused it, and carrying SACK
    /// blocks or not.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: u64,
        ece: bool,
        ts_echo: Time,
        sack: Option<&SackOption>,
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) {
        if ack > self.snd_max {
            return; // acknowledges bytes never sent: ignore
        }
        if self.other_path {
            if self.sack.is_some() {
                return self.on_ack_sack(now, (ack, ece, ts_echo), sack, cfg, out);
            }
            return self.on_ack_reno(now, (ack, ece, ts_echo), cfg, out);
        }
        let mss = cfg.mss as u64;
        let acked = ack.saturating_sub(self.snd_una);
        let every_window = self.dctcp_ack(acked, ack, ece, cfg);
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.rtt_sample(now, ts_echo, mss);
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
                self.arm_rto(now, out);
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
                self.ssthresh = self.loss_ssthresh(cfg);
                self.cwnd = self.ssthresh + cfg.dupack_threshold as u64 * mss;
                self.recover = Some(self.snd_max);
                self.in_recovery = true;
                self.partial_acked = false;
                self.stats.fast_retransmits += 1;
                self.retransmit_head(cfg, out);
            }
        }
        if self.ece_cuts(ece, every_window, cfg) {
            self.ecn_cut(mss);
        }
        self.fill(now, cfg, out);
    }

    /// The response to ECE (module doc): DCTCP's cut or NewReno's halving.
    /// DCTCP's bookkeeping of an ACK that advanced `acked` bytes to `ack`; with
    /// `dctcp_cut = "every_window"`, the cut at a window's end, before the ACK's own
    /// processing as htsim's DCTCPSrc does. Whether the cut is every-window.
    fn dctcp_ack(&mut self, acked: u64, ack: u64, ece: bool, cfg: &TcpConfig) -> bool {
        let window_ended = match &mut self.dctcp {
            Some(d) => d.on_ack(acked, ece, ack.max(self.snd_una), self.snd_max),
            None => false,
        };
        let every_window = cfg.dctcp_cut == DctcpCut::EveryWindow && self.dctcp.is_some();
        if every_window {
            self.cut_every_window(ece, window_ended, cfg.mss as u64);
        }
        if let (true, Some(d)) = (window_ended, self.dctcp.as_mut()) {
            d.window_restarted(self.cwnd);
        }
        every_window
    }

    /// Whether an ACK carrying `ece` calls for a window reduction: once per window of
    /// data, not during loss recovery, not where DCTCP cuts every window, and only
    /// for a sender whose segments carry ECT.
    #[inline(always)]
    fn ece_cuts(&self, ece: bool, every_window: bool, cfg: &TcpConfig) -> bool {
        !every_window && ece && !self.in_recovery && self.snd_una >= self.cwr_end && cfg.ect()
    }

    fn ecn_cut(&mut self, mss: u64) {
        self.cwnd = self.ecn_target(mss);
        self.ssthresh = self.cwnd;
        self.ca_acked = 0;
        self.cwr_end = self.snd_max.max(self.snd_una + 1);
        self.stats.ecn_cuts += 1;
    }

    /// The window ECE asks for: DCTCP's cwnd·(1 − α/2), NewReno's half, at least
    /// 2 MSS; CUBIC's β of it, as for a loss.
    fn ecn_target(&mut self, mss: u64) -> u64 {
        if let Some(x) = self.cubic_cut(mss) {
            return x;
        }
        match &self.dctcp {
            Some(d) => d.reduced_window(self.cwnd, 2 * mss),
            None => (self.cwnd / 2).max(2 * mss),
        }
    }

    /// DCTCP as htsim runs it ([`DctcpCut::EveryWindow`]): an ECE ends slow start;
    /// at the end of each window, while α > 0, the window is cut to cwnd·(1 − α/2),
    /// at least one segment.
    fn cut_every_window(&mut self, ece: bool, window_ended: bool, mss: u64) {
        if ece {
            self.ssthresh = self.ssthresh.min(self.cwnd);
        }
        let Some(d) = &self.dctcp else { return };
        if window_ended && d.alpha > 0.0 && !self.in_recovery {
            // the bytes acknowledged toward the next segment of growth are kept: the
            // cut comes every window, and resetting them would stop the growth
            self.cwnd = d.reduced_window(self.cwnd, mss);
            self.ssthresh = self.cwnd;
            self.stats.ecn_cuts += 1;
        }
    }

    /// The retransmission-timer event fired at `now` (with RACK-TLP, also the
    /// reorder and probe timers, which share its events as Linux's do).
    pub fn on_rto_event(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let expired = match self.rto_timer.fire(now) {
            Fired::Stale => false,
            Fired::Reschedule(t) => {
                out.rto_event = Some(t);
                false
            }
            Fired::Expired => true,
        };
        if expired {
            self.retransmission_timeout(now, cfg, out);
        }
        if self.rack().is_some() {
            self.rack_timers_fired(now, cfg, out);
        }
    }

    /// The retransmission timer expired at `now`.
    fn retransmission_timeout(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        if self.snd_una >= self.snd_max {
            return;
        }
        let mss = cfg.mss as u64;
        if !self.in_recovery && !self.backed_off {
            self.ssthresh = self.timeout_ssthresh(cfg);
        }
        if let Some(c) = self.cubic.as_deref_mut() {
            c.reset(self.snd_max); // Linux's bictcp_state on entering TCP_CA_Loss
        }
        self.backed_off = true;
        self.cwnd = mss;
        self.ca_acked = 0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(self.snd_max);
        self.stats.timeouts += 1;
        self.loss_until = self.snd_max;
        self.reno_timeout();
        self.rtt.backoff();
        if self.sack.is_some() {
            self.timeout_sack(now, cfg, out);
        } else {
            self.snd_nxt = self.snd_una;
            self.fill(now, cfg, out);
        }
        if !self.rto_timer.is_armed() {
            self.arm_rto(now, out);
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rack;
#[cfg(test)]
mod tests_reno;
#[cfg(test)]
mod tests_sack;
