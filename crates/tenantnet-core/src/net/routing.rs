//! Shortest-path forwarding with ECMP by flow hash.
//!
//! Every host hangs off one switch, its *leaf*. For each leaf, a breadth-first
//! search over the switch graph gives every switch its distance to the leaf; a
//! switch's next hops toward any host under that leaf are its ports to neighbour
//! switches one step closer. Tables are indexed by (switch, leaf), not by host, so a
//! 27 648-host fat-tree (k = 48) needs 3.3 M entries rather than 80 M.
//!
//! ECMP picks among the next hops with a hash of the packet's flow hash and a
//! per-switch salt (so choices at successive switches are independent), which gives
//! each flow one random equal-cost path, as hash-based ECMP does.

use std::collections::{HashMap, VecDeque};

use super::network::{Host, Node, NodeKind, Switch};
use crate::engine::rng::Rng;
use crate::packet::ids::{HostId, NodeId, PortId, SwitchId};
use crate::switch::port::Port;

/// Forwarding tables of all switches.
#[derive(Clone)]
pub struct Routing {
    n_leaves: usize,
    leaf_switch: Vec<SwitchId>,
    host_leaf: Vec<u32>,
    host_port: Vec<PortId>,
    /// Per (switch, leaf): the next-hop set's offset in `nexthops` (high 24 bits)
    /// and its size (low 8 bits). Packed, and the sets shared, so that the table of
    /// a large fabric stays in cache.
    table: Vec<u32>,
    /// The distinct next-hop sets, each once per switch.
    nexthops: Vec<PortId>,
    salts: Vec<u32>,
}

/// A 32-bit integer hash with good avalanche (lowbias32).
#[inline]
pub fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

impl Routing {
    /// Computes the tables; fails if some leaf cannot reach another. `reverse` gives
    /// the port at the other end of each port's link.
    pub fn build(
        nodes: &[Node],
        hosts: &[Host],
        switches: &[Switch],
        ports: &[Port],
        reverse: &[PortId],
        ecmp_seed: u64,
    ) -> Result<Self, String> {
        let switch_of = |n: NodeId| match nodes[n.idx()].kind {
            NodeKind::Switch(s) => Some(s),
            NodeKind::Host(_) => None,
        };
        let mut leaf_index = vec![u32::MAX; switches.len()];
        let mut leaf_switch = Vec::new();
        let mut host_leaf = Vec::with_capacity(hosts.len());
        let mut host_port = Vec::with_capacity(hosts.len());
        for h in hosts {
            let sw_node = ports[h.nic.idx()].peer();
            let sw = switch_of(sw_node).expect("host attached to a switch");
            if leaf_index[sw.idx()] == u32::MAX {
                leaf_index[sw.idx()] = leaf_switch.len() as u32;
                leaf_switch.push(sw);
            }
            host_leaf.push(leaf_index[sw.idx()]);
            host_port.push(reverse[h.nic.idx()]);
        }
        let n_leaves = leaf_switch.len();
        let mut table = vec![0u32; switches.len() * n_leaves];
        let mut nexthops = Vec::new();
        let mut sets: HashMap<Vec<PortId>, u32> = HashMap::new();
        let mut set = Vec::new();
        let mut dist = vec![u32::MAX; switches.len()];
        let mut frontier = VecDeque::new();
        for (li, &leaf) in leaf_switch.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[leaf.idx()] = 0;
            frontier.push_back(leaf);
            while let Some(s) = frontier.pop_front() {
                for p in &nodes[switches[s.idx()].node.idx()].ports {
                    if let Some(n) = switch_of(ports[p.idx()].peer()) {
                        if dist[n.idx()] == u32::MAX {
                            dist[n.idx()] = dist[s.idx()] + 1;
                            frontier.push_back(n);
                        }
                    }
                }
            }
            for (si, sw) in switches.iter().enumerate() {
                if si == leaf.idx() {
                    continue;
                }
                if dist[si] == u32::MAX {
                    if leaf_index[si] != u32::MAX {
                        return Err(format!(
                            "switch {} cannot reach switch {}: the topology is disconnected",
                            crate::units::quoted(&nodes[sw.node.idx()].name),
                            crate::units::quoted(&nodes[switches[leaf.idx()].node.idx()].name)
                        ));
                    }
                    continue;
                }
                set.clear();
                for p in &nodes[sw.node.idx()].ports {
                    if let Some(n) = switch_of(ports[p.idx()].peer()) {
                        if dist[n.idx()] + 1 == dist[si] {
                            set.push(*p);
                        }
                    }
                }
                let start = *sets.entry(set.clone()).or_insert_with(|| {
                    nexthops.extend_from_slice(&set);
                    (nexthops.len() - set.len()) as u32
                });
                if set.len() > 255 {
                    return Err(format!(
                        "switch {} has {} equal-cost next hops toward one leaf; expected at most 255",
                        crate::units::quoted(&nodes[sw.node.idx()].name),
                        set.len()
                    ));
                }
                if start >= 1 << 24 {
                    return Err("the fabric has more than 2^24 distinct next-hop entries".into());
                }
                table[si * n_leaves + li] = start << 8 | set.len() as u32;
            }
        }
        let mut rng = Rng::stream(ecmp_seed, "ecmp-salt");
        let salts = (0..switches.len()).map(|_| rng.next_u64() as u32).collect();
        Ok(Routing {
            n_leaves,
            leaf_switch,
            host_leaf,
            host_port,
            table,
            nexthops,
            salts,
        })
    }

    /// The port switch `sw` forwards a packet for `dst` with ECMP hash `hash` on.
    #[inline]
    pub fn next_port(&self, sw: SwitchId, dst: HostId, hash: u32) -> PortId {
        let leaf = self.host_leaf[dst.idx()];
        if self.leaf_switch[leaf as usize] == sw {
            return self.host_port[dst.idx()];
        }
        let e = self.table[sw.idx() * self.n_leaves + leaf as usize];
        let (off, n) = (e >> 8, e & 0xff);
        debug_assert!(n > 0, "no route");
        let h = mix32(hash ^ self.salts[sw.idx()]);
        let i = ((h as u64 * n as u64) >> 32) as u32;
        self.nexthops[(off + i) as usize]
    }
}
