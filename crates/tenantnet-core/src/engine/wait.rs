//! A seeded wait in order: each item waits a time drawn uniformly from [0, J), from
//! a stream of the run's seed, and is handed over after the one ahead of it, at
//! least a picosecond after, so that no two handovers share an instant (whose order
//! the event keys would leave to ids). Hosts' timing is made of it
//! (`crate::net::host_jitter`).

use crate::engine::rng::Rng;
use crate::engine::Time;

/// Waits drawn uniformly below a bound from a seeded stream, handed over in order.
#[derive(Clone, Debug)]
pub struct Wait {
    rng: Rng,
    /// J: the longest wait, picoseconds (> 0).
    max: Time,
    /// When the last item was handed over.
    last: Time,
}

impl Wait {
    /// Waits below `max` picoseconds (> 0), drawn from stream `stream` of `seed`.
    pub fn new(seed: u64, stream: &str, max: Time) -> Self {
        debug_assert!(max > 0);
        Wait {
            rng: Rng::stream(seed, stream),
            max,
            last: 0,
        }
    }

    /// When an item that arrives at `arrive` is handed over: a wait drawn below J
    /// later, and after the one before it.
    #[inline]
    pub fn deliver(&mut self, arrive: Time) -> Time {
        let wait = self.rng.below(self.max);
        self.last = (arrive + wait).max(self.last + 1);
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_uniform_below_j_in_order_and_seeded() {
        let j = 10_000_000; // 10 us
        let mut a = Wait::new(7, "p", j);
        let mut b = Wait::new(7, "p", j);
        let (mut sum, mut prev, n) = (0u128, 0, 100_000u64);
        for k in 0..n {
            // arrivals 100 us apart: no packet waits for the one ahead
            let arrive = k * 100_000_000;
            let t = a.deliver(arrive);
            assert_eq!(t, b.deliver(arrive));
            assert!((arrive..arrive + j).contains(&t) && t >= prev);
            sum += (t - arrive) as u128;
            prev = t;
        }
        let mean = sum as f64 / n as f64;
        assert!(
            (mean / (j as f64 / 2.0) - 1.0).abs() < 0.01,
            "mean wait {mean}"
        );
        // back-to-back arrivals keep their order
        let mut c = Wait::new(1, "p", j);
        let times: Vec<Time> = (0..1000).map(|k| c.deliver(k * 1000)).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]));
        assert_ne!(
            Wait::new(8, "p", j).deliver(0),
            a.deliver(1 << 50) - (1 << 50)
        );
    }
}
