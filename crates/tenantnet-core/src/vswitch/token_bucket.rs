//! The shapers' token bucket (MBFQ §4: "the microschedulers are implemented as
//! token buckets, whose rates are periodically adjusted by the macroscheduler"), kept
//! exact in integer picoseconds.
//!
//! Tokens are generic: a bucket counts bytes filled at a rate in bit/s
//! ([`TokenBucket::bytes`], 8 rate units per token) or any other resource at a
//! rate in tokens per second ([`TokenBucket::new`] with 1 unit per token: CPU
//! cycles at cycles/s, packets at packets/s).
//!
//! It is the virtual-scheduling form of a token bucket (the GCRA of ATM, equivalent
//! to a bucket of depth `burst` tokens filled at `rate`): `tat` is the time at which
//! the bucket would be full again if nothing more were taken. A packet may leave at
//! `now` when the tokens still owed, `(tat − now) · rate`, are at most `burst`;
//! taking its tokens adds their time at `rate` to `tat`. After an idle period a
//! shaper may therefore send `burst` tokens' worth plus one packet back to back, and
//! over any interval of length t at most `rate · t + burst` plus one packet.

use crate::engine::Time;
use crate::units::PS_PER_SEC;

/// A token bucket of `burst` tokens filled at `rate` rate units per second, each
/// token worth `unit` rate units.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: u64,
    burst: u64,
    /// Rate units per token times picoseconds per second: the time `t` tokens take
    /// at `rate` is `t · scale / rate` ps.
    scale: u64,
    /// The time `burst` takes to fill at `rate`, kept with the rate so that
    /// [`conform_at`](Self::conform_at), asked for every packet, does not divide.
    burst_span: Time,
    tat: Time,
}

/// Rate units per token of a byte bucket: its rate is in bit/s.
pub const BITS_PER_BYTE: u64 = 8;

impl TokenBucket {
    /// A full bucket of `burst` tokens filled at `rate` units/s, `unit` units per
    /// token.
    pub fn new(rate: u64, burst: u64, unit: u64) -> Self {
        let mut b = TokenBucket {
            rate: rate.max(1),
            burst,
            scale: unit.max(1).saturating_mul(PS_PER_SEC),
            burst_span: 0,
            tat: 0,
        };
        b.burst_span = b.span(burst, b.rate);
        b
    }

    /// A full bucket of `burst` bytes filled at `rate_bps` bit/s.
    pub fn bytes(rate_bps: u64, burst: u64) -> Self {
        TokenBucket::new(rate_bps, burst, BITS_PER_BYTE)
    }

    /// The time `tokens` take to fill at `rate`.
    fn span(&self, tokens: u64, rate: u64) -> Time {
        let t = (tokens as u128 * self.scale as u128).div_ceil(rate.max(1) as u128);
        t.min(u64::MAX as u128 / 4) as Time
    }

    /// The fill rate, units per second (bit/s for a byte bucket).
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The depth, tokens.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// The earliest time the next packet may leave.
    #[inline]
    pub fn conform_at(&self) -> Time {
        self.tat.saturating_sub(self.burst_span)
    }

    /// When the bucket is full if nothing more is taken.
    #[inline]
    pub fn full_at(&self) -> Time {
        self.tat
    }

    /// Takes `tokens` for a packet leaving at `now` (which must be at or after
    /// [`conform_at`](Self::conform_at)).
    #[inline]
    pub fn take(&mut self, now: Time, tokens: u64) {
        debug_assert!(now >= self.conform_at());
        self.tat = self.tat.max(now) + self.span(tokens, self.rate);
    }

    /// A policer's test (srTCM with no excess burst, as DPDK meters it): if the
    /// bucket holds `tokens` at `now`, takes them and says yes; otherwise takes
    /// nothing (the packet is dropped).
    #[inline]
    pub fn police(&mut self, now: Time, tokens: u64) -> bool {
        let tat = self.tat.max(now) + self.span(tokens, self.rate);
        if tat - now > self.burst_span {
            return false;
        }
        self.tat = tat;
        true
    }

