//! How a parallel run would cut the network into pieces, one per thread, and how far
//! ahead each piece may run alone (its lookahead).
//!
//! The cut follows the fabric's pods, so that traffic within a pod stays in one
//! partition: every switch gets its tier (one more than its nearest neighbour toward
//! the hosts: edge or leaf 1, aggregation 2, …), the top tier (cores, spines) is set
//! aside, and each connected piece of what remains (a fat-tree's pod, a leaf with its
//! hosts, one host of a star) is a unit that stays whole. Units go to partitions
//! largest first, each to the partition with the fewest hosts so far (ties to the
//! lowest index); the top tier's switches are dealt round-robin in node order. So the
//! cut depends only on the network and the number of partitions asked for.
//!
//! A packet that starts on a link at `t` arrives no earlier than `t + delay`, so a
//! piece can process every event before `T + lookahead` once it has every message
//! sent to it before `T`, where the lookahead is the smallest delay of a link between
//! two partitions (conservative synchronisation, Chandy and Misra 1979). A cut with a
//! link of no delay has no lookahead: such a scenario runs sequentially.

use crate::engine::Time;
use crate::net::{Network, NodeKind, PortId};

/// A cut of the network into partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Partition of each node, by `NodeId`.
    pub of_node: Vec<u16>,
    /// Partitions formed: the number asked for, or fewer when the network has fewer
    /// units (the pieces below its top tier) than that.
    pub parts: usize,
    /// Hosts in each partition.
    pub hosts: Vec<usize>,
    /// Ports whose link joins two partitions (both directions of each such link).
    pub cut_ports: Vec<PortId>,
    /// Smallest delay of a cut link, ps (`Time::MAX` when nothing is cut).
    pub lookahead: Time,
}

impl Cut {
    /// Cuts `net` into at most `parts` partitions (at least 1).
    pub fn new(net: &Network, parts: usize) -> Cut {
        let parts = parts.max(1);
        let tier = tiers(net);
        let top = tier.iter().copied().max().unwrap_or(0);
        let units = units(net, &tier, top);
        let formed = parts.min(units.len()).max(1);
        let mut of_node = vec![0u16; net.nodes.len()];
        let mut hosts = vec![0usize; formed];
        for unit in &units {
            let p = (0..formed).min_by_key(|&p| (hosts[p], p)).unwrap_or(0);
            for &n in unit {
                of_node[n] = p as u16;
                hosts[p] += matches!(net.nodes[n].kind, NodeKind::Host(_)) as usize;
            }
        }
        let tops = (0..net.nodes.len()).filter(|&n| top > 0 && tier[n] == top);
        for (i, n) in tops.enumerate() {
            of_node[n] = (i % formed) as u16;
        }
        let mut cut_ports = Vec::new();
        let mut lookahead = Time::MAX;
        for (i, port) in net.ports.iter().enumerate() {
            if of_node[port.node().idx()] != of_node[port.peer().idx()] {
                cut_ports.push(PortId(i as u32));
                lookahead = lookahead.min(port.delay());
            }
        }
        Cut {
            of_node,
            parts: formed,
            hosts,
            cut_ports,
            lookahead,
        }
    }

    /// Why the cut cannot run in parallel, if it cannot: a cut link of `net` (the
    /// network it cut) without delay, named.
    pub fn sequential_because(&self, net: &Network) -> Option<String> {
        let zero = (self.cut_ports.iter()).find(|p| net.ports[p.idx()].delay() == 0)?;
        Some(format!(
            "the link {} joins two partitions and has no delay: no lookahead, so the run is sequential",
            net.port_name(*zero)
        ))
    }
}

/// The nodes at the far end of node `n`'s links.
fn peers(net: &Network, n: usize) -> impl Iterator<Item = usize> + '_ {
    (net.nodes[n].ports.iter()).map(|p| net.ports[p.idx()].peer().idx())
}

/// Each node's tier: hosts 0, a switch one more than its nearest neighbour's (a switch
/// no host reaches keeps tier 1).
fn tiers(net: &Network) -> Vec<u32> {
    let mut tier = vec![u32::MAX; net.nodes.len()];
    let mut frontier: Vec<usize> = net.hosts.iter().map(|h| h.node.idx()).collect();
    frontier.iter().for_each(|&n| tier[n] = 0);
    let mut level = 0;
    while !frontier.is_empty() {
        level += 1;
        let mut next = Vec::new();
        for &n in &frontier {
            for far in peers(net, n) {
                if tier[far] == u32::MAX {
                    tier[far] = level;
                    next.push(far);
                }
            }
        }
        frontier = next;
    }
    tier.iter()
        .map(|&t| if t == u32::MAX { 1 } else { t })
        .collect()
}

