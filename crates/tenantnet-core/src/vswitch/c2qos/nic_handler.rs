//! The NIC-bottleneck handler (C2QoS §VII, Fig. 13). A VM that sends traffic much
//! cheaper per bit than its SLA preference (1500-byte packets where it declared
//! 128) buys more bandwidth with its cycles than it purchased, and the NIC, not the
//! PMD core, becomes the bottleneck, which C2TB cannot arbitrate. "The original
//! monitoring module inside the vSwitch" watches the forwarding rate; when it
//! reaches the NIC's limit, OVS's ingress policing is switched on at every VM's
//! purchased bandwidth, in addition to C2QoS.
//!
//! The paper gives no thresholds or timers (spec `c2qos.md` §4.4, A25). Ours: the
//! host's NIC transmit rate over the last monitor interval (1 s: Fig. 13 reacts
//! within 1–2 s) at or above 95 % of the NIC's rate switches the policers on (full
//! buckets); they are switched off after 3 intervals in a row in which none of the
//! host's policers dropped a packet and the NIC stayed below 95 %. A release rule on
//! the NIC rate alone would oscillate: policing brings the NIC's rate down to the
//! sum of the guarantees.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::units::TimeSpan;

/// `[vswitch.cpu.nic_handler]`: present, the handler is on.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicHandlerSpec {
    /// T_mon, how often the monitor reads the NIC's transmit rate ["1s"].
    #[serde(default = "d_monitor")]
    pub monitor: TimeSpan,
    /// The share of the NIC's rate that counts as the NIC being the bottleneck
    /// [0.95].
    #[serde(default = "d_threshold")]
    pub threshold: f64,
    /// Quiet monitor intervals in a row (no packet policed, the NIC below the
    /// threshold) after which policing is switched off again [3].
    #[serde(default = "d_release")]
    pub release_after: u32,
}

fn d_monitor() -> TimeSpan {
    TimeSpan(crate::units::PS_PER_SEC)
}
fn d_threshold() -> f64 {
    0.95
}
fn d_release() -> u32 {
    3
}

impl Default for NicHandlerSpec {
    fn default() -> Self {
        NicHandlerSpec {
            monitor: d_monitor(),
            threshold: d_threshold(),
            release_after: d_release(),
        }
    }
}

/// The handler's resolved constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NicHandlerParams {
    /// T_mon.
    pub monitor: Time,
    /// The trigger, as a share of the NIC's rate.
    pub threshold: f64,
    /// Quiet intervals before release.
    pub release_after: u32,
}

impl NicHandlerSpec {
    /// The constants, or the key (within the table) that is wrong and what it
    /// expected.
    pub fn resolve(&self) -> Result<NicHandlerParams, (String, String)> {
        crate::units::check_timer(self.monitor.0).map_err(|m| ("monitor".to_string(), m))?;
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err((
                "threshold".into(),
                format!(
                    "{}; expected a share of the NIC's rate above 0, at most 1",
                    self.threshold
                ),
            ));
        }
        if self.release_after == 0 {
            return Err((
                "release_after".into(),
                "0; expected at least 1 monitor interval".into(),
            ));
        }
        Ok(NicHandlerParams {
            monitor: self.monitor.0,
            threshold: self.threshold,
            release_after: self.release_after,
        })
    }
}

/// One host's monitor.
#[derive(Clone, Debug)]
pub struct NicMonitor {
    params: NicHandlerParams,
    /// The NIC's rate, bit/s.
    nic_bps: u64,
    /// The NIC's transmitted bytes and the host's policed packets at the last reading.
    tx_at: u64,
    policed_at: u64,
    /// Quiet intervals in a row while policing.
    quiet: u32,
    /// Whether the handler has policing on.
    pub on: bool,
}

impl NicMonitor {
    /// A monitor of a NIC of `nic_bps`, policing off.
    pub fn new(params: NicHandlerParams, nic_bps: u64) -> Self {
        NicMonitor {
            params,
            nic_bps,
            tx_at: 0,
            policed_at: 0,
            quiet: 0,
            on: false,
        }
    }

    /// The reading at the end of an interval: the NIC's bytes sent and the host's
    /// packets policed so far. Returns the NIC's rate over the interval (bit/s) and
    /// whether policing changes (to `self.on`).
    pub fn observe(&mut self, tx_bytes: u64, policed: u64) -> (f64, bool) {
        let secs = self.params.monitor as f64 / crate::units::PS_PER_SEC as f64;
        let rate = (tx_bytes - self.tx_at) as f64 * 8.0 / secs;
        let busy = rate >= self.params.threshold * self.nic_bps as f64;
        let dropped = policed > self.policed_at;
        self.tx_at = tx_bytes;
        self.policed_at = policed;
        let was = self.on;
        if !self.on {
            self.on = busy;
            self.quiet = 0;
        } else if busy || dropped {
            self.quiet = 0;
        } else {
            self.quiet += 1;
            self.on = self.quiet < self.params.release_after;
        }
        (rate, self.on != was)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_at_the_threshold_and_releases_after_quiet_intervals() {
        let p = NicHandlerSpec::default().resolve().unwrap();
        let mut m = NicMonitor::new(p, 10_000_000_000);
        // 9.4 Gb/s over 1 s: below 95 %
        let mut tx = 1_175_000_000;
        assert_eq!(m.observe(tx, 0), (9.4e9, false));
        tx += 1_200_000_000; // 9.6 Gb/s
        assert_eq!(m.observe(tx, 0), (9.6e9, true));
        assert!(m.on);
        // policing brings the NIC down, but its policers still drop: stays on
        tx += 1_000_000_000;
        assert!(!m.observe(tx, 5).1);
        // three quiet intervals release it, not two
        for k in 1..=3 {
            tx += 1_000_000_000;
            let (_, changed) = m.observe(tx, 5);
            assert_eq!(changed, k == 3, "interval {k}");
        }
        assert!(!m.on);
    }

    #[test]
    fn a_busy_interval_restarts_the_count() {
        let p = NicHandlerSpec {
            release_after: 2,
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let mut m = NicMonitor::new(p, 1_000_000_000);
        assert!(m.observe(125_000_000, 0).1);
        assert!(!m.observe(125_000_000, 0).1); // quiet 1
        assert!(!m.observe(250_000_000, 0).1); // busy: 0
        assert!(!m.observe(250_000_000, 0).1); // quiet 1
        assert!(m.observe(250_000_000, 0).1); // quiet 2: off
    }

    #[test]
    fn bad_constants_are_named() {
        let bad = NicHandlerSpec {
            threshold: 1.5,
            ..Default::default()
        };
        assert_eq!(bad.resolve().unwrap_err().0, "threshold");
        let bad = NicHandlerSpec {
            monitor: TimeSpan(0),
            ..Default::default()
        };
        assert_eq!(bad.resolve().unwrap_err().0, "monitor");
    }
}
