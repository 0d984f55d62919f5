//! RACK-TLP loss detection (RFC 8985), as Linux runs it: a segment is lost when a
//! segment sent after it has been delivered and more than an RTT plus a reordering
//! window has passed since it was sent; a tail loss that leaves no ACK to learn
//! from is found by a probe sent two round trips after the last ACK.
//!
//! The state keeps send times compactly. Original transmissions go out in sequence
//! order, so their send times are kept a burst at a time (the first byte and the
//! time of each burst sent at one instant) and every RACK rule over them is a
//! binary search: the lost ones are the un-SACKed bytes below one point
//! ([`Rack::lost_below`]). Retransmissions in flight are kept one by one, in the
//! order sent (Linux's time-sorted list), and by sequence for NextSeg.
//!
//! Choices where RFC 8985 leaves room, or where tenantnet's model differs:
//! * RACK.xmit_ts and RACK.rtt come from the send time the ACK echoes (the segment
//!   that triggered it), so a retransmission's RTT is never ambiguous (§6.2 step 2
//!   with timestamps). RACK.end_seq is the end of the first SACK block when it
//!   holds new data, else the cumulative ACK.
//! * Reordering is seen (§6.2 step 3) when an ACK delivers bytes below the highest
//!   SACKed byte that were not retransmitted (no retransmission of them in flight
//!   and no timeout since); a retransmission declared lost whose original then
//!   arrives counts as reordering too (Linux would remember that it was ever
//!   retransmitted).
//! * RACK.min_RTT is the minimum over the connection (Linux keeps a windowed one).
//! * TLP's timeout ([`probe_timeout`]) is RFC 8985's (2·SRTT, plus the
//!   delayed-ACK timeout when one segment is out and the receiver delays ACKs) or
//!   Linux's (2·SRTT plus TCP_TIMEOUT_MIN, 2 ms, or plus the minimum RTO when one
//!   segment is out); never later than the retransmission timer.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::transport::TlpTimeout;

/// RACK's reordering-window state (RFC 8985 §6.2 step 4).
#[derive(Clone, Copy, Debug)]
struct ReoWnd {
    /// RACK.reo_wnd_mult.
    mult: u32,
    /// RACK.reo_wnd_persist.
    persist: u32,
    /// RACK.dsack_round: snd_nxt when the multiplier last grew.
    dsack_round: Option<u64>,
}

impl Default for ReoWnd {
    fn default() -> Self {
        ReoWnd {
            mult: 1,
            persist: 0,
            dsack_round: None,
        }
    }
}

/// What the tail loss probe is doing (RFC 8985 §7).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    /// TLP.end_seq: snd_max when the probe went; `None`: no probe outstanding.
    pub end_seq: Option<u64>,
    /// TLP.is_retrans: the probe was a retransmission.
    pub is_retrans: bool,
    /// When the probe timer expires, if armed.
    pub deadline: Option<Time>,
}

/// A connection's RACK-TLP state.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts: send time of the most recently sent segment known delivered.
    pub xmit_ts: Time,
    /// RACK.end_seq: the end of that segment.
    pub end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    pub rtt: Time,
    /// RACK.min_RTT.
    pub min_rtt: Option<Time>,
    /// RACK.reordering_seen.
    pub reordering_seen: bool,
    reo: ReoWnd,
    /// Original transmissions: the first byte and send time of each burst, in order.
    sent: VecDeque<(u64, Time)>,
    /// Retransmissions in flight in the order sent: `[start, end)` and send time.
    rtx: VecDeque<(u64, u64, Time)>,
    /// The same ranges sorted by sequence, each with whether it has been SACKed.
    rtx_seq: Vec<(u64, u64, bool)>,
    /// Bytes of the retransmissions in flight not SACKed (Linux's `retrans_out`):
    /// what the pipe counts for them.
    pub retrans_out: u64,
    /// Every un-SACKed byte of an original transmission below it is lost.
    pub lost_below: u64,
    /// Every lost un-SACKed byte below it has a retransmission in flight.
    pub resend_from: u64,
    /// The reorder timer's deadline (RACK's "reo_timeout"), if armed.
    pub reo_deadline: Option<Time>,
    /// The tail loss probe.
    pub tlp: Tlp,
}

/// RACK_sent_after (RFC 8985 §6.2): whether a segment sent at `t1` ending at
/// `e1` went after one sent at `t2` ending at `e2`.
fn sent_after(t1: Time, e1: u64, t2: Time, e2: u64) -> bool {
    t1 > t2 || (t1 == t2 && e1 > e2)
}

impl Rack {
    /// New data `[seq, ..)` went out at `now`.
    pub fn on_sent_new(&mut self, seq: u64, now: Time) {
        if self.sent.back().is_none_or(|r| r.1 != now) {
            self.sent.push_back((seq, now));
        }
    }

