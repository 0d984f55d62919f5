//! The sender without SACK as Linux runs it (`transport.recovery = "reno_sack"`):
//! duplicate ACKs counted as segments SACKed for the pipe, Proportional Rate
//! Reduction as Linux computes it, one retransmission per partial ACK. ns-3's
//! `TcpSocketBase` without SACK does the same (`AddRenoSack`). Where RFC 6582's
//! NewReno (`recovery = "newreno"`) inflates and deflates the window, this keeps
//! the window at what PRR allows and counts in the pipe what the receiver holds.
//!
//! Linux's rules (`net/ipv4/tcp_input.c`), clause by clause:
//! * **A duplicate ACK** adds a segment to `sacked_out` (`tcp_add_reno_sack`), at
//!   most the segments out less one hole (`tcp_limit_reno_sacked`), and counts it
//!   delivered.
//! * **An ACK that advances** delivers max(segments acknowledged − `sacked_out`, 1)
//!   and takes segments acknowledged − 1 off `sacked_out` (`tcp_remove_reno_sacks`:
//!   "one ACK acked hole, the rest eat duplicate ACKs"); outside recovery
//!   `sacked_out` then restarts at 0 (`tcp_reset_reno_sack`).
//! * **Recovery starts** when `sacked_out` reaches the reordering degree, 3
//!   (`tcp_time_to_recover` with `tcp_dupack_heuristics` = `sacked_out` + 1 >
//!   `tp->reordering`): ssthresh from the congestion control, `high_seq` = the
//!   highest segment sent, PRR starts from the window (`tcp_init_cwnd_reduction`:
//!   `prior_cwnd` is the window, not the flight), and the head is marked lost
//!   (`tcp_newreno_mark_lost`).
//! * **The pipe** is the segments out less `sacked_out` and those marked lost, plus
//!   those retransmitted (`tcp_packets_in_flight`); a segment goes while the pipe is
//!   below the window, the head first when it is lost and not yet resent.
//! * **On every ACK in recovery the window is PRR's** (`tcp_cwnd_reduction`, Linux
//!   5.12 on): with the pipe above ssthresh, ⌈ssthresh · delivered / `prior_cwnd`⌉
//!   less what was sent; else RFC 6937's conservative reduction bound,
//!   max(delivered − sent, this ACK's delivered), one more (the slow-start bound)
//!   when the ACK advanced and marked nothing lost, at most ssthresh − pipe; at
//!   least one segment while nothing has been sent (the fast retransmit).
//! * **A partial ACK** marks the new head lost: one retransmission per partial ACK.
//! * **Recovery ends** once an ACK passes `high_seq`, with the window at ssthresh
//!   (`tcp_end_cwnd_reduction`); an ACK of exactly `high_seq` holds the state ("for
//!   Reno it is MUST to prevent false fast retransmits", `tcp_try_undo_recovery`).
//! * **A timeout** forgets the count and resends from the head (go-back-N, as
//!   `recovery = "newreno"`). Until an ACK passes what was sent before it
//!   (`high_seq`; an ACK of exactly `high_seq` holds the state, as in recovery) the
//!   sender is in Linux's Loss state (`tcp_process_loss`): duplicate ACKs count in
//!   the pipe only once new data beyond `high_seq` went out, and never start
//!   recovery, which `tcp_fastretrans_alert` enters only from Open or Disorder.
//!   Without this, the duplicate ACKs of the data a stuck recovery sent before the
//!   timeout started a recovery whose pipe counted that data, megabytes, and PRR
//!   set the window to it: go-back-N then resent them all at once.
//!
//! Left out: Linux's undo of a spurious recovery (`tcp_try_undo_*`, by timestamps)
//! and its reordering degree's growth (`tcp_check_reno_reordering`): the simulator's
//! paths do not reorder unless ECMP changes, and nothing is resent spuriously
//! before a timeout. ECE is answered as by `newreno`: at once, not during recovery.

use super::{SenderOut, TcpConfig, TcpSender, Time};
use crate::transport::sack::Prr;

/// Linux's count of a SACK-less sender's recovery, in segments.
#[derive(Clone, Debug, Default)]
pub(super) struct RenoSack {
    /// Duplicate ACKs counted as segments the receiver holds (`sacked_out`).
    sacked_out: u64,
    /// The head is marked lost (`lost_out`).
    lost: bool,
    /// The lost head was resent (`retrans_out`).
    resent: bool,
    /// The highest byte sent, plus one, when recovery began (`high_seq`).
    high_seq: u64,
    /// PRR's count in segments (`prr_delivered`, `prr_out`), from the window when
    /// recovery began (`prior_cwnd`): the SACK path's [`Prr`], counted in segments
    /// as Linux counts it.
    prr: Prr,
}

impl RenoSack {
    /// Bytes out that the pipe does not count: those SACKed and the lost head not
    /// yet resent.
    pub(super) fn credit(&self, mss: u64) -> u64 {
        (self.sacked_out + (self.lost && !self.resent) as u64) * mss
    }
}

impl TcpSender {
    fn reno(&mut self) -> &mut RenoSack {
        self.reno.as_deref_mut().expect("a reno_sack sender")
    }

    /// The pipe, bytes (`tcp_packets_in_flight`).
    fn reno_pipe(&self, mss: u64) -> u64 {
        let r = self.reno.as_deref().expect("a reno_sack sender");
        self.flight().saturating_sub(r.credit(mss))
    }

