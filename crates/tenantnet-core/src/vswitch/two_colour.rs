//! Trinity's two-colour token bucket (§III-B, Fig. 4), a mode of a vswitch
//! [`Shaper`](super::Shaper): a VM-to-VM channel with two lanes and two buckets.
//!
//! * Token bucket 1 makes **green** tokens at R_G (the shaper's own bucket), token
//!   bucket 2 **red** tokens at R_W (here). Green is spent first; red only when no
//!   green token is available (T:L466-474).
//! * The **priority lane** (Trinity's short-flow buffer) spends green tokens only;
//!   its head waits for new green tokens when there are none (T:L492-494,
//!   T:L512-518).
//! * The **normal lane** (the long-flow buffer) sends green when green tokens are
//!   available *and the priority lane is empty*, otherwise red; with no red token
//!   either, its packets wait (T:L520-533).
//! * Each released packet is coloured: the DSCP of its colour, and ECT whatever its
//!   transport (T:L683-687, T:L809-816).
//!
//! * **Colour-transition delay τ** (T:L744-754): "when there is a need to change
//!   the colors of packets from red to green, we defer the change by τ seconds", so
//!   that other flows may take the green tokens and the lane's red packets drain
//!   before green ones overtake them. The paper gives no τ and does not say when
//!   the deferral starts. Here a normal lane that has sent red may send green τ
//!   after the earlier of its last red packet and the moment green tokens became
//!   available, or as soon as the green bucket is full (its tokens would
//!   otherwise be lost); meanwhile it goes on in red while it has red tokens. Read
//!   as "τ after the last red packet", a backlogged lane with red tokens would
//!   never turn green again and would lose its guarantee. The unit is the
//!   channel's normal lane; the spec reads it per flow, and with one flow per
//!   channel the two agree.
//!
//! Buckets are exact (event-driven) rather than polled every 100 µs as in the
//! kernel module (`rl.h`); both start full.

use std::collections::VecDeque;

use super::token_bucket::TokenBucket;
use crate::engine::Time;
use crate::net::PktId;

/// A released packet's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// Within the channel's guarantee (green tokens).
    Green,
    /// Work-conserving (red tokens).
    Red,
}

/// Which of a two-colour shaper's queues a packet joins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lane {
    /// The normal lane: green, else red (Trinity's long-flow buffer). A plain
    /// shaper's only queue.
    #[default]
    Normal,
    /// The priority lane: green only, served first (Trinity's short-flow buffer).
    Priority,
}

/// The second lane, the red bucket and the colouring of a two-colour shaper.
#[derive(Clone, Debug)]
pub struct TwoColour {
    /// The priority lane's packets and sizes.
    priority: VecDeque<(PktId, u32)>,
    /// Bytes in the priority lane.
    priority_bytes: u64,
    /// Token bucket 2: red tokens at R_W.
    red: TokenBucket,
    /// TCP data whose last byte is below this offset in its flow joins the priority
    /// lane (Trinity's short-flow threshold).
    pub priority_below: u64,
    /// DSCP of green and red packets.
    pub dscp: [u8; 2],
    /// Wire bytes released green and red so far.
    pub sent: [u64; 2],
    /// The colour-transition delay τ (0: none).
    pub tau: Time,
    /// When the normal lane last sent a red packet.
    last_red: Option<Time>,
    /// The red rate's epoch, which red packets carry (`Packet::epoch`): Trinity's
    /// `refined` controller starts a new one at each cut of R_W.
    pub epoch: u16,
}

impl TwoColour {
    /// A second lane and a full red bucket of `burst` bytes at `red_bps`.
    pub fn new(red_bps: u64, burst: u64, priority_below: u64, dscp: [u8; 2]) -> Self {
        TwoColour {
            priority: VecDeque::new(),
            priority_bytes: 0,
            red: TokenBucket::bytes(red_bps, burst),
            priority_below,
            dscp,
            sent: [0; 2],
            tau: 0,
            last_red: None,
            epoch: 0,
        }
    }

    /// When the normal lane may send green, green tokens having been available
    /// since `green` and the green bucket full at `full`: at once with no τ or no
    /// red sent in the last τ, else τ after the earlier of the last red packet and
    /// `green`, or when the bucket is full if that is sooner.
    #[inline]
    pub fn green_after(&self, green: Time, full: Time) -> Time {
        match self.last_red {
            Some(red) if self.tau > 0 => green.max((red.min(green) + self.tau).min(full)),
            _ => green,
        }
    }

    /// R_W, bit/s.
    pub fn red_rate(&self) -> u64 {
        self.red.rate()
    }

    /// Sets R_W at `now`.
    pub fn set_red_rate(&mut self, now: Time, bps: u64) {
        self.red.set_rate(now, bps.max(1));
    }

    /// The DSCP of colour `c`.
    #[inline]
    pub fn dscp_of(&self, c: Colour) -> u8 {
        self.dscp[c as usize]
    }

