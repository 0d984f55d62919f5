//! Retransmission timer computation, RFC 6298 §2.

use crate::engine::Time;

/// SRTT/RTTVAR estimator and the resulting RTO, with exponential backoff.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    rto: Time,
    min_rto: Time,
    max_rto: Time,
}

impl RttEstimator {
    /// Before any sample the RTO is `initial` (RFC 6298 §2.1), clamped to the bounds.
    pub fn new(initial: Time, min_rto: Time, max_rto: Time) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial.clamp(min_rto, max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Takes an RTT measurement `r` (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4, clock
    /// granularity G = 1 ps) and recomputes the RTO, which also undoes any backoff.
    pub fn sample(&mut self, r: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.rto = (s + (4 * self.rttvar).max(1)).clamp(self.min_rto, self.max_rto);
    }

    /// Doubles the RTO after a timeout (RFC 6298 §5.5), up to the maximum.
    pub fn backoff(&mut self) {
        self.rto = (self.rto.saturating_mul(2)).min(self.max_rto);
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rto
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_rfc6298() {
        let mut e = RttEstimator::new(1000, 10, 100_000);
        assert_eq!(e.rto(), 1000);
        e.sample(100);
        assert_eq!((e.srtt(), e.rto()), (Some(100), 100 + 4 * 50));
        e.sample(200);
        // rttvar = (3*50 + 100)/4 = 62, srtt = (700+200)/8 = 112
        assert_eq!((e.srtt(), e.rto()), (Some(112), 112 + 4 * 62));
        e.backoff();
        assert_eq!(e.rto(), 2 * (112 + 248));
        let mut low = RttEstimator::new(1000, 500, 100_000);
        low.sample(10);
        assert_eq!(low.rto(), 500);
    }
}
