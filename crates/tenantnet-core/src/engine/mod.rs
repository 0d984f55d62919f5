//! The discrete-event engine: integer picosecond time, the event queue, lazily
//! cancelled timers and seeded random-number streams. Nothing here knows about
//! networks; `crate::sim` gives the events their meaning.

pub mod heap;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod timer;
pub mod wait;

/// Simulated time in picoseconds since the start of the run.
pub type Time = u64;

pub use crate::units::PS_PER_SEC;

/// Picoseconds to seconds, for results.
#[inline]
pub fn to_secs(t: Time) -> f64 {
    t as f64 / PS_PER_SEC as f64
}

/// Seconds to picoseconds, rounded to the nearest picosecond.
#[inline]
pub fn from_secs(s: f64) -> Time {
    (s * PS_PER_SEC as f64).round().max(0.0) as Time
}

/// Serialization time of `bytes` at `rate_bps`, rounded up to a whole picosecond
/// (saturating at `u64::MAX` for spans no scenario can ask for).
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
    let t = (bytes as u128 * 8 * PS_PER_SEC as u128).div_ceil(rate_bps.max(1) as u128);
    t.min(u64::MAX as u128) as Time
}
