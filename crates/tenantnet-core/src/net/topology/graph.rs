//! An explicit graph: the hosts, switches and links of a fabric written out, for
//! fabrics no generator produces (an operator's own network, or an arbitrary
//! "randomly connected" topology for QShare §4.1). Names are the ones given; links
//! keep their order, which fixes link ids (and so tie-breaking between equal paths).
//!
//! Rules, each checked with an error naming the entry: names are unique and
//! non-empty; every link joins two declared, different nodes, at most once; every
//! host has exactly one link, to a switch; every node is reachable from every other.

use crate::units::quoted;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{default_delay, default_rate, SpecError};
use crate::net::NetworkBuilder;
use crate::units::{format_rate, Rate, TimeSpan};

/// One link of a [`Graph`].
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    /// One end (a host or switch name).
    pub a: String,
    /// The other end.
    pub b: String,
    /// Rate (default: the graph's `link_rate`).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Propagation delay (default: the graph's `link_delay`).
    #[serde(default)]
    pub delay: Option<TimeSpan>,
}

/// A fabric given node by node and link by link.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// The fabric from a file instead of `links`: NetworkX's node-link JSON
    /// (`.json`) or a CSV of links (`a`, `b`, optional `rate` and `delay`), relative
    /// to the scenario. Nodes with one link are hosts, the others switches, unless a
    /// node's `type` attribute or `hosts`/`switches` here say otherwise.
    #[serde(default)]
    pub file: Option<String>,
    /// Host names, in host order (with `file`: the nodes that are hosts).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Switch names (with `file`: the nodes that are switches).
    #[serde(default)]
    pub switches: Vec<String>,
    /// Full-duplex links, e.g. `{ a = "tor1", b = "spine0", rate = "40Gbps" }`.
    #[serde(default)]
    pub links: Vec<GraphLink>,
    /// Rate of links that give none.
    #[serde(default = "default_rate")]
    pub link_rate: Rate,
    /// Delay of links that give none.
    #[serde(default = "default_delay")]
    pub link_delay: TimeSpan,
}

/// Declared node names: the node and whether it is a host.
type Ids = std::collections::BTreeMap<String, (crate::net::NodeId, bool)>;

