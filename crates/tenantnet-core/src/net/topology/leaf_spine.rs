//! Two-tier leaf-spine: every leaf links to every spine. Names: hosts `h0…` numbered
//! leaf by leaf, leaves `leaf0…`, spines `spine0…`.
//!
//! The oversubscription ratio of a leaf is its host capacity over its uplink
//! capacity, `hosts_per_leaf · link_rate / (spines · fabric_rate)`. Give either
//! `fabric_rate` (the ratio follows) or `oversubscription` (the fabric rate follows);
//! with neither, the fabric runs at `link_rate`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// Parameters of a leaf-spine fabric.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    /// Number of leaf (top-of-rack) switches.
    pub leaves: u32,
    /// Number of spine switches.
    pub spines: u32,
    /// Hosts under each leaf.
    pub hosts_per_leaf: u32,
    /// Rate of the host links.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Rate of each leaf–spine link; exclusive with `oversubscription`.
    #[serde(default)]
    pub fabric_rate: Option<Rate>,
    /// Leaf oversubscription ratio (e.g. 3.0 for 3:1); exclusive with `fabric_rate`.
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
}

impl LeafSpine {
    /// The leaf–spine link rate in bit/s.
    pub fn fabric_bps(&self) -> Result<u64, SpecError> {
        match (self.fabric_rate, self.oversubscription) {
            (Some(_), Some(_)) => Err((
                "oversubscription".into(),
                "give either fabric_rate or oversubscription, not both".into(),
            )),
            (Some(r), None) => Ok(r.0),
            (None, None) => Ok(self.link_rate.0),
            (None, Some(ratio)) => {
                if !(ratio.is_finite() && ratio > 0.0) {
                    return Err((
                        "oversubscription".into(),
                        "expected a positive ratio such as 3.0".into(),
                    ));
                }
                let host_bps = self.hosts_per_leaf as f64 * self.link_rate.0 as f64;
                let bps = (host_bps / (self.spines as f64 * ratio)).round();
                if bps < 1.0 {
                    return Err((
                        "oversubscription".into(),
                        "ratio leaves no uplink capacity".into(),
                    ));
                }
                Ok(bps as u64)
            }
        }
    }

    /// Wires the fabric.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        for (k, v) in [
            ("leaves", self.leaves),
            ("spines", self.spines),
            ("hosts_per_leaf", self.hosts_per_leaf),
        ] {
            if v == 0 {
                return Err((k.into(), "expected at least 1".into()));
            }
        }
        super::check_product(
            ("leaves", self.leaves as u64),
            ("hosts_per_leaf", self.hosts_per_leaf as u64),
        )?;
        if self.spines > 4096 {
            return Err(("spines".into(), "expected at most 4096".into()));
        }
        let fabric = self.fabric_bps()?;
        let d = self.link_delay.0;
        let mut b = NetworkBuilder::new();
        let mut hosts = Vec::new();
        for i in 0..self.leaves * self.hosts_per_leaf {
            hosts.push(b.host(format!("h{i}")));
        }
        let leaves: Vec<_> = (0..self.leaves)
            .map(|i| b.switch(format!("leaf{i}")))
            .collect();
        let spines: Vec<_> = (0..self.spines)
            .map(|i| b.switch(format!("spine{i}")))
            .collect();
        for (i, h) in hosts.into_iter().enumerate() {
            b.link(
                h,
                leaves[i / self.hosts_per_leaf as usize],
                self.link_rate.0,
                d,
            );
        }
        for &l in &leaves {
            for &s in &spines {
                b.link(l, s, fabric, d);
            }
        }
        let ratio = self.hosts_per_leaf as f64 * self.link_rate.0 as f64
            / (self.spines as f64 * fabric as f64);
        let desc = format!(
            "leaf-spine, {} leaves x {} hosts at {}, {} spines at {}, oversubscription {:.2}:1",
            self.leaves,
            self.hosts_per_leaf,
            format_rate(self.link_rate.0),
            self.spines,
            format_rate(fabric),
            ratio
        );
        Ok((b, desc))
    }
}
