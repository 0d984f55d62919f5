//! The microscheduler's token bucket (MBFQ §4: "the microschedulers are
//! implemented as token buckets, whose rates are periodically adjusted by the
//! macroscheduler"), kept exact in integer picoseconds.
//!
//! It is the virtual-scheduling form of a token bucket (the GCRA of ATM, equivalent
//! to a bucket of depth `burst` bytes filled at `rate`): `tat` is the time at which
//! the bucket would be full again if nothing more were sent. A packet may leave at
//! `now` when the bytes still owed, `(tat − now) · rate`, are at most `burst`;
//! sending it adds its serialization time at `rate` to `tat`. After an idle period a
//! VM may therefore send `burst` bytes plus one packet back to back, and over any
//! interval of length t at most `rate · t + burst` plus one packet.

use crate::engine::Time;
use crate::units::PS_PER_SEC;

/// A token bucket of `burst` bytes filled at `rate_bps`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    burst: u64,
    tat: Time,
}

fn span(bytes: u64, rate_bps: u64) -> Time {
    let t = (bytes as u128 * 8 * PS_PER_SEC as u128).div_ceil(rate_bps.max(1) as u128);
    t.min(u64::MAX as u128 / 4) as Time
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate_bps: u64, burst: u64) -> Self {
        TokenBucket {
            rate_bps: rate_bps.max(1),
            burst,
            tat: 0,
        }
    }

    /// The fill rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The earliest time the next packet may leave.
    #[inline]
    pub fn conform_at(&self) -> Time {
        self.tat.saturating_sub(span(self.burst, self.rate_bps))
    }

    /// Takes `bytes` of tokens for a packet leaving at `now` (which must be at or
    /// after [`conform_at`](Self::conform_at)).
    #[inline]
    pub fn take(&mut self, now: Time, bytes: u64) {
        debug_assert!(now >= self.conform_at());
        self.tat = self.tat.max(now) + span(bytes, self.rate_bps);
    }

    /// Changes the fill rate at `now`, keeping the bytes owed (or the credit held).
    pub fn set_rate(&mut self, now: Time, rate_bps: u64) {
        let rate_bps = rate_bps.max(1);
        if self.tat > now {
            let owed = (self.tat - now) as u128 * self.rate_bps as u128 / (8 * PS_PER_SEC) as u128;
            self.tat = now + span(owed as u64, rate_bps);
        }
        self.rate_bps = rate_bps;
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
    fn long_run_rate_is_the_fill_rate_plus_the_burst() {
        for rate in [10_000_000u64, 226_000_000, 4_750_000_000, 9_500_000_000] {
            let mut b = TokenBucket::new(rate, 15_000);
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
        let mut b = TokenBucket::new(1_000_000_000, 15_000);
        let mut n = 0;
        while b.conform_at() == 0 {
            b.take(0, 1500);
            n += 1;
        }
        assert_eq!(n, 11, "burst of 10 packets plus the one that empties it");
    }

    #[test]
    fn rate_change_keeps_the_debt_in_bytes() {
        let mut b = TokenBucket::new(1_000_000_000, 0);
        b.take(0, 125_000); // 1 ms owed at 1 Gb/s
        assert_eq!(b.conform_at(), MS);
        b.set_rate(0, 2_000_000_000);
        assert_eq!(b.conform_at(), MS / 2);
        b.set_rate(MS / 4, 1_000_000_000);
        assert_eq!(b.conform_at(), MS / 4 + MS / 2);
    }
}