    /// Bytes in the priority lane.
    #[inline]
    pub fn priority_bytes(&self) -> u64 {
        self.priority_bytes
    }

    /// Packets in the priority lane.
    pub fn priority_len(&self) -> usize {
        self.priority.len()
    }

    /// Whether the priority lane is empty.
    #[inline]
    pub fn priority_empty(&self) -> bool {
        self.priority.is_empty()
    }

    /// Appends a packet to the priority lane.
    #[inline]
    pub fn push_priority(&mut self, id: PktId, size: u32) {
        self.priority.push_back((id, size));
        self.priority_bytes += size as u64;
    }

    /// The head of the priority lane.
    #[inline]
    pub fn priority_head(&self) -> Option<(PktId, u32)> {
        self.priority.front().copied()
    }

    /// Removes the head of the priority lane.
    #[inline]
    pub fn pop_priority(&mut self) {
        if let Some((_, size)) = self.priority.pop_front() {
            self.priority_bytes -= size as u64;
        }
    }

    /// When a red token is available for the next packet.
    #[inline]
    pub fn red_at(&self) -> Time {
        self.red.conform_at()
    }

    /// Spends red tokens for `size` bytes at `now`.
    #[inline]
    pub fn take_red(&mut self, now: Time, size: u32) {
        self.red.take(now, size as u64);
        self.last_red = Some(now);
    }

