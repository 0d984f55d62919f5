//! The sender with SACK (`transport.recovery = "sack"`): RFC 6675 loss recovery with
//! Proportional Rate Reduction (RFC 6937), as Linux repairs losses.
//!
//! * Sending is limited by the pipe (RFC 6675's SetPipe: bytes not SACKed and not
//!   lost, retransmissions counted again) against cwnd, in and out of recovery.
//! * Recovery starts on DupThresh duplicate ACKs (ACKs that carry new SACK
//!   information and advance nothing) or when the first hole is lost by IsLost, at
//!   most once per window of data (the ACK must be at or past the last recovery
//!   point). ssthresh = max(FlightSize/2, 2·SMSS), and PRR sets cwnd on every ACK
//!   until the recovery point is acknowledged; then cwnd = ssthresh (RFC 6937 §3).
//!   The first retransmission goes whatever PRR allows (RFC 6675 §5, step 4.3).
//! * What is sent comes from NextSeg: lost holes first, then new data, then other
//!   holes below the highest SACK, then one rescue retransmission per recovery.
//! * After a retransmission timeout the scoreboard is kept (RFC 6675 §5.1): every
//!   un-SACKed byte sent so far counts as lost, only holes are resent, and cwnd
//!   grows from one segment in slow start until the timeout's recovery point is
//!   acknowledged: on ACKs that advance SND.UNA only, by the bytes each delivers
//!   (SACKed ones included), as Linux and ns-3 grow it.
//! * ECE cuts the window as without SACK: once per window, not during recovery.
//! * With `recovery = "rack"` RACK-TLP marks the losses instead of DupThresh
//!   (`rack_path.rs`); the rest holds.

use super::{CwrReduction, Segment, SenderOut, TcpConfig, TcpSender, Time};
use crate::transport::rack::Rack;
use crate::transport::sack::{next_seg, Next, NextSegState, Prr, SackOption, Scoreboard};

/// The SACK sender's state beside the common one.
#[derive(Clone, Debug, Default)]
pub(super) struct SackState {
    pub(super) sb: Scoreboard,
    prr: Prr,
    /// RecoveryPoint of the current or last recovery: snd_max when it began.
    recovery_point: u64,
    /// The recovery point of the recovery whose rescue retransmission was sent.
    rescued: Option<u64>,
    /// After a timeout, until it is acknowledged: every un-SACKed byte below it is
    /// lost (0: none).
    pub(super) all_lost_below: u64,
    /// RACK-TLP's state (`recovery = "rack"`).
    pub(super) rack: Option<Box<Rack>>,
    /// A window reduction after ECE paced by PRR is under way
    /// (`cwr_reduction = "prr"`), until `cwr_end` is acknowledged.
    pub(super) cwr: bool,
}

impl SackState {
    /// A SACK sender's state, with RACK-TLP's or not.
    pub(super) fn new(rack: bool) -> Self {
        SackState {
            rack: rack.then(Box::default),
            ..Default::default()
        }
    }
}

impl TcpSender {
    pub(super) fn sack_state(&self) -> &SackState {
        self.sack.as_deref().expect("a SACK sender")
    }

    pub(super) fn sack_mut(&mut self) -> &mut SackState {
        self.sack.as_deref_mut().expect("a SACK sender")
    }

    /// RACK-TLP's state, with `recovery = "rack"`.
    pub(super) fn rack(&self) -> Option<&Rack> {
        self.sack.as_deref().and_then(|s| s.rack.as_deref())
    }

    /// Where the bytes marked lost end now (the scoreboard's lost boundary).
    fn lost_end(&self, cfg: &TcpConfig) -> u64 {
        let params = self.lost_params(cfg);
        let sb = &self.sack_state().sb;
        sb.lost_end(self.snd_una, self.snd_max, params)
    }

    /// What IsLost reads: DupThresh, SMSS, and the point below which every
    /// un-SACKed byte is lost. With RACK the DupThresh rule is off (Linux marks
    /// losses by RACK alone) and RACK's point joins the timeout's.
    pub(super) fn lost_params(&self, cfg: &TcpConfig) -> (u32, u64, u64) {
        let st = self.sack_state();
        match &st.rack {
            Some(r) => (
                u32::MAX,
                cfg.mss as u64,
                st.all_lost_below.max(r.lost_below),
            ),
            None => (cfg.dupack_threshold, cfg.mss as u64, st.all_lost_below),
        }
    }

