//! Three-tier fat-tree(k) (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
//! aggregation switches, (k/2)² core switches, k³/4 hosts.
//!
//! Names: hosts `h0…` numbered pod by pod and edge by edge (host `h{n}` sits under
//! edge `n / (k/2)`), edge switches `pod{p}-edge{e}`, aggregation switches
//! `pod{p}-agg{a}`, core switches `core{c}`. Core switch `c` links to aggregation
//! switch `c / (k/2)` of every pod.
//!
//! **Oversubscription** is made as QShare §7.3 makes it, "by disabling certain links
//! and switches": an `oversubscription` of r keeps (k/2)²/r core switches (r must
//! divide (k/2)²) and removes the rest with their links, so the core layer carries
//! 1/r of the full fat-tree's capacity. The paper does not say which cores it
//! removes; we keep them spread over the aggregation switches, round-robin (the
//! first core of every aggregation position, then the second, …), so that as many
//! aggregation switches as possible keep an uplink. `fabric_rate` sets the rate of
//! switch-to-switch links (QShare §7.3 uses 10 Gb/s hosts and 40 Gb/s switch links).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// Parameters of a fat-tree.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatTree {
    /// Switch radix k (even, at least 2): k³/4 hosts.
    pub k: u32,
    /// Rate of the host links.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Rate of switch-to-switch links (default: `link_rate`).
    #[serde(default)]
    pub fabric_rate: Option<Rate>,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
    /// Core-layer oversubscription r: keep (k/2)²/r core switches (default 1).
    #[serde(default = "one")]
    pub oversubscription: u32,
}

fn one() -> u32 {
    1
}

impl FatTree {
    /// The core switches kept for the oversubscription ratio, in index order.
    pub fn kept_cores(&self) -> Vec<u32> {
        let half = self.k / 2;
        let n_keep = (half * half / self.oversubscription.max(1)) as usize;
        let mut keep: Vec<u32> = (0..half * half)
            .map(|i| (i % half) * half + i / half)
            .take(n_keep)
            .collect();
        keep.sort_unstable();
        keep
    }

    /// Wires the fat-tree.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        let k = self.k;
        if k < 2 || k % 2 != 0 {
            return Err(("k".into(), "expected an even number of at least 2".into()));
        }
        if k > 64 {
            return Err((
                "k".into(),
                "expected at most 64 (k = 64 is 65 536 hosts)".into(),
            ));
        }
        let half = k / 2;
        let r = self.oversubscription;
        if r == 0 || (half * half) % r != 0 {
            return Err((
                "oversubscription".into(),
                format!("expected a divisor of (k/2)^2 = {}", half * half),
            ));
        }
        let (hr, fr, d) = (
            self.link_rate.0,
            self.fabric_rate.unwrap_or(self.link_rate).0,
            self.link_delay.0,
        );
        let mut b = NetworkBuilder::new();
        let mut hosts = Vec::new();
        for n in 0..k * half * half {
            hosts.push(b.host(format!("h{n}")));
        }
        let mut edges = Vec::new();
        let mut aggs = Vec::new();
        for p in 0..k {
            for e in 0..half {
                edges.push(b.switch(format!("pod{p}-edge{e}")));
            }
            for a in 0..half {
                aggs.push(b.switch(format!("pod{p}-agg{a}")));
            }
        }
        let kept = self.kept_cores();
        let cores: Vec<_> = kept
            .iter()
            .map(|c| (c, b.switch(format!("core{c}"))))
            .collect();
        for (n, h) in hosts.into_iter().enumerate() {
            b.link(h, edges[n / half as usize], hr, d);
        }
        for p in 0..k {
            for e in 0..half {
                for a in 0..half {
                    b.link(
                        edges[(p * half + e) as usize],
                        aggs[(p * half + a) as usize],
                        fr,
                        d,
                    );
                }
            }
        }
        for (c, node) in cores {
            let a = c / half;
            for p in 0..k {
                b.link(aggs[(p * half + a) as usize], node, fr, d);
            }
        }
        let desc = format!(
            "fat-tree k={k}, {} hosts at {}, fabric {}, {} of {} core switches (core oversubscription {r}:1)",
            k * half * half,
            format_rate(hr),
            format_rate(fr),
            kept.len(),
            half * half
        );
        Ok((b, desc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ft(k: u32, r: u32) -> FatTree {
        FatTree {
            k,
            link_rate: default_rate(),
            fabric_rate: None,
            link_delay: default_delay(),
            oversubscription: r,
        }
    }

    #[test]
    fn kept_cores_spread_over_aggregation_positions() {
        // k = 16: 64 cores, agg position a owns cores 8a..8a+7
        let t = ft(16, 4);
        let kept = t.kept_cores();
        assert_eq!(kept.len(), 16);
        for a in 0..8 {
            assert_eq!(kept.iter().filter(|c| **c / 8 == a).count(), 2);
        }
        let kept16 = ft(16, 16).kept_cores();
        assert_eq!(kept16, vec![0, 8, 16, 24]);
        assert_eq!(ft(16, 1).kept_cores().len(), 64);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(ft(5, 1).build().err().unwrap().0, "k");
        assert_eq!(ft(16, 3).build().err().unwrap().0, "oversubscription");
    }
}
