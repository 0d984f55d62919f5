//! Jellyfish (Singla et al., NSDI 2012): switches joined at random into an
//! (almost) r-regular graph, `hosts_per_switch` hosts on each. One of the "randomly
//! connected" topologies QShare §4.1 supports; it is not a multi-rooted tree.
//!
//! Construction (the paper's): repeatedly join two random switches that both have a
//! free port and are not yet linked; when no such pair is left but a switch still
//! has two or more free ports, remove a random existing link (x, y) and join that
//! switch to x and to y. The random stream is seeded by `seed`, so a seed always
//! gives the same graph. Names: hosts `h0…` (host `h{n}` on switch
//! `n / hosts_per_switch`), switches `sw{i}`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::engine::rng::Rng;
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// Parameters of a Jellyfish fabric.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Jellyfish {
    /// Number of switches (at least 2).
    pub switches: u32,
    /// Switch-to-switch links per switch, r (at least 1, below `switches`).
    pub degree: u32,
    /// Hosts on each switch.
    pub hosts_per_switch: u32,
    /// Rate of the host links.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Rate of switch-to-switch links (default: `link_rate`).
    #[serde(default)]
    pub fabric_rate: Option<Rate>,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
    /// Seed of the random wiring [1].
    #[serde(default = "one")]
    pub seed: u64,
}

fn one() -> u64 {
    1
}

impl Jellyfish {
    /// The switch-to-switch edges, each (a, b) with a < b, in construction order.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let n = self.switches as usize;
        let mut rng = Rng::stream(self.seed, "jellyfish");
        let mut free = vec![self.degree; n];
        let mut linked = std::collections::BTreeSet::new();
        let mut edges: Vec<(u32, u32)> = Vec::new();
        loop {
            let open: Vec<u32> = (0..n as u32).filter(|&i| free[i as usize] > 0).collect();
            let pairs: Vec<(u32, u32)> = open
                .iter()
                .flat_map(|&a| open.iter().map(move |&b| (a, b)))
                .filter(|&(a, b)| a < b && !linked.contains(&(a, b)))
                .collect();
            if !pairs.is_empty() {
                let (a, b) = pairs[rng.below(pairs.len() as u64) as usize];
                linked.insert((a, b));
                edges.push((a, b));
                free[a as usize] -= 1;
                free[b as usize] -= 1;
                continue;
            }
            // a switch with two free ports left: splice it into a random link
            let Some(s) = open.into_iter().find(|&i| free[i as usize] >= 2) else {
                return edges;
            };
            let cands: Vec<usize> = (0..edges.len())
                .filter(|&e| {
                    let (x, y) = edges[e];
                    x != s
                        && y != s
                        && !linked.contains(&(x.min(s), x.max(s)))
                        && !linked.contains(&(y.min(s), y.max(s)))
                })
                .collect();
            if cands.is_empty() {
                return edges;
            }
            let (x, y) = edges.remove(cands[rng.below(cands.len() as u64) as usize]);
            linked.remove(&(x, y));
            for z in [x, y] {
                linked.insert((z.min(s), z.max(s)));
                edges.push((z.min(s), z.max(s)));
            }
            free[s as usize] -= 2;
        }
    }

    /// Wires the fabric.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        if self.switches < 2 || self.switches > 4096 {
            return Err(("switches".into(), "expected 2 to 4096".into()));
        }
        if self.degree == 0 || self.degree >= self.switches {
            return Err((
                "degree".into(),
                format!("expected 1 to {}", self.switches - 1),
            ));
        }
        if self.hosts_per_switch == 0 {
            return Err(("hosts_per_switch".into(), "expected at least 1".into()));
        }
        super::check_product(
            ("switches", self.switches as u64),
            ("hosts_per_switch", self.hosts_per_switch as u64),
        )?;
        let (hr, fr, d) = (
            self.link_rate.0,
            self.fabric_rate.unwrap_or(self.link_rate).0,
            self.link_delay.0,
        );
        let mut b = NetworkBuilder::new();
        let hosts: Vec<_> = (0..self.switches * self.hosts_per_switch)
            .map(|i| b.host(format!("h{i}")))
            .collect();
        let sw: Vec<_> = (0..self.switches)
            .map(|i| b.switch(format!("sw{i}")))
            .collect();
        for (i, h) in hosts.into_iter().enumerate() {
            b.link(h, sw[i / self.hosts_per_switch as usize], hr, d);
        }
        let edges = self.edges();
        for &(a, c) in &edges {
            b.link(sw[a as usize], sw[c as usize], fr, d);
        }
        let desc = format!(
            "jellyfish, {} switches of degree {} ({} links, seed {}), {} hosts each at {}, fabric {}",
            self.switches,
            self.degree,
            edges.len(),
            self.seed,
            self.hosts_per_switch,
            format_rate(hr),
            format_rate(fr)
        );
        Ok((b, desc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_is_regular_simple_and_seeded() {
        let j = Jellyfish {
            switches: 20,
            degree: 4,
            hosts_per_switch: 2,
            link_rate: default_rate(),
            fabric_rate: None,
            link_delay: default_delay(),
            seed: 7,
        };
        let e = j.edges();
        let mut deg = vec![0; 20];
        for &(a, b) in &e {
            assert!(a < b);
            deg[a as usize] += 1;
            deg[b as usize] += 1;
        }
        assert_eq!(deg, vec![4; 20], "4-regular");
        let set: std::collections::BTreeSet<_> = e.iter().collect();
        assert_eq!(set.len(), e.len(), "no parallel links");
        assert_eq!(j.edges(), e, "same seed, same graph");
        assert_ne!(
            Jellyfish {
                seed: 8,
                ..j.clone()
            }
            .edges(),
            e
        );
    }
}
