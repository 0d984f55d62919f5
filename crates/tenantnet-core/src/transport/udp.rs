//! UDP sources: constant bit rate, and on/off (CBR while on, silent while off, with
//! constant or exponentially distributed period lengths). Packets leave at exact
//! spacing: the remainder of each interval's division is carried to the next.

use crate::engine::rng::Rng;
use crate::engine::{Time, PS_PER_SEC};
use crate::units::MAX_DURATION;

/// On/off modulation of a UDP source.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOff {
    /// Mean on-period length.
    pub on: Time,
    /// Mean off-period length.
    pub off: Time,
    /// Exponentially distributed periods (else constant).
    pub exponential: bool,
}

/// One UDP source.
#[derive(Clone, Debug)]
pub struct UdpSource {
    rate_bps: u64,
    packet_size: u32,
    onoff: Option<OnOff>,
    on: bool,
    period_end: Time,
    remainder: u64,
    rng: Rng,
}

/// What the source does at a tick.
#[derive(Debug, PartialEq, Eq)]
pub struct Tick {
    /// Send one packet now.
    pub send: bool,
    /// The next tick.
    pub next: Time,
}

impl UdpSource {
    /// A source sending `packet_size`-byte packets at `rate_bps` while on.
    pub fn new(rate_bps: u64, packet_size: u32, onoff: Option<OnOff>, rng: Rng) -> Self {
        UdpSource {
            rate_bps,
            packet_size,
            onoff,
            on: true,
            period_end: 0,
            remainder: 0,
            rng,
        }
    }

    /// A period length: `mean`, or an exponential draw with that mean (at least 1 ps,
    /// at most [`MAX_DURATION`], so that `now + period` never wraps).
    fn draw(&mut self, mean: Time) -> Time {
        let exp = self.onoff.as_ref().is_some_and(|o| o.exponential);
        let t = if exp {
            self.rng.exponential(mean as f64).round() as Time
        } else {
            mean
        };
        t.clamp(1, MAX_DURATION)
    }

    fn interval(&mut self) -> Time {
        let bits_ps = self.packet_size as u64 * 8 * PS_PER_SEC + self.remainder;
        self.remainder = bits_ps % self.rate_bps;
        bits_ps / self.rate_bps
    }

    /// Starts the source at `now`; returns the first tick.
    pub fn start(&mut self, now: Time) -> Tick {
        if let Some(o) = self.onoff.clone() {
            self.period_end = now + self.draw(o.on);
        }
        self.on = true;
        let next = now + self.interval();
        Tick {
            send: true,
            next: self.clip(next),
        }
    }

    fn clip(&self, next: Time) -> Time {
        if self.onoff.is_some() {
            next.min(self.period_end)
        } else {
            next
        }
    }

    /// A tick at `now`.
    pub fn tick(&mut self, now: Time) -> Tick {
        let Some(o) = self.onoff.clone() else {
            let next = now + self.interval();
            return Tick { send: true, next };
        };
        if now >= self.period_end {
            self.on = !self.on;
            self.remainder = 0;
            let len = if self.on {
                self.draw(o.on)
            } else {
                self.draw(o.off)
            };
            self.period_end = now + len;
            if !self.on {
                return Tick {
                    send: false,
                    next: self.period_end,
                };
            }
        }
        let next = now + self.interval();
        Tick {
            send: true,
            next: self.clip(next),
        }
    }

    /// Wire size of each packet.
    pub fn packet_size(&self) -> u32 {
        self.packet_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_spacing_is_exact() {
        // 1000 B at 3 Gb/s: 2.666… us apart; 3 packets take exactly 8 us
        let mut s = UdpSource::new(3_000_000_000, 1000, None, Rng::stream(0, "u"));
        let mut t = s.start(0).next;
        t = s.tick(t).next;
        t = s.tick(t).next;
        assert_eq!(t, 8_000_000);
    }

    #[test]
    fn on_off_duty_cycle() {
        let o = OnOff {
            on: 1_000_000_000,
            off: 3_000_000_000,
            exponential: false,
        };
        let mut s = UdpSource::new(1_000_000_000, 1250, Some(o), Rng::stream(0, "u"));
        // 1250 B at 1 Gb/s = 10 us per packet; 1 ms on sends 100 packets, then 3 ms off
        let mut sent = 1;
        let mut t = s.start(0).next;
        while t < 40_000_000_000 {
            let k = s.tick(t);
            sent += k.send as u64;
            t = k.next;
        }
        // ten 4 ms cycles of 100 packets each
        assert_eq!(sent, 1000);
    }
}
