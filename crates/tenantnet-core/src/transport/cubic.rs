//! CUBIC's congestion avoidance (RFC 9438) as Linux's `tcp_cubic.c` runs it: the
//! window follows W_cubic(t) = C·(t − K)³ + W_max after each congestion event, never
//! below the window Reno would have (the Reno-friendly region), and a flow that
//! loses again before regaining its last maximum releases bandwidth sooner (fast
//! convergence).
//!
//! What is Linux's where the RFC leaves room, clause by clause:
//! * **β_cubic = 717/1024** (`beta`, ≈ 0.7002; RFC 9438 §4.6 and §5: 0.7) and
//!   **C = 0.4** (`bic_scale` 41/1024 × 10: RFC 9438 §5).
//! * **The window is counted in segments**, each increase a whole segment after
//!   `cnt` segments acknowledged (`tcp_cong_avoid_ai`): RFC 9438 §4.2's increment
//!   (target − cwnd)/cwnd per ACK in whole-segment steps.
//! * **K and the origin** (`bictcp_update`, RFC 9438 §4.2 eq. 2 with
//!   cwnd_epoch): at the first ACK of an epoch, K = ∛((W_max − cwnd)/C) and the
//!   curve's origin is W_max; when cwnd is already at or above W_max (no loss yet,
//!   or a maximum already regained), K = 0 and the origin is cwnd.
//! * **The target is W_cubic(t + RTT_min)** (`delay_min`, RFC 9438 §4.2: "t + RTT"),
//!   clamped as Linux clamps it: cnt = cwnd / (target − cwnd) above the window, one
//!   segment per 100 windows at or below it, at most 20 before the first loss (5 %
//!   a round trip), never under 2.
//! * **The Reno-friendly window** (RFC 9438 §4.3, `tcp_friendliness`): W_est grows a
//!   segment per 8·(1024 + β)/3/(1024 − β)/8 = 15/8 windows acknowledged, so
//!   α_cubic = 3(1 − β)/(1 + β) ≈ 0.53 a round trip; while W_est is above cwnd the
//!   window grows at least as fast as to reach it in a round trip.
//! * **At a congestion event** (loss or ECE, RFC 9438 §4.6 and §4.7,
//!   `cubictcp_recalc_ssthresh`): the epoch ends and the count toward the next
//!   segment of growth restarts (`snd_cwnd_cnt = 0`); W_max = cwnd·(1 + β)/2 if cwnd is
//!   below the last W_max (fast convergence), else cwnd; ssthresh =
//!   max(cwnd·β, 2) segments, from the window, not the flight. ECE is answered as a
//!   loss (Linux's CWR state asks the same `ssthresh`).
//! * **At a retransmission timeout** (`bictcp_state`, TCP_CA_Loss): ssthresh as
//!   above, then every CUBIC variable is reset (`bictcp_reset`, the least RTT
//!   too): the next epoch starts from the window it has, as if no loss had been
//!   seen (RFC 9438 §4.8 keeps W_max instead).
//!
//! * **The least RTT** (`bictcp_acked`): a sample within 1 s (`HZ`) of a
//!   congestion-avoidance epoch's start is not used ("discard delay samples right
//!   after fast recovery"), so `delay_min` then keeps its value from before.
//! * **Slow start** is Reno's, ended early by HyStart (`hystart.rs`). As in Linux,
//!   HyStart looks whenever the window is below ssthresh, during a PRR reduction
//!   too.
//!
//! Choices, ours: time is continuous (Linux counts t in jiffies, 1 to 4 ms, and
//! recomputes the target at most once a jiffy unless cwnd changed); where the
//! Reno-friendly window governs (a datacenter's small bandwidth-delay products, in
//! which K is seconds) this changes nothing. The restart after an idle period
//! (`CA_EVENT_TX_START`) is not modelled.

pub mod hystart;

use crate::engine::{to_secs, Time};
use crate::units::PS_PER_SEC;
use hystart::{AckSample, Exit, HyStart};

/// β_cubic × 1024 (Linux's `beta`).
pub const BETA_SCALED: u64 = 717;
/// 1024: Linux's `BICTCP_BETA_SCALE`.
pub const BETA_SCALE: u64 = 1024;
/// C, in segments per second cubed (RFC 9438 §5).
pub const C: f64 = 0.4;
/// Linux's `beta_scale`: the Reno-friendly window grows a segment per
/// `FRIENDLY_SCALE` / 8 windows acknowledged (integer arithmetic as Linux's).
pub const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA_SCALED) / 3 / (BETA_SCALE - BETA_SCALED);