    /// Counts `size` bytes released in colour `c`.
    #[inline]
    pub fn count(&mut self, c: Colour, size: u32) {
        self.sent[c as usize] += size as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::VmId;
    use crate::vswitch::{Offer, Shaper};

    const MS: Time = 1_000_000_000;
    const PKT: u32 = 1500;

    fn channel(green: u64, red: u64) -> Shaper {
        // buckets with no burst beyond one packet, lanes of 100 packets, TCP data
        // below 10 000 B is short
        Shaper::two_colour(VmId(0), (green, red), (150_000, 0), 10_000, [1, 0])
    }

    /// Serves the shaper until `end`: the packets released, each with its colour
    /// and time.
    fn drain(sh: &mut Shaper, end: Time) -> Vec<(PktId, Colour, Time)> {
        let mut out = Vec::new();
        while let Some(t) = sh.next_departure() {
            if t > end {
                break;
            }
            while let Some((id, c)) = sh.pop_ready(t) {
                out.push((id, c.expect("a coloured packet"), t));
            }
        }
        out
    }

    #[test]
    fn a_backlogged_normal_lane_sends_green_at_rg_and_red_at_rw() {
        // 12 Mb/s green (one packet per ms) and 24 Mb/s red (two per ms)
        let mut sh = channel(12_000_000, 24_000_000);
        let mut out = Vec::new();
        for i in 0..100 {
            match sh.offer_in(0, PktId(i), PKT, false, Lane::Normal) {
                Offer::Pass(Some(c)) => out.push((PktId(i), c, 0)),
                o => assert_eq!(o, Offer::Queued),
            }
        }
        // the first packet takes the green token, the second the red one
        assert_eq!(
            out.iter().map(|o| o.1).collect::<Vec<_>>(),
            [Colour::Green, Colour::Red]
        );
        out.extend(drain(&mut sh, 20 * MS - 1));
        let green = out.iter().filter(|o| o.1 == Colour::Green).count();
        let red = out.len() - green;
        // 20 ms: one green packet per ms, two red
        assert_eq!((green, red), (20, 40));
        let sent = sh.colours().unwrap().sent;
        assert_eq!(sent, [20 * PKT as u64, 40 * PKT as u64]);
    }

    /// 100 packets backlogged at 0 in a channel of 12 Mb/s green and 24 Mb/s red
    /// with buckets of ten packets and τ = `tau`: what leaves in 100 ms.
    fn backlogged_with_tau(tau: Time) -> Vec<(PktId, Colour, Time)> {
        let mut sh = Shaper::two_colour(
            VmId(0),
            (12_000_000, 24_000_000),
            (1_000_000, 10 * PKT as u64),
            10_000,
            [1, 0],
        )
        .with_tau(tau);
        let mut out = Vec::new();
        for i in 0..400 {
            if let Offer::Pass(Some(c)) = sh.offer_in(0, PktId(i), PKT, false, Lane::Normal) {
                out.push((PktId(i), c, 0));
            }
        }
        out.extend(drain(&mut sh, 100 * MS));
        out
    }

    fn greens(out: &[(PktId, Colour, Time)]) -> Vec<Time> {
        out.iter()
            .filter(|o| o.1 == Colour::Green)
            .map(|o| o.2)
            .collect()
    }

    #[test]
    fn tau_defers_the_turn_to_green_and_loses_no_green_token() {
        let (plain, tau) = (backlogged_with_tau(0), backlogged_with_tau(3 * MS));
        // both start with a full green bucket (eleven packets) then red; without τ
        // the next green token is used when it comes (1 ms), with τ only 3 ms later
        let (g0, g3) = (greens(&plain), greens(&tau));
        assert_eq!(g0.iter().filter(|&&t| t == 0).count(), 11);
        assert_eq!(g3.iter().filter(|&&t| t == 0).count(), 11);
        assert_eq!(g0.iter().find(|&&t| t > 0), Some(&MS));
        assert_eq!(g3.iter().find(|&&t| t > 0), Some(&(4 * MS)));
        // between the two, τ's lane sent red only, at R_W
        let red = |o: &[(PktId, Colour, Time)]| {
            (o.iter())
                .filter(|x| x.1 == Colour::Red && x.2 > 0 && x.2 < 4 * MS)
                .count()
        };
        assert!(red(&tau) >= 7, "{}", red(&tau));
        // the deferred tokens are spent later, in bursts: none is lost
        assert!(
            g3.len() + 3 >= g0.len() && g3.len() <= g0.len(),
            "{} {}",
            g3.len(),
            g0.len()
        );
        assert!(g0.len() >= 110);
    }

    #[test]
    fn tau_ends_when_the_green_bucket_is_full() {
        // τ of 50 ms against a bucket that fills in 10 ms: green goes as soon as
        // the bucket is full, so the guarantee is kept
        let (g0, g50) = (
            greens(&backlogged_with_tau(0)),
            greens(&backlogged_with_tau(50 * MS)),
        );
        let first = *g50.iter().find(|&&t| t > 0).expect("green again");
        assert!((9 * MS..=11 * MS).contains(&first), "{first}");
        assert!(g50.len() + 11 >= g0.len(), "{} {}", g50.len(), g0.len());
    }

    #[test]
    fn the_priority_lane_waits_for_green_and_the_normal_lane_goes_red_meanwhile() {
        let mut sh = channel(12_000_000, 120_000_000);
        // one green and one red token at the start: the first normal packet is green
        assert_eq!(
            sh.offer_in(0, PktId(0), PKT, false, Lane::Normal),
            Offer::Pass(Some(Colour::Green))
        );
        // no green token left: a short packet waits (1 ms) though red tokens are there
        assert_eq!(
            sh.offer_in(0, PktId(1), PKT, false, Lane::Priority),
            Offer::Queued
        );
        // a long packet may not take green while a short one waits: it goes red
        assert_eq!(
            sh.offer_in(0, PktId(2), PKT, false, Lane::Normal),
            Offer::Pass(Some(Colour::Red))
        );
        // the short packet waits for the next green token
        assert_eq!(sh.next_departure(), Some(MS));
        for i in 3..20 {
            assert_eq!(
                sh.offer_in(0, PktId(i), PKT, false, Lane::Normal),
                Offer::Queued
            );
        }
        // long packets wait for red tokens, which come every 0.1 ms
        assert_eq!(sh.next_departure(), Some(MS / 10));
        let out = drain(&mut sh, 3 * MS);
        let short = out
            .iter()
            .find(|o| o.0 == PktId(1))
            .expect("the short packet left");
        assert_eq!((short.1, short.2), (Colour::Green, MS));
        // every normal packet while the short one waited went red, at R_W
        assert!(out.iter().filter(|o| o.2 < MS).all(|o| o.1 == Colour::Red));
        assert!(out.iter().filter(|o| o.2 < MS).count() >= 9);
    }

    #[test]
    fn lanes_have_their_own_room_and_colours_their_dscp() {
        let mut sh = channel(12_000_000, 0);
        assert_eq!(sh.lane_of(Some(9_999)), Lane::Priority);
        assert_eq!(sh.lane_of(Some(10_000)), Lane::Normal);
        assert_eq!(sh.lane_of(None), Lane::Normal);
        // R_W = 0: after the first green and red tokens the normal lane fills, the
        // priority lane keeps its room
        assert_eq!(
            sh.offer_in(0, PktId(0), PKT, false, Lane::Normal),
            Offer::Pass(Some(Colour::Green))
        );
        assert_eq!(
            sh.offer_in(0, PktId(200), PKT, false, Lane::Normal),
            Offer::Pass(Some(Colour::Red))
        );
        for i in 1..=100 {
            assert_eq!(
                sh.offer_in(0, PktId(i), PKT, false, Lane::Normal),
                Offer::Queued
            );
        }
        assert_eq!(sh.room_in(Lane::Normal), 0);
        assert_eq!(sh.room_in(Lane::Priority), 150_000);
        assert_eq!(
            sh.offer_in(0, PktId(101), PKT, true, Lane::Normal),
            Offer::Dropped
        );
        assert_eq!(
            sh.offer_in(0, PktId(102), PKT, true, Lane::Priority),
            Offer::Queued
        );
        assert_eq!(sh.held(), 101);
        let c = sh.colours().unwrap();
        assert_eq!((c.dscp_of(Colour::Green), c.dscp_of(Colour::Red)), (1, 0));
        // the short packet leaves first, green, when the green bucket allows
        assert_eq!(sh.pop_ready(MS), Some((PktId(102), Some(Colour::Green))));
    }
}
