//! Host receive timing (`network.host_jitter`): a packet that reaches a host is
//! handed to its stack a random while later, as a host's NIC and driver hand
//! packets over at their next interrupt or poll rather than as each one arrives.
//!
//! The model: each packet that reaches a host waits a time drawn uniformly from
//! [0, J) (the wait until the next instant the host looks, whose phase is
//! independent of the packet's arrival), from a stream of the run's seed that
//! belongs to that host, and is handed over after the packet ahead of it (the NIC
//! delivers in order), at least a picosecond after: no two of a host's handovers
//! share an instant, whose order the event keys would leave to packet ids, which
//! differ between a run's partitions. The simulator hands the packet over with an
//! event of its own (`Deliver`). J is the host's receive-interrupt moderation period:
//! Linux's mlx5 driver defaults to 16 µs from the interrupt event and a few
//! microseconds when the timer restarts on each completion
//! (`MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC`, `..._USEC_FROM_CQE` in
//! `drivers/net/ethernet/mellanox/mlx5/core/en.h`). Where hosts and links run at the
//! same rate, identical senders otherwise act at the same picosecond round after
//! round and a tail-drop queue shuts the same one out each time (phase lock), which
//! real hosts never sustain.
//!
//! Left out: the batching itself (packets arriving within one period reach the
//! stack together), CPU scheduling delays, and any jitter on transmit: the
//! sender's timing follows from the ACKs it is handed.

use crate::engine::rng::Rng;
use crate::engine::Time;

/// One host's receive timing.
#[derive(Clone, Debug)]
pub struct HostJitter {
    rng: Rng,
    /// J: the longest wait, picoseconds (> 0).
    max: Time,
    /// When the last packet was handed over.
    last: Time,
}

impl HostJitter {
    /// Waits below `max` picoseconds (> 0), drawn from stream `stream` of `seed`.
    pub fn new(seed: u64, stream: &str, max: Time) -> Self {
        debug_assert!(max > 0);
        HostJitter {
            rng: Rng::stream(seed, stream),
            max,
            last: 0,
        }
    }

    /// When a packet that reaches the host at `arrive` is handed to its stack.
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
        let mut a = HostJitter::new(7, "p", j);
        let mut b = HostJitter::new(7, "p", j);
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
        let mut c = HostJitter::new(1, "p", j);
        let times: Vec<Time> = (0..1000).map(|k| c.deliver(k * 1000)).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]));
        assert_ne!(
            HostJitter::new(8, "p", j).deliver(0),
            a.deliver(1 << 50) - (1 << 50)
        );
    }
}