    /// Changes the fill rate at `now`, keeping the tokens owed (or the credit held).
    pub fn set_rate(&mut self, now: Time, rate: u64) {
        let rate = rate.max(1);
        if self.tat > now {
            let owed = (self.tat - now) as u128 * self.rate as u128 / self.scale as u128;
            self.tat = now + self.span(owed as u64, rate);
        }
        self.rate = rate;
        self.burst_span = self.span(self.burst, rate);
    }

    /// Fills the bucket completely at `now` (a microscheduler switched back on).
    pub fn refill(&mut self, now: Time) {
        self.tat = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    /// Sends 1500-byte packets as fast as the bucket allows from 0 to `until`.
    fn send_all(b: &mut TokenBucket, until: Time) -> u64 {
        let mut bytes = 0;
        let mut now = 0;
        loop {
            now = now.max(b.conform_at());
            if now >= until {
                return bytes;
            }
            b.take(now, 1500);
            bytes += 1500;
        }
    }

    #[test]
    fn a_policer_passes_the_rate_plus_the_burst_and_drops_the_rest() {
        // 4 Gb/s, 1 MB (OVS's 8000 kbit), 1024-byte packets offered at 8 Gb/s
        let mut b = TokenBucket::bytes(4_000_000_000, 1_000_000);
        let gap = 1024 * 8 * 1000 / 8; // ps between packets at 8 Gb/s
        let (mut passed, mut dropped) = (0u64, 0u64);
        for k in 0..(100 * MS / gap) {
            if b.police(k * gap, 1024) {
                passed += 1024;
            } else {
                dropped += 1;
            }
        }
        let expect = 4e9 * 0.1 / 8.0 + 1e6;
        assert!(
            (passed as f64 - expect).abs() <= 1024.0,
            "{passed} vs {expect}"
        );
        assert!(dropped > 0);
        // a packet larger than the whole bucket never passes
        let mut b = TokenBucket::bytes(4_000_000_000, 1000);
        assert!(!b.police(10 * MS, 1024));
        assert!(b.police(10 * MS, 1000));
    }

    #[test]
    fn long_run_rate_is_the_fill_rate_plus_the_burst() {
        for rate in [10_000_000u64, 226_000_000, 4_750_000_000, 9_500_000_000] {
            let mut b = TokenBucket::bytes(rate, 15_000);
            let bytes = send_all(&mut b, 100 * MS);
            let expect = rate as f64 * 0.1 / 8.0 + 15_000.0;
            assert!(
                (bytes as f64 - expect).abs() <= 1500.0,
                "{rate}: {bytes} vs {expect}"
            );
        }
    }

    #[test]
    fn an_idle_bucket_allows_its_burst_back_to_back() {
        let mut b = TokenBucket::bytes(1_000_000_000, 15_000);
        let mut n = 0;
        while b.conform_at() == 0 {
            b.take(0, 1500);
            n += 1;
        }
        assert_eq!(n, 11, "burst of 10 packets plus the one that empties it");
    }

    #[test]
    fn rate_change_keeps_the_debt_in_bytes() {
        let mut b = TokenBucket::bytes(1_000_000_000, 0);
        b.take(0, 125_000); // 1 ms owed at 1 Gb/s
        assert_eq!(b.conform_at(), MS);
        b.set_rate(0, 2_000_000_000);
        assert_eq!(b.conform_at(), MS / 2);
        b.set_rate(MS / 4, 1_000_000_000);
        assert_eq!(b.conform_at(), MS / 4 + MS / 2);
    }

    #[test]
    fn a_cycle_bucket_counts_tokens_at_tokens_per_second() {
        // 2.2 GHz of cycles, 1000 cycles per packet: 2.2 M packets/s
        let mut b = TokenBucket::new(2_200_000_000, 0, 1);
        b.take(0, 2_200_000); // a millisecond's worth
        assert_eq!(b.conform_at(), MS);
        b.set_rate(0, 1_100_000_000);
        assert_eq!(b.conform_at(), 2 * MS);
    }
}
