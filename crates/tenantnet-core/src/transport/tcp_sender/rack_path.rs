//! The sender with RACK-TLP (`transport.recovery = "rack"`, RFC 8985), on top of
//! the SACK sender (`sack_path.rs`), as Linux runs it:
//!
//! * Losses are marked by RACK alone (DupThresh does not mark, §6.2 and Linux's
//!   `tcp_time_to_recover`); recovery starts when RACK marks one, with PRR as with
//!   SACK. A lost retransmission is marked like any segment and sent again.
//! * NextSeg sends lost bytes with no retransmission in flight, then new data
//!   (Linux removed RFC 6675's rules 3 and 4, which TLP replaces).
//! * The reorder timer runs detection again when a segment sent before the last
//!   delivered one would be lost if nothing arrives (§6.2 step 5).
//! * TLP (§7): while nothing is SACKed and no recovery runs, every ACK of new data
//!   and every transmission re-arms the probe timer; when it fires, one new
//!   segment goes if there is one (whatever the window), else the last segment
//!   again, and the retransmission timer restarts. An ACK past the probe without a
//!   D-SACK for it shows a loss the probe repaired: the window is reduced once
//!   (Linux's `tcp_process_tlp_ack`).
//!
//! The three timers share the retransmission timer's events
//! ([`LazyTimer::wake`](crate::engine::timer::LazyTimer::wake)), as Linux's share
//! one kernel timer.

use super::{Segment, SenderOut, TcpConfig, TcpSender, Time};
use crate::transport::rack::{probe_timeout, Rack, Tlp};
use crate::transport::sack::{Next, SackOption};

/// What an ACK showed before it was applied: the cumulative ACK and the highest
/// SACKed byte before it, the bytes it acknowledged and the change of SACKed bytes.
pub(super) type Seen = (u64, u64, u64, i64);

impl TcpSender {
    fn rack_mut(&mut self) -> &mut Rack {
        self.sack_mut().rack.as_deref_mut().expect("a RACK sender")
    }

    /// Un-SACKed bytes of the retransmissions in flight: what pipe counts for them
    /// (debug builds check the running count against the scoreboard).
    pub(super) fn rack_retransmitted(&self, r: &Rack) -> u64 {
        debug_assert_eq!(r.retrans_out, {
            let sb = &self.sack_state().sb;
            let una = self.snd_una;
            let unsacked = |&&(s, e, _): &&(u64, u64, bool)| {
                let e = e.min(self.snd_max);
                sb.unsacked_below(una, e) - sb.unsacked_below(una, s.clamp(una, e))
            };
            r.in_flight()
                .iter()
                .filter(|&&(_, e, _)| e > una)
                .map(|x| unsacked(&x))
                .sum::<u64>()
        });
        r.retrans_out
    }

    /// RACK's part of an ACK (RFC 8985 §6.2 steps 1–5, §7.4): reordering seen,
    /// RACK's segment, D-SACK, the probe's outcome, and loss detection.
    pub(super) fn rack_on_ack(
        &mut self,
        now: Time,
        ts_echo: Time,
        opt: Option<&SackOption>,
        (prior_una, prior_fack, acked, sacked): Seen,
        cfg: &TcpConfig,
    ) {
        let (una, snd_max) = (self.snd_una, self.snd_max);
        let after_timeout = self.sack_state().all_lost_below > 0;
        let r = self.rack_mut();
        if let Some(o) = opt {
            r.sacked(o.blocks());
        }
        let first = opt.filter(|o| !o.dsack && o.n > 0 && sacked > 0);
        // the segment that triggered the ACK: the first SACK block holds it, else
        // it filled the hole at the old cumulative ACK
        let trigger = match first {
            Some(o) => Some(o.blocks[0]),
            None => (acked > 0).then_some((prior_una, una)),
        };
        if let Some((s, e)) = trigger {
            let below_fack = match first {
                Some(_) => e <= prior_fack,
                None => prior_fack > prior_una,
            };
            if below_fack && !after_timeout && r.rtx_at(s).is_none() {
                r.reordering_seen = true;
            }
            r.update(ts_echo, e, now);
        }
        r.acked(una);
        let dsack = opt.filter(|o| o.dsack && o.n > 0).map(|o| o.blocks[0]);
        if dsack.is_some() {
            r.on_dsack(una, snd_max);
        }
        if self.tlp_outcome(una, acked, sacked, dsack) {
            // the probe repaired a loss: the window is reduced once
            self.ssthresh = self.loss_ssthresh(cfg);
            self.cwnd = self.cwnd.min(self.ssthresh);
            self.ca_acked = 0;
        }
        self.rack_detect(now, cfg);
    }

    /// TLP_process_ack (§7.4.2): ends the probe's episode when the ACK reaches
    /// it; whether the episode showed a loss that needs a window reduction.
    fn tlp_outcome(
        &mut self,
        una: u64,
        acked: u64,
        sacked: i64,
        dsack: Option<(u64, u64)>,
    ) -> bool {
        let r = self.rack_mut();
        let Some(end) = r.tlp.end_seq.filter(|&e| una >= e) else {
            return false;
        };
        let spurious = dsack.is_some_and(|(_, e)| e == end);
        let reduce = r.tlp.is_retrans && !spurious && una > end;
        let pure_dup = acked == 0 && sacked == 0;
        if !r.tlp.is_retrans || spurious || reduce || pure_dup {
            r.tlp.end_seq = None;
        }
        reduce
    }