impl Graph {
    /// Checks the rules and wires the fabric.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        if self.hosts.is_empty() {
            return Err(("hosts".into(), "expected at least one host".into()));
        }
        super::check_hosts("hosts", self.hosts.len() as u64)?;
        let mut b = NetworkBuilder::new();
        let ids = self.declare(&mut b)?;
        let adj = self.connect(&mut b, &ids)?;
        self.check_connected(&adj)?;
        let desc = format!(
            "graph, {} hosts, {} switches, {} links (default {})",
            self.hosts.len(),
            self.switches.len(),
            self.links.len(),
            format_rate(self.link_rate.0)
        );
        Ok((b, desc))
    }

    /// Hosts then switches, each name once: name → (node, is a host).
    fn declare(&self, b: &mut NetworkBuilder) -> Result<Ids, SpecError> {
        let mut ids = Ids::new();
        let named = self
            .hosts
            .iter()
            .map(|h| ("hosts", h, true))
            .chain(self.switches.iter().map(|s| ("switches", s, false)));
        for (i, (list, name, host)) in named.enumerate() {
            let at = if host { i } else { i - self.hosts.len() };
            if name.is_empty() {
                return Err((format!("{list}[{at}]").into(), "expected a name".into()));
            }
            let id = if host { b.host(name) } else { b.switch(name) };
            if ids.insert(name.clone(), (id, host)).is_some() {
                return Err((
                    format!("{list}[{at}]").into(),
                    format!("{} is declared twice; expected unique names", quoted(name)),
                ));
            }
        }
        Ok(ids)
    }

    /// Every link between two declared nodes, each pair once and never two hosts;
    /// every host on exactly one link. The adjacency lists, by node.
    fn connect(&self, b: &mut NetworkBuilder, ids: &Ids) -> Result<Vec<Vec<usize>>, SpecError> {
        let mut seen = std::collections::BTreeSet::new();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
        for (i, l) in self.links.iter().enumerate() {
            let end = |side: &str, name: &str| {
                ids.get(name).copied().ok_or_else(|| {
                    (
                        format!("links[{i}].{side}").into(),
                        format!(
                            "unknown node {}; expected a name from hosts or switches",
                            quoted(name)
                        ),
                    )
                })
            };
            let ((a, ha), (c, hc)) = (end("a", &l.a)?, end("b", &l.b)?);
            let fail = |k: String, m: String| Err((k.into(), m));
            if a == c {
                let m = format!(
                    "{} links to itself; expected two different nodes",
                    quoted(&l.b)
                );
                return fail(format!("links[{i}].b"), m);
            }
            if ha && hc {
                let m = format!(
                    "{} and {} are both hosts; expected a host on a switch",
                    quoted(&l.a),
                    quoted(&l.b)
                );
                return fail(format!("links[{i}]"), m);
            }
            if !seen.insert((a.0.min(c.0), a.0.max(c.0))) {
                let m = format!("{} and {} are already linked", quoted(&l.a), quoted(&l.b));
                return fail(format!("links[{i}]"), m);
            }
            adj[a.idx()].push(c.idx());
            adj[c.idx()].push(a.idx());
            let rate = l.rate.unwrap_or(self.link_rate).0;
            b.link(a, c, rate, l.delay.unwrap_or(self.link_delay).0);
        }
        for (i, h) in self.hosts.iter().enumerate() {
            let n = adj[ids[h].0.idx()].len();
            if n != 1 {
                return Err((
                    format!("hosts[{i}]").into(),
                    format!("{} has {n} links; expected exactly one", quoted(h)),
                ));
            }
        }
        Ok(adj)
    }

    /// A search from the first host reaches every node.
    fn check_connected(&self, adj: &[Vec<usize>]) -> Result<(), SpecError> {
        let mut reached = vec![false; adj.len()];
        let mut stack = vec![0usize];
        reached[0] = true;
        while let Some(u) = stack.pop() {
            for &v in &adj[u] {
                if !reached[v] {
                    reached[v] = true;
                    stack.push(v);
                }
            }
        }
        let Some(i) = reached.iter().position(|r| !r) else {
            return Ok(());
        };
        let (list, at) = if i < self.hosts.len() {
            ("hosts", i)
        } else {
            ("switches", i - self.hosts.len())
        };
        Err((
            format!("{list}[{at}]").into(),
            "not connected to the first host; expected a connected fabric".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring() -> Graph {
        let link = |a: &str, b: &str| GraphLink {
            a: a.into(),
            b: b.into(),
            rate: None,
            delay: None,
        };
        Graph {
            file: None,
            hosts: vec!["h0".into(), "h1".into()],
            switches: vec!["s0".into(), "s1".into(), "s2".into()],
            links: vec![
                link("s0", "s1"),
                link("s1", "s2"),
                link("s2", "s0"),
                link("h0", "s0"),
                link("h1", "s2"),
            ],
            link_rate: default_rate(),
            link_delay: default_delay(),
        }
    }

    #[test]
    fn a_valid_graph_builds_with_its_names_and_links() {
        let (b, desc) = ring().build().unwrap();
        assert_eq!(b.links().count(), 5);
        let names: Vec<&str> = b.nodes().map(|n| n.0).collect();
        assert_eq!(names, ["h0", "h1", "s0", "s1", "s2"]);
        assert!(desc.starts_with("graph, 2 hosts, 3 switches, 5 links"));
    }

    /// A way to break [`ring`], the key it is reported at and a fragment of the message.
    type Case = (Box<dyn Fn(&mut Graph)>, &'static str, &'static str);

    #[test]
    fn each_rule_is_reported_at_its_entry() {
        let cases: Vec<Case> = vec![
            (Box::new(|g| g.hosts.clear()), "hosts", "at least one host"),
            (
                Box::new(|g| g.switches[1] = "s0".into()),
                "switches[1]",
                "declared twice",
            ),
            (
                Box::new(|g| g.links[1].b = "s9".into()),
                "links[1].b",
                "unknown node \"s9\"",
            ),
            (
                Box::new(|g| g.links[0].b = "s0".into()),
                "links[0].b",
                "links to itself",
            ),
            (
                Box::new(|g| g.links[3].b = "h1".into()),
                "links[3]",
                "both hosts",
            ),
            (
                Box::new(|g| g.links[1] = g.links[0].clone()),
                "links[1]",
                "already linked",
            ),
            (
                Box::new(|g| {
                    g.links.pop();
                }),
                "hosts[1]",
                "0 links",
            ),
            (
                Box::new(|g| g.switches.push("lonely".into())),
                "switches[3]",
                "not connected",
            ),
        ];
        for (breaks, key, msg) in cases {
            let mut g = ring();
            breaks(&mut g);
            let (k, m) = g.build().err().expect("rejected");
            assert_eq!(k, key);
            assert!(m.contains(msg), "{key}: {m}");
        }
    }
}
