//! HyStart, CUBIC's hybrid slow start as Linux's `tcp_cubic.c` runs it (since
//! 5.7, in microseconds): slow start ends, with ssthresh set to the window, when
//! either of two signs says the window has filled the path (Ha and Rhee, "Taming
//! the elephants: new TCP slow start", 2011).
//!
//! * **Rounds** (`bictcp_hystart_reset`): a round starts at the first ACK past the
//!   previous round's last segment; it records when (`round_start`), the highest
//!   segment sent by then (`end_seq`), and restarts the delay sampling.
//! * **The ACK train** (`HYSTART_ACK_TRAIN`): ACKs that follow each other within
//!   `hystart_ack_delta_us` = 2 ms form a train; when a round's train has lasted
//!   longer than (`delay_min` + `hystart_ack_delay`) / 2, the window is taken to
//!   hold a round trip of data. The halving is Linux's for a socket that is not
//!   paced (no fq qdisc, not BBR): `sk_pacing_status == SK_PACING_NONE`.
//!   `hystart_ack_delay` allows for ACKs the receiver holds back: the time to send
//!   four GSO packets (64 KB each) at the pacing rate, at most 1 ms; the pacing rate
//!   is Linux's in slow start, twice the window a smoothed RTT
//!   (`tcp_update_pacing_rate`, `tcp_pacing_ss_ratio` = 200 %).
//! * **The delay** (`HYSTART_DELAY`): the least RTT among a round's first eight
//!   samples (`HYSTART_MIN_SAMPLES`) above `delay_min` by more than
//!   clamp(`delay_min`/8, 4 ms, 16 ms).
//! * **When it looks** (`bictcp_acked`): only in slow start, at a window of at
//!   least `hystart_low_window` = 16 segments, and not after it has found an exit
//!   until a timeout resets it; a sample within 1 s of a congestion-avoidance
//!   epoch's start is not used (for `delay_min` either).
//!
//! Choice, ours: time is continuous (Linux counts microseconds).

use crate::engine::Time;
use crate::units::PS_PER_SEC;

/// `hystart_ack_delta_us`: the most time between two ACKs of one train.
pub const ACK_DELTA: Time = 2 * PS_PER_SEC / 1000;
/// `hystart_low_window`: the least window, in segments, at which HyStart looks.
pub const LOW_WINDOW: u64 = 16;
/// `HYSTART_MIN_SAMPLES`: RTT samples a round takes before judging the delay.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`: the delay threshold's bounds.
pub const DELAY_MIN: Time = 4 * PS_PER_SEC / 1000;
/// See [`DELAY_MIN`].
pub const DELAY_MAX: Time = 16 * PS_PER_SEC / 1000;
/// The largest GSO packet, bytes (`GSO_LEGACY_MAX_SIZE`, a device's default).
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `hystart_ack_delay`'s ceiling: 1 ms.
pub const ACK_DELAY_MAX: Time = PS_PER_SEC / 1000;

/// Why HyStart ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A round's ACK train lasted longer than half the least RTT.
    AckTrain,
    /// A round's least RTT rose past the threshold.
    Delay,
}

/// What an ACK tells HyStart.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// When it arrived.
    pub now: Time,
    /// Its RTT sample.
    pub rtt: Time,
    /// The cumulative ACK, bytes.
    pub snd_una: u64,
    /// The highest byte sent, plus one.
    pub snd_nxt: u64,
    /// The window, in segments.
    pub cwnd: u64,
    /// The segment size, bytes.
    pub mss: u64,
    /// The smoothed RTT (for the pacing rate).
    pub srtt: Time,
}

/// One sender's HyStart state.
#[derive(Clone, Debug, Default)]
pub struct HyStart {
    /// Whether an exit was found (until a timeout resets it).
    pub found: Option<Exit>,
    round_start: Time,
    last_ack: Time,
    end_seq: u64,
    curr_rtt: Time,
    sample_cnt: u32,
}

impl HyStart {
    /// A new round at `now`, ending with the segment before `snd_nxt`
    /// (`bictcp_hystart_reset`).
    pub fn new_round(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = Time::MAX;
        self.sample_cnt = 0;
    }

    /// An ACK in slow start; `delay_min` is the least RTT so far, this sample's
    /// included. The exit found, if this ACK finds one (`hystart_update`; the
    /// round restarts first when the ACK passes its end, as `cubictcp_cong_avoid`
    /// also does below the low window). Where both signs show on one ACK the
    /// train's is named (Linux counts both).
    /// With `sample` false (a sample Linux discards) only the round is kept.
    pub fn on_ack(&mut self, s: &AckSample, delay_min: Time, sample: bool) -> Option<Exit> {
        if s.snd_una > self.end_seq {
            self.new_round(s.now, s.snd_nxt);
        }
        if !sample || self.found.is_some() || s.cwnd < LOW_WINDOW {
            return None;
        }
        if s.now - self.last_ack <= ACK_DELTA {
            self.last_ack = s.now;
            let threshold = (delay_min + ack_delay(s)) / 2;
            if s.now - self.round_start > threshold {
                self.found = Some(Exit::AckTrain);
            }
        }
        self.curr_rtt = self.curr_rtt.min(s.rtt);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.found.is_none()
            && self.curr_rtt > delay_min + (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX)
        {
            self.found = Some(Exit::Delay);
        }
        self.found
    }
}

/// `hystart_ack_delay`: four GSO packets at Linux's slow-start pacing rate (twice
/// the window a smoothed RTT), at most 1 ms; 0 before an RTT sample.
pub fn ack_delay(s: &AckSample) -> Time {
    let window = 2 * s.cwnd.max(1) * s.mss;
    if s.srtt == 0 {
        return 0;
    }
    let t = (4 * GSO_MAX_SIZE as u128 * s.srtt as u128) / window as u128;
    (t.min(ACK_DELAY_MAX as u128)) as Time
}

#[cfg(test)]
mod tests;