/// The connected pieces of the network without its top tier (none set aside when the
/// top tier is the hosts'), largest (most hosts) first, each in node order.
fn units(net: &Network, tier: &[u32], top: u32) -> Vec<Vec<usize>> {
    let kept = |n: usize| top == 0 || tier[n] < top;
    let mut unit = vec![usize::MAX; net.nodes.len()];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for start in (0..net.nodes.len()).filter(|&n| kept(n)) {
        if unit[start] != usize::MAX {
            continue;
        }
        let (id, mut stack, mut members) = (out.len(), vec![start], Vec::new());
        unit[start] = id;
        while let Some(n) = stack.pop() {
            members.push(n);
            for far in peers(net, n) {
                if kept(far) && unit[far] == usize::MAX {
                    unit[far] = id;
                    stack.push(far);
                }
            }
        }
        members.sort_unstable();
        out.push(members);
    }
    let hosts = |u: &Vec<usize>| {
        let is_host = |&&n: &&usize| matches!(net.nodes[n].kind, NodeKind::Host(_));
        u.iter().filter(is_host).count()
    };
    out.sort_by_key(|u| (std::cmp::Reverse(hosts(u)), u[0]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::host_nic::{AckPath, HostNic};
    use crate::net::topology::{FatTree, LeafSpine, Star};
    use crate::net::{EcnConfig, FabricConfig, NetworkBuilder, PortConfig};
    use crate::units::{Rate, TimeSpan};

    const GBPS: Rate = Rate(10_000_000_000);
    const US: TimeSpan = TimeSpan(1_000_000);

    fn wire(b: NetworkBuilder) -> Network {
        let port = PortConfig::fifo(1 << 20, EcnConfig::default());
        let cfg = FabricConfig {
            host_port: port.clone(),
            switch_port: port,
            dscp_map: Default::default(),
            pool_size: None,
            host_nic: HostNic::Fifo,
            host_jitter: 0,
            tx_jitter: 0,
            clock_ppm: 0,
            ack_path: AckPath::Hashed,
        };
        b.build(&cfg, 7).unwrap()
    }

    fn fat_tree(k: u32) -> Network {
        let t = FatTree {
            k,
            link_rate: GBPS,
            fabric_rate: None,
            link_delay: US,
            oversubscription: 1,
        };
        wire(t.build().unwrap().0)
    }

    fn part_of(net: &Network, cut: &Cut, name: &str) -> u16 {
        cut.of_node[net.node_by_name(name).unwrap().idx()]
    }

    #[test]
    fn a_fat_tree_is_cut_by_pod_with_the_cores_dealt_round_robin() {
        let net = fat_tree(4);
        let cut = Cut::new(&net, 2);
        assert_eq!((cut.parts, cut.hosts.clone()), (2, vec![8, 8]));
        for n in &net.nodes {
            if let Some(pod) = n.name.strip_prefix("pod") {
                let pod: u16 = pod.split('-').next().unwrap().parse().unwrap();
                assert_eq!(part_of(&net, &cut, &n.name), pod % 2, "{}", n.name);
            }
        }
        // pods 0 and 2 in one partition, 1 and 3 in the other; 4 cores, 2 in each
        let cores: Vec<u16> = (net.nodes.iter())
            .filter(|n| n.name.starts_with("core"))
            .map(|n| part_of(&net, &cut, &n.name))
            .collect();
        assert_eq!(cores, vec![0, 1, 0, 1]);
        // every agg-core link whose ends differ, both ways: each core's 4 links, 2 cut
        assert_eq!(cut.cut_ports.len(), 4 * 2 * 2);
        assert_eq!(cut.lookahead, US.0);
        assert_eq!(cut.sequential_because(&net), None);
    }

    #[test]
    fn one_partition_cuts_nothing_and_more_than_the_units_are_not_formed() {
        let net = fat_tree(4);
        let one = Cut::new(&net, 1);
        assert_eq!(
            (one.parts, one.cut_ports.len(), one.lookahead),
            (1, 0, Time::MAX)
        );
        let many = Cut::new(&net, 16);
        assert_eq!((many.parts, many.hosts.clone()), (4, vec![4, 4, 4, 4]));
    }

    #[test]
    fn a_leaf_spine_is_cut_by_leaf_and_a_star_by_host() {
        let ls = LeafSpine {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 3,
            link_rate: GBPS,
            fabric_rate: None,
            oversubscription: None,
            link_delay: US,
        };
        let net = wire(ls.build().unwrap().0);
        let cut = Cut::new(&net, 3);
        assert_eq!(cut.hosts, vec![6, 3, 3]);
        let star = Star {
            hosts: 5,
            link_rate: GBPS,
            link_delay: TimeSpan(0),
        };
        let net = wire(star.build().unwrap().0);
        let cut = Cut::new(&net, 2);
        assert_eq!(cut.hosts, vec![3, 2]);
        // every host link that does not reach the switch's partition is cut; without
        // delay on them there is no lookahead
        assert_eq!(cut.cut_ports.len(), 2 * 2);
        assert_eq!(cut.lookahead, 0);
        let why = cut.sequential_because(&net).unwrap();
        assert!(why.contains("no delay") && why.contains("h1->"), "{why}");
    }
}