    /// RACK_detect_loss with this connection's reordering window; whether a new
    /// loss was found.
    fn rack_detect(&mut self, now: Time, cfg: &TcpConfig) -> bool {
        let mss = cfg.mss as u64;
        let st = self.sack_state();
        let recovering = self.in_recovery || st.all_lost_below > 0;
        let sacked = st.sb.sacked_bytes();
        let many_sacked = sacked > (cfg.dupack_threshold as u64).saturating_sub(1) * mss;
        let srtt = self.rtt.srtt().unwrap_or(Time::MAX);
        let (una, max) = (self.snd_una, self.snd_max);
        let r = self.rack_mut();
        if sacked == 0 && r.in_flight().is_empty() {
            // nothing delivered above an un-delivered segment: nothing to judge
            r.reo_deadline = None;
            return false;
        }
        let reo_wnd = r.reo_wnd(recovering, many_sacked, srtt);
        r.detect_loss(now, reo_wnd, una, max)
    }

    /// NextSeg with RACK: the first lost byte with no retransmission in flight,
    /// else new data. The walk's start moves up past what it found in flight.
    pub(super) fn next_seg_rack(&mut self, cfg: &TcpConfig) -> Next {
        let mss = cfg.mss as u64;
        let lost = self.lost_params(cfg);
        let lost_end = lost.2.min(self.snd_max);
        let una = self.snd_una;
        let st = self.sack.as_deref_mut().expect("a SACK sender");
        let r = st.rack.as_deref_mut().expect("a RACK sender");
        let mut at = una.max(r.resend_from);
        while let Some((s, e, _)) = st.sb.first_hole(at, lost_end, lost) {
            if let Some((_, end)) = r.rtx_at(s) {
                at = end;
                continue;
            }
            r.resend_from = s;
            let e = e.min(r.rtx_start_above(s).unwrap_or(e)).min(s + mss);
            return Next::Retransmit(s, e - s);
        }
        r.resend_from = at;
        if self.snd_max < self.limit {
            Next::New(self.snd_max, (self.limit - self.snd_max).min(mss))
        } else {
            Next::Nothing
        }
    }

    /// After an ACK or a transmission: the probe timer armed while a probe may
    /// be sent (§7.2), and an event asked for the earliest RACK deadline.
    pub(super) fn rack_arm_timers(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let mss = cfg.mss as u64;
        let st = self.sack_state();
        let flight = self.snd_max - self.snd_una;
        let may_probe = !self.in_recovery
            && st.all_lost_below == 0
            && st.sb.sacked_bytes() == 0
            && flight > 0
            && st.rack.as_deref().is_some_and(|r| r.tlp.end_seq.is_none());
        let deadline = may_probe.then(|| {
            let delack = if cfg.delayed_ack {
                cfg.delayed_ack_timeout
            } else {
                0
            };
            let srtt = self.rtt.srtt();
            let rtos = (cfg.min_rto, cfg.initial_rto);
            let pto = probe_timeout(cfg.tlp_timeout, srtt, flight <= mss, delack, rtos);
            let at = now + pto.max(1);
            self.rto_timer.deadline().map_or(at, |rto| at.min(rto))
        });
        self.rack_mut().tlp.deadline = deadline;
        self.rack_wake(out);
    }

    /// Asks for a timer event at the earliest RACK deadline.
    fn rack_wake(&mut self, out: &mut SenderOut) {
        let r = self.rack().expect("a RACK sender");
        let next = match (r.reo_deadline, r.tlp.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(e) = next.and_then(|t| self.rto_timer.wake(t)) {
            out.rto_event = Some(e);
        }
    }

    /// A timer event at `now` (after the retransmission timer's own handling):
    /// the reorder timer's detection and the probe, whichever are due.
    pub(super) fn rack_timers_fired(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let r = self.rack().expect("a RACK sender");
        let reo_due = r.reo_deadline.is_some_and(|t| t <= now);
        let probe_due = r.tlp.deadline.is_some_and(|t| t <= now);
        if reo_due {
            self.rack_mut().reo_deadline = None;
            if self.rack_detect(now, cfg) {
                let pipe = self.window_after_ack(0, 0, false, cfg);
                self.fill_sack_from(pipe, now, cfg, out);
            }
        }
        if probe_due && self.rack().is_some_and(|r| r.tlp.deadline.is_some()) {
            self.rack_mut().tlp.deadline = None;
            self.send_probe(now, cfg, out);
        }
        self.rack_wake(out);
    }

    /// The tail loss probe (§7.3): one new segment if there is one, else the last
    /// segment again; then the retransmission timer restarts.
    fn send_probe(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let mss = cfg.mss as u64;
        if self.snd_una >= self.snd_max {
            return;
        }
        let seg = if self.snd_max < self.limit {
            let len = (self.limit - self.snd_max).min(mss);
            Segment {
                seq: self.snd_max,
                len: len as u32,
                retx: false,
            }
        } else {
            let start = ((self.snd_max - 1) / mss * mss).max(self.snd_una);
            Segment {
                seq: start,
                len: (self.snd_max - start) as u32,
                retx: true,
            }
        };
        if !self.emit(seg, cfg, out) {
            return; // no room in the host: the retransmission timer stays
        }
        self.stats.probes += 1;
        let end = seg.seq + seg.len as u64;
        if seg.retx {
            self.stats.retransmits += 1;
            self.rack_mut().on_retransmit(seg.seq, end, now);
        } else {
            self.rack_mut().on_sent_new(seg.seq, now);
            self.snd_max = end;
            self.snd_nxt = end;
        }
        let snd_max = self.snd_max;
        self.rack_mut().tlp = Tlp {
            end_seq: Some(snd_max),
            is_retrans: seg.retx,
            deadline: None,
        };
        self.arm_rto(now, out);
    }
}
