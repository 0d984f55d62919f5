//! Dumbbell: `hosts_per_side` hosts on each of two switches joined by one bottleneck
//! link. Names: hosts `left0…` and `right0…`, switches `switch-left`, `switch-right`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// Parameters of a dumbbell.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Hosts on each side (at least 1).
    pub hosts_per_side: u32,
    /// Rate of the host links.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Rate of the link between the two switches (default: `link_rate`).
    #[serde(default)]
    pub bottleneck_rate: Option<Rate>,
    /// Propagation delay of every host link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
    /// Propagation delay of the bottleneck link (default: `link_delay`).
    #[serde(default)]
    pub bottleneck_delay: Option<TimeSpan>,
}

impl Dumbbell {
    /// Wires the dumbbell.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        if self.hosts_per_side == 0 {
            return Err(("hosts_per_side".into(), "expected at least 1".into()));
        }
        super::check_hosts("hosts_per_side", 2 * self.hosts_per_side as u64)?;
        let mut b = NetworkBuilder::new();
        let left: Vec<_> = (0..self.hosts_per_side)
            .map(|i| b.host(format!("left{i}")))
            .collect();
        let right: Vec<_> = (0..self.hosts_per_side)
            .map(|i| b.host(format!("right{i}")))
            .collect();
        let sl = b.switch("switch-left");
        let sr = b.switch("switch-right");
        let (rate, delay) = (self.link_rate.0, self.link_delay.0);
        for h in left {
            b.link(h, sl, rate, delay);
        }
        for h in right {
            b.link(h, sr, rate, delay);
        }
        let bn = self.bottleneck_rate.unwrap_or(self.link_rate).0;
        b.link(
            sl,
            sr,
            bn,
            self.bottleneck_delay.unwrap_or(self.link_delay).0,
        );
        let desc = format!(
            "dumbbell, {} hosts per side at {}, bottleneck {}",
            self.hosts_per_side,
            format_rate(rate),
            format_rate(bn)
        );
        Ok((b, desc))
    }
}