    /// RFC 6675's pipe; with RACK the retransmissions in flight are counted one by
    /// one rather than as everything below HighRxt.
    pub(super) fn pipe(&self, cfg: &TcpConfig) -> u64 {
        let lost = self.lost_params(cfg);
        let sb = &self.sack_state().sb;
        let pipe = sb.pipe(self.snd_una, self.snd_max, lost);
        debug_assert_eq!(pipe, sb.pipe_by_walk(self.snd_una, self.snd_max, lost));
        match self.rack() {
            Some(r) => pipe + self.rack_retransmitted(r),
            None => pipe,
        }
    }

    /// The SACK sender's ACK (see the module doc).
    pub(super) fn on_ack_sack(
        &mut self,
        now: Time,
        (ack, ece, ts_echo): (u64, bool, Time),
        opt: Option<&SackOption>,
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) {
        let mss = cfg.mss as u64;
        let acked = ack.saturating_sub(self.snd_una);
        let every_window = self.dctcp_ack(acked, ack, ece, cfg);
        let una = ack.max(self.snd_una);
        let (prior_una, prior_fack) = (self.snd_una, self.sack_state().sb.high_sacked(una));
        let reducing = self.in_recovery || self.sack_state().cwr;
        let lost_before = reducing.then(|| self.lost_end(cfg));
        let st = self.sack.as_deref_mut().expect("a SACK sender");
        let sacked = st.sb.update(una, opt);
        let delivered = (acked as i64 + sacked).max(0) as u64;
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            st.sb.rxt_end = st.sb.rxt_end.max(ack);
            if st.all_lost_below > 0 && ack >= st.all_lost_below {
                st.all_lost_below = 0;
            }
            self.rtt_sample(now, ts_echo, mss);
            self.backed_off = false;
            self.dupacks = 0;
            if self.snd_una >= self.snd_max {
                self.rto_timer.cancel();
            } else {
                self.arm_rto(now, out);
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una && sacked > 0 {
            self.dupacks += 1;
        }
        if self.rack().is_some() {
            let seen = (prior_una, prior_fack, acked, sacked);
            self.rack_on_ack(now, ts_echo, opt, seen, cfg);
        }
        // PRR's slow-start bound needs an ACK that advanced and marked no new loss
        let newly_lost = lost_before.is_some_and(|b| self.lost_end(cfg) > b.max(self.snd_una));
        let safe = acked > 0 && !newly_lost;
        let pipe = self.window_after_ack(acked, delivered, safe, cfg);
        if self.ece_cuts(ece, every_window, cfg) {
            match cfg.cwr_reduction {
                CwrReduction::Immediate => self.ecn_cut(mss),
                CwrReduction::Prr => self.cwr_start(delivered, pipe, safe, mss),
            }
        }
        self.fill_sack_from(pipe, now, cfg, out);
    }

    /// The window after an ACK that advanced `acked` bytes and reported `delivered`
    /// (`safe`: it advanced and marked nothing newly lost, see [`Prr::on_ack`]):
    /// PRR in recovery, slow start after a timeout, growth otherwise, and the start
    /// of recovery when a loss shows. Returns the pipe.
    pub(super) fn window_after_ack(
        &mut self,
        acked: u64,
        delivered: u64,
        safe: bool,
        cfg: &TcpConfig,
    ) -> u64 {
        let mss = cfg.mss as u64;
        let recovery_point = self.sack_state().recovery_point;
        let pipe = self.pipe(cfg);
        if self.in_recovery {
            if self.snd_una >= recovery_point {
                self.in_recovery = false;
                self.dupacks = 0;
                self.cwnd = self.ssthresh;
                if let Some(r) = self.sack_mut().rack.as_deref_mut() {
                    r.on_recovery_end();
                }
            } else {
                let st = self.sack.as_deref_mut().expect("a SACK sender");
                self.cwnd = st.prr.on_ack(delivered, pipe, self.ssthresh, mss, safe);
            }
            return pipe;
        }
        if self.sack_state().all_lost_below > 0 {
            // only an ACK that advanced SND.UNA grows the window, by what it
            // delivered (Linux's tcp_may_raise_cwnd: FLAG_DATA_ACKED, then
            // tcp_cong_avoid with acked_sacked; ns-3's ProcessAck in CA_LOSS): SACKs
            // alone, a hole still at SND.UNA, grow nothing
            if acked > 0 && !self.room_limited {
                self.grow(delivered, mss);
            }
            return pipe;
        }
        if self.sack_state().cwr {
            self.cwr_ack(delivered, pipe, safe, mss);
        } else if acked > 0 && !self.room_limited {
            self.grow(acked, mss);
        }
        let st = self.sack_state();
        let loss = match &st.rack {
            // RACK alone marks losses (Linux's `tcp_time_to_recover` with RACK on)
            Some(r) => r.lost_below > self.snd_una,
            None => {
                self.dupacks >= cfg.dupack_threshold
                    || st.sb.sacked_bytes() > 0
                        && st.sb.is_lost(self.snd_una, cfg.dupack_threshold, mss)
            }
        };
        if loss && self.snd_max > self.snd_una && self.snd_una >= recovery_point {
            let (una, max) = (self.snd_una, self.snd_max);
            let cwr = std::mem::take(&mut self.sack_mut().cwr);
            if !cwr {
                // a reduction paced by PRR goes on as the recovery's (Linux's
                // tcp_enter_recovery keeps a CWR state's ssthresh)
                self.ssthresh = self.loss_ssthresh(cfg);
                self.sack_mut().prr = Prr::start(max - una);
            }
            let st = self.sack.as_deref_mut().expect("a SACK sender");
            st.recovery_point = max;
            st.sb.rxt_end = una;
            if let Some(r) = st.rack.as_deref_mut() {
                r.resend_from = una;
                r.tlp.end_seq = None;
            }
            self.in_recovery = true;
            self.stats.fast_retransmits += 1;
            let pipe = self.pipe(cfg);
            let st = self.sack.as_deref_mut().expect("a SACK sender");
            // the fast retransmit goes whatever PRR allows (RFC 6675 §5, step 4.3);
            // this ACK marked the loss, so no slow-start MSS
            self.cwnd = st
                .prr
                .on_ack(delivered, pipe, self.ssthresh, mss, false)
                .max(pipe + mss);
            return pipe;
        }
        pipe
    }

    /// Sends what NextSeg gives while the pipe leaves room in cwnd and the host has
    /// room.
    pub(super) fn fill_sack(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let pipe = self.pipe(cfg);
        self.fill_sack_from(pipe, now, cfg, out);
    }

    /// [`fill_sack`](Self::fill_sack) with the pipe known: counted once, then as
    /// each segment adds to it (SetPipe's count: new data and a retransmission below
    /// HighRxt count once more, the rescue does not).
    pub(super) fn fill_sack_from(
        &mut self,
        mut pipe: u64,
        now: Time,
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) {
        let mss = cfg.mss as u64;
        let mut sent = false;
        self.room_limited = false;
        let repairing = self.in_recovery || self.sack_state().all_lost_below > 0;
        loop {
            debug_assert_eq!(pipe, self.pipe(cfg));
            if pipe >= self.cwnd {
                break; // no segment fits (each is at least a byte): skip NextSeg's search
            }
            let next = if repairing {
                match self.rack() {
                    Some(_) => self.next_seg_rack(cfg),
                    None => self.next_seg(cfg),
                }
            } else if self.snd_max < self.limit {
                Next::New(self.snd_max, (self.limit - self.snd_max).min(mss))
            } else {
                Next::Nothing
            };
            let (seq, len, retx) = match next {
                Next::Retransmit(s, l) | Next::Rescue(s, l) => (s, l, true),
                Next::New(s, l) => (s, l, false),
                Next::Nothing => break,
            };
            if pipe + len > self.cwnd {
                break;
            }
            let seg = Segment {
                seq,
                len: len as u32,
                retx,
            };
            if !self.emit(seg, cfg, out) {
                break;
            }
            sent = true;
            if !repairing {
                let st = self.sack_mut();
                if st.cwr {
                    st.prr.out += len;
                }
                if let Some(r) = st.rack.as_deref_mut() {
                    r.on_sent_new(seq, now);
                }
                pipe += len;
                self.snd_max += len;
                self.snd_nxt = self.snd_max;
                continue;
            }
            pipe += self.sent_in_repair(next, len, now);
        }
        if sent && !self.rto_timer.is_armed() {
            self.arm_rto(now, out);
        }
        if self.rack().is_some() {
            self.rack_arm_timers(now, cfg, out);
        }
    }

    /// NextSeg for this sender now.
    fn next_seg(&self, cfg: &TcpConfig) -> Next {
        let st = self.sack_state();
        let state = NextSegState {
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            limit: self.limit,
            mss: cfg.mss as u64,
            dupthresh: cfg.dupack_threshold,
            all_lost_below: st.all_lost_below,
            rescue: self.in_recovery && st.rescued != Some(st.recovery_point),
        };
        next_seg(&st.sb, &state)
    }

    /// Notes segment `next` of `len` bytes sent during a repair; what it adds to
    /// the pipe.
    fn sent_in_repair(&mut self, next: Next, len: u64, now: Time) -> u64 {
        let in_recovery = self.in_recovery;
        let st = self.sack.as_deref_mut().expect("a SACK sender");
        if in_recovery {
            st.prr.out += len;
        }
        match next {
            Next::Retransmit(seq, _) if st.rack.is_some() => {
                if let Some(r) = st.rack.as_deref_mut() {
                    r.on_retransmit(seq, seq + len, now);
                }
                self.stats.retransmits += 1;
                len
            }
            Next::Retransmit(seq, _) => {
                st.sb.rxt_end = st.sb.rxt_end.max(seq + len);
                self.stats.retransmits += 1;
                len
            }
            Next::Rescue(..) => {
                st.rescued = Some(st.recovery_point);
                self.stats.retransmits += 1;
                0
            }
            _ => {
                if let Some(r) = st.rack.as_deref_mut() {
                    r.on_sent_new(self.snd_max, now);
                }
                self.snd_max += len;
                self.snd_nxt = self.snd_max;
                len
            }
        }
    }

    /// ECE starts a window reduction paced by PRR (`cwr_reduction = "prr"`, Linux's
    /// `tcp_init_cwnd_reduction`): ssthresh is the reduced window, RecoverFS the
    /// window before it, and this ACK's delivery is the first the reduction counts.
    fn cwr_start(&mut self, delivered: u64, pipe: u64, safe: bool, mss: u64) {
        let target = self.ecn_target(mss);
        self.ssthresh = target;
        self.ca_acked = 0;
        self.cwr_end = self.snd_max.max(self.snd_una + 1);
        self.stats.ecn_cuts += 1;
        let prior = self.cwnd;
        let st = self.sack_mut();
        st.cwr = true;
        st.prr = Prr::start(prior);
        self.cwnd = st.prr.on_ack(delivered, pipe, target, mss, safe);
    }

    /// An ACK during a reduction paced by PRR: the window PRR allows, or ssthresh
    /// once the data sent before the reduction is acknowledged (Linux's
    /// `tcp_end_cwnd_reduction`). The window does not grow meanwhile.
    fn cwr_ack(&mut self, delivered: u64, pipe: u64, safe: bool, mss: u64) {
        let (una, end, ssthresh) = (self.snd_una, self.cwr_end, self.ssthresh);
        let st = self.sack_mut();
        if una >= end {
            st.cwr = false;
            self.cwnd = ssthresh;
        } else {
            self.cwnd = st.prr.on_ack(delivered, pipe, ssthresh, mss, safe);
        }
    }

    /// The SACK sender's timeout (see the module doc): the scoreboard is kept.
    pub(super) fn timeout_sack(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let (una, max) = (self.snd_una, self.snd_max);
        let st = self.sack.as_deref_mut().expect("a SACK sender");
        st.all_lost_below = max;
        st.recovery_point = max;
        st.sb.rxt_end = una;
        st.prr = Prr::default();
        st.cwr = false;
        if let Some(r) = st.rack.as_deref_mut() {
            r.on_timeout(una);
        }
        self.fill_sack(now, cfg, out);
    }
}
