//! Single-switch star: `hosts` hosts on one switch. Names: hosts `h0…`, switch `switch`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// Parameters of a star.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Star {
    /// Number of hosts (at least 2).
    pub hosts: u32,
    /// Rate of every link.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
}

impl Star {
    /// Wires the star.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        if self.hosts < 2 {
            return Err(("hosts".into(), "expected at least 2".into()));
        }
        super::check_hosts("hosts", self.hosts as u64)?;
        let mut b = NetworkBuilder::new();
        let hosts: Vec<_> = (0..self.hosts).map(|i| b.host(format!("h{i}"))).collect();
        let sw = b.switch("switch");
        for h in hosts {
            b.link(h, sw, self.link_rate.0, self.link_delay.0);
        }
        let desc = format!(
            "star, {} hosts at {}",
            self.hosts,
            format_rate(self.link_rate.0)
        );
        Ok((b, desc))
    }
}