    /// `[s, e)` was retransmitted at `now`.
    pub fn on_retransmit(&mut self, s: u64, e: u64, now: Time) {
        self.rtx.push_back((s, e, now));
        let i = self.rtx_seq.partition_point(|r| r.0 < s);
        self.rtx_seq.insert(i, (s, e, false));
        self.retrans_out += e - s;
        if s <= self.resend_from {
            self.resend_from = self.resend_from.max(e);
        }
    }

    /// The retransmission in flight that holds byte `seq`, as `[start, end)`.
    pub fn rtx_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.rtx_seq.partition_point(|r| r.1 <= seq);
        self.rtx_seq
            .get(i)
            .filter(|r| r.0 <= seq)
            .map(|r| (r.0, r.1))
    }

    /// The first byte above `seq` where a retransmission in flight starts.
    pub fn rtx_start_above(&self, seq: u64) -> Option<u64> {
        let i = self.rtx_seq.partition_point(|r| r.0 <= seq);
        self.rtx_seq.get(i).map(|r| r.0)
    }

    /// The retransmissions in flight, by sequence, each with whether it has been
    /// SACKed.
    pub fn in_flight(&self) -> &[(u64, u64, bool)] {
        &self.rtx_seq
    }

    /// An ACK SACKed `blocks`: the retransmissions in flight they cover leave
    /// [`retrans_out`](Self::retrans_out).
    pub fn sacked(&mut self, blocks: &[(u64, u64)]) {
        if self.rtx_seq.is_empty() {
            return;
        }
        for &(bs, be) in blocks {
            let mut i = self.rtx_seq.partition_point(|r| r.1 <= bs);
            while let Some(r) = self.rtx_seq.get_mut(i).filter(|r| r.0 < be) {
                if !r.2 && r.0 >= bs && r.1 <= be {
                    r.2 = true;
                    self.retrans_out -= r.1 - r.0;
                }
                i += 1;
            }
        }
    }

    /// Removes the retransmission `[s, e)` from those in flight.
    fn forget(&mut self, s: u64, e: u64) {
        let i = self.rtx_seq.partition_point(|r| r.0 < s);
        if let Some(&(rs, re, sacked)) = self.rtx_seq.get(i).filter(|r| (r.0, r.1) == (s, e)) {
            self.rtx_seq.remove(i);
            if !sacked {
                self.retrans_out -= re - rs;
            }
        }
    }

    /// Everything below `una` is acknowledged: its records go.
    pub fn acked(&mut self, una: u64) {
        while self.sent.len() >= 2 && self.sent[1].0 <= una {
            self.sent.pop_front();
        }
        if self.rtx_seq.first().is_some_and(|r| r.1 <= una) {
            let n = self.rtx_seq.partition_point(|r| r.1 <= una);
            for r in self.rtx_seq.drain(..n) {
                if !r.2 {
                    self.retrans_out -= r.1 - r.0;
                }
            }
            self.rtx.retain(|r| r.1 > una);
        }
        self.resend_from = self.resend_from.max(una);
    }

    /// A retransmission timeout: every retransmission in flight counts as lost
    /// (Linux's `tcp_enter_loss`), the probe and the reorder timer end.
    pub fn on_timeout(&mut self, una: u64) {
        self.rtx.clear();
        self.rtx_seq.clear();
        self.retrans_out = 0;
        self.resend_from = una;
        self.reo_deadline = None;
        self.tlp = Tlp::default();
    }

    /// RACK_update (§6.2 step 2): a segment sent at `ts` ending at `end` was
    /// delivered, as seen at `now`.
    pub fn update(&mut self, ts: Time, end: u64, now: Time) {
        let rtt = now.saturating_sub(ts);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        if sent_after(ts, end, self.xmit_ts, self.end_seq) {
            self.xmit_ts = ts;
            self.end_seq = end;
            self.rtt = rtt;
        }
    }

    /// A D-SACK arrived with `snd_nxt` the next byte to send (§6.2 step 4: the
    /// reordering window grows once per round trip, and holds for 16 recoveries).
    pub fn on_dsack(&mut self, snd_una: u64, snd_nxt: u64) {
        if self.reo.dsack_round.is_some_and(|r| snd_una >= r) {
            self.reo.dsack_round = None;
        }
        if self.reo.dsack_round.is_none() {
            self.reo.dsack_round = Some(snd_nxt);
            self.reo.mult += 1;
            self.reo.persist = 16;
        }
    }

    /// Loss recovery ended (§6.2 step 4: the grown window decays over 16).
    pub fn on_recovery_end(&mut self) {
        if self.reo.persist > 0 {
            self.reo.persist -= 1;
            if self.reo.persist == 0 {
                self.reo.mult = 1;
            }
        }
    }

    /// RACK.reo_wnd (§6.2 step 4): zero while no reordering was seen and the
    /// sender is recovering or DupThresh segments are SACKed; else
    /// min(mult · min_RTT / 4, SRTT).
    pub fn reo_wnd(&self, recovering: bool, dupthresh_sacked: bool, srtt: Time) -> Time {
        if !self.reordering_seen && (recovering || dupthresh_sacked) {
            return 0;
        }
        (self.reo.mult as Time * self.min_rtt.unwrap_or(0) / 4).min(srtt)
    }

    /// RACK_detect_loss (§6.2 step 5) at `now` with reordering window `reo_wnd`,
    /// for a connection whose bytes `[snd_una, snd_max)` are outstanding:
    /// raises [`lost_below`](Self::lost_below) over original transmissions,
    /// drops lost retransmissions from the ones in flight (their bytes need
    /// sending again), and arms the reorder timer for when the last segment sent
    /// before RACK's would be lost if nothing arrives (the step's
    /// `timeout = max(remaining, timeout)`; over new data, at the granularity of
    /// bursts, so the burst of RACK's own segment may set it). Whether anything
    /// new was found lost.
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time, snd_una: u64, snd_max: u64) -> bool {
        let wait = self.rtt + reo_wnd;
        let (lost_end, timer_o) = self.originals_lost(now, wait, snd_max);
        let mut found = lost_end > self.lost_below.max(snd_una);
        self.lost_below = self.lost_below.max(lost_end);
        while let Some(&(s, e, ts)) = self.rtx.front() {
            if !sent_after(self.xmit_ts, self.end_seq, ts, e) || ts + wait > now {
                break;
            }
            self.rtx.pop_front();
            self.forget(s, e);
            self.resend_from = self.resend_from.min(s);
            found = true;
        }
        // retransmissions are kept in send order: the last one sent before RACK's
        let timer_r = self
            .rtx
            .iter()
            .take_while(|r| sent_after(self.xmit_ts, self.end_seq, r.2, r.1))
            .last()
            .map(|r| r.2 + wait);
        self.reo_deadline = timer_o.max(timer_r);
        found
    }

    /// Over original transmissions: where the lost ones end (every byte below
    /// was sent before RACK's segment and `wait` or longer ago), and when the last
    /// one sent before RACK's segment would be.
    fn originals_lost(&self, now: Time, wait: Time, snd_max: u64) -> (u64, Option<Time>) {
        let end_of = |k: usize| self.sent.get(k + 1).map_or(snd_max, |r| r.0);
        // bursts sent no later than RACK's segment: the last may hold it
        let a = self.sent.partition_point(|r| r.1 <= self.xmit_ts);
        let before = match a {
            0 => 0,
            k if self.sent[k - 1].1 == self.xmit_ts => {
                self.end_seq.clamp(self.sent[k - 1].0, end_of(k - 1))
            }
            k => end_of(k - 1),
        };
        // bursts sent `wait` or longer ago
        let b = self.sent.partition_point(|r| r.1 + wait <= now);
        let expired = if b == 0 {
            self.sent.front().map_or(snd_max, |r| r.0)
        } else {
            end_of(b - 1)
        };
        if expired < before {
            // the burst holding the last byte sent before RACK's segment
            let last = self.sent.partition_point(|r| r.0 < before);
            (expired, Some(self.sent[last - 1].1 + wait))
        } else {
            (before, None)
        }
    }
}

/// Linux's TCP_TIMEOUT_MIN, added to the probe timeout with more than one segment
/// out: 2 ms.
pub const LINUX_TIMEOUT_MIN: Time = 2_000_000_000;

/// TLP's probe timeout (RFC 8985 §7.2) in the style `how`, given SRTT (if
/// sampled), whether one segment is outstanding, the receiver's delayed-ACK
/// timeout if it delays ACKs (`0` if not), the minimum RTO, and the initial RTO
/// to use before any sample.
pub fn probe_timeout(
    how: TlpTimeout,
    srtt: Option<Time>,
    one_segment: bool,
    delayed_ack: Time,
    (min_rto, initial): (Time, Time),
) -> Time {
    let Some(s) = srtt else { return initial };
    2 * s
        + match (how, one_segment) {
            (TlpTimeout::Rfc8985, true) => delayed_ack,
            (TlpTimeout::Rfc8985, false) => 0,
            (TlpTimeout::Linux, true) => min_rto,
            (TlpTimeout::Linux, false) => LINUX_TIMEOUT_MIN,
        }
}

#[cfg(test)]
mod tests;