    /// The `reno_sack` sender's ACK (module doc).
    pub(super) fn on_ack_reno(
        &mut self,
        now: Time,
        (ack, ece, ts_echo): (u64, bool, Time),
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) {
        let mss = cfg.mss as u64;
        let acked = ack.saturating_sub(self.snd_una);
        let every_window = self.dctcp_ack(acked, ack, ece, cfg);
        let (delivered, newly_lost) = if acked > 0 {
            self.reno_advance(now, ack, ts_echo, cfg, out)
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.reno_dupack(cfg)
        } else {
            (0, false)
        };
        if self.in_recovery {
            self.reno_prr(delivered, newly_lost, acked > 0, mss);
        }
        if self.ece_cuts(ece, every_window, cfg) {
            self.ecn_cut(mss);
        }
        self.reno_send(now, cfg, out);
    }

    /// An ACK of `ack`, past `snd_una`: the segments delivered and whether the head
    /// was marked lost.
    fn reno_advance(
        &mut self,
        now: Time,
        ack: u64,
        ts_echo: Time,
        cfg: &TcpConfig,
        out: &mut SenderOut,
    ) -> (u64, bool) {
        let mss = cfg.mss as u64;
        let acked = ack - self.snd_una;
        let segs = acked.div_ceil(mss);
        let r = self.reno();
        let delivered = segs.saturating_sub(r.sacked_out).max(1);
        r.sacked_out = r.sacked_out.saturating_sub(segs - 1);
        (r.lost, r.resent) = (false, false); // the head was acknowledged
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.rtt_sample(now, ts_echo, mss);
        self.backed_off = false;
        self.dupacks = 0;
        let mut newly_lost = false;
        if self.in_recovery {
            let high_seq = self.reno().high_seq;
            if ack > high_seq {
                self.reno().sacked_out = 0;
                self.in_recovery = false;
                self.cwnd = self.ssthresh;
            } else if ack < high_seq {
                self.reno().lost = true;
                newly_lost = true;
            } else {
                self.reno().sacked_out = 0; // held until an ACK passes high_seq
            }
        } else {
            self.reno().sacked_out = 0;
            if !self.room_limited {
                self.grow(acked, mss);
            }
        }
        if self.snd_una >= self.snd_max {
            self.rto_timer.cancel();
        } else {
            self.arm_rto(now, out);
        }
        (delivered, newly_lost)
    }

    /// Whether the sender is in Linux's Loss state: after a timeout, until an ACK
    /// passes the data sent before it (module doc).
    fn reno_in_loss(&self) -> bool {
        self.loss_until > 0 && self.snd_una <= self.loss_until
    }

    /// A duplicate ACK: the segments delivered (0 or 1) and whether recovery began.
    fn reno_dupack(&mut self, cfg: &TcpConfig) -> (u64, bool) {
        let mss = cfg.mss as u64;
        self.dupacks += 1;
        let in_loss = self.reno_in_loss();
        if in_loss && self.snd_nxt <= self.loss_until {
            return (0, false); // go-back-N's duplicates (module doc: after a timeout)
        }
        let out_segs = self.flight().div_ceil(mss);
        let in_recovery = self.in_recovery;
        let r = self.reno();
        let before = r.sacked_out;
        let holes = (r.lost as u64).max(1);
        r.sacked_out = (r.sacked_out + 1).min(out_segs.saturating_sub(holes));
        let delivered = r.sacked_out - before.min(r.sacked_out);
        if in_recovery || in_loss || r.sacked_out < cfg.dupack_threshold as u64 {
            return (delivered, false);
        }
        self.ssthresh = self.loss_ssthresh(cfg);
        let (cwnd, snd_max) = (self.cwnd, self.snd_max);
        let r = self.reno();
        r.high_seq = snd_max;
        r.prr = Prr::start(cwnd / mss);
        r.lost = true;
        self.in_recovery = true;
        self.stats.fast_retransmits += 1;
        (delivered, true)
    }

    /// Linux's PRR (`tcp_cwnd_reduction`) for an ACK that delivered `delivered`
    /// segments (module doc).
    fn reno_prr(&mut self, delivered: u64, newly_lost: bool, advanced: bool, mss: u64) {
        if delivered == 0 {
            return;
        }
        let pipe = self.reno_pipe(mss).div_ceil(mss);
        let ssthresh = self.ssthresh / mss;
        let prr = &mut self.reno().prr;
        let window = prr.on_ack(delivered, pipe, ssthresh, 1, advanced && !newly_lost);
        // at least the fast retransmit while nothing has been sent
        let first = (prr.out == 0) as u64;
        self.cwnd = window.max(pipe + first) * mss;
    }

    /// Sends the lost head if the pipe allows, then new data (`fill`); in recovery
    /// what went counts toward PRR's `prr_out`.
    pub(super) fn reno_send(&mut self, now: Time, cfg: &TcpConfig, out: &mut SenderOut) {
        let mss = cfg.mss as u64;
        let before = out.segments.len();
        let r = self.reno.as_deref().expect("a reno_sack sender");
        if r.lost && !r.resent && self.reno_pipe(mss) < self.cwnd {
            self.retransmit_head(cfg, out);
            self.reno().resent = true;
        }
        let credit = self.reno().credit(mss);
        self.fill_past(now, cfg, out, credit);
        if self.in_recovery {
            self.reno().prr.out += (out.segments.len() - before) as u64;
        }
    }

    /// A timeout: the count is forgotten (`tcp_enter_loss`).
    pub(super) fn reno_timeout(&mut self) {
        if let Some(r) = self.reno.as_deref_mut() {
            *r = RenoSack::default();
        }
    }
}