/// One sender's CUBIC state, in segments.
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// W_max: the window at the last congestion event (after fast convergence); 0
    /// before any.
    pub last_max_cwnd: u64,
    /// When the current epoch started (None: at the next ACK in congestion
    /// avoidance).
    epoch_start: Option<Time>,
    /// K in seconds.
    pub k: f64,
    /// The curve's origin: W_max, or the window the epoch started at.
    pub origin: u64,
    /// Segments acknowledged toward the Reno-friendly window's next segment.
    ack_cnt: u64,
    /// W_est: the window Reno would have, in segments.
    pub tcp_cwnd: u64,
    /// Segments acknowledged per segment of growth.
    pub cnt: u64,
    /// Segments acknowledged toward the next segment of growth
    /// (`snd_cwnd_cnt`).
    cwnd_cnt: u64,
    /// The least RTT seen (`delay_min`), 0 before any sample.
    pub delay_min: Time,
    /// When the ACK being processed arrived.
    now: Time,
    /// HyStart's state.
    pub hystart: HyStart,
}

impl Cubic {
    /// W_cubic at `t` seconds into the epoch, in segments (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.origin as f64
    }

    /// An ACK of new data, `s`, with the window below ssthresh or not: `delay_min`
    /// and HyStart's look (Linux's `bictcp_acked`). The exit HyStart found, if
    /// this ACK found one: the sender then sets ssthresh to the window.
    pub fn ack_at(&mut self, s: &AckSample, slow_start: bool) -> Option<Exit> {
        self.now = s.now;
        let used = self.epoch_start.is_none_or(|e| s.now - e >= PS_PER_SEC);
        let rtt = s.rtt.max(1);
        if used && (self.delay_min == 0 || rtt < self.delay_min) {
            self.delay_min = rtt;
        }
        if !slow_start {
            return None;
        }
        self.hystart
            .on_ack(&AckSample { rtt, ..*s }, self.delay_min, used)
    }

    /// `acked` segments acknowledged by the ACK of [`Cubic::ack_at`] in congestion
    /// avoidance with the window at `cwnd` segments: the segments the window grows
    /// by (`bictcp_update` then `tcp_cong_avoid_ai`).
    pub fn on_ack(&mut self, cwnd: u64, acked: u64) -> u64 {
        self.update(self.now, cwnd, acked);
        let w = self.cnt;
        let mut grow = 0;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            grow += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            grow += delta;
        }
        grow
    }

    /// Sets `cnt` for an ACK of `acked` segments at `now` (`bictcp_update`).
    fn update(&mut self, now: Time, cwnd: u64, acked: u64) {
        let cwnd = cwnd.max(1);
        self.ack_cnt += acked;
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0.0;
                    self.origin = cwnd;
                } else {
                    self.k = ((self.last_max_cwnd - cwnd) as f64 / C).cbrt();
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        let t = to_secs(now - start + self.delay_min);
        let target = self.w_cubic(t).max(0.0).floor() as u64;
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20; // the first epoch grows at least 5 % a round trip
        }
        let delta = (cwnd * FRIENDLY_SCALE) >> 3;
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        self.cnt = self.cnt.max(2);
    }

    /// A congestion event (loss or ECE) with the window at `cwnd` segments: the
    /// new ssthresh in segments (`cubictcp_recalc_ssthresh`).
    pub fn congestion(&mut self, cwnd: u64) -> u64 {
        self.epoch_start = None;
        self.cwnd_cnt = 0; // Linux's tcp_init_cwnd_reduction and tcp_enter_loss
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA_SCALED) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA_SCALED / BETA_SCALE).max(2)
    }

    /// A retransmission timeout with `snd_nxt` the highest byte sent plus one:
    /// every variable back to its start, `delay_min` and HyStart's exit included
    /// (`bictcp_reset`), and a new HyStart round (`bictcp_hystart_reset`).
    pub fn reset(&mut self, snd_nxt: u64) {
        *self = Cubic {
            now: self.now,
            ..Cubic::default()
        };
        self.hystart.new_round(self.now, snd_nxt);
    }
}

#[cfg(test)]
mod tests;
