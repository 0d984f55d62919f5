//! The datacenter as QShare's controller sees it (§4): servers with VM slots,
//! switches in layers, full-duplex links with capacities and reservations, and
//! queues per switch port.
//!
//! Layers are counted from the servers up: a server is layer 1, a switch is one
//! more than the lowest layer among its neighbours (fat-tree: edge 2, aggregation
//! 3, core 4; leaf-spine: leaf 2, spine 3). A link joins a node to a neighbour one
//! layer down ("downward"). In a multi-rooted tree the downward links from any node
//! form a tree, the Tenant-Routing (TR) option rooted at it (§4.1): a layer-i TR is
//! the tree rooted at a layer-i node whose leaves are the servers reachable from it
//! by downward paths only.

use crate::net::NetworkBuilder;

/// A TR option: every server below its root, with the links of its path (server end first).
pub type Tree = Vec<(u32, Vec<u32>)>;

/// One full-duplex link.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The node one layer up.
    pub upper: u32,
    /// The node one layer down.
    pub lower: u32,
    /// Capacity in each direction, bit/s.
    pub capacity: u64,
    /// Bandwidth reserved in each direction, bit/s (the symmetric hose needs the
    /// same both ways). Integers, so that a departure restores it exactly.
    pub reserved: u64,
    /// Tenants with a reservation on the link.
    pub tenants: u32,
}

impl Link {
    /// Capacity not yet reserved.
    pub fn available(&self) -> u64 {
        self.capacity.saturating_sub(self.reserved)
    }
}

/// The datacenter inventory and its reservation state.
#[derive(Clone, Debug)]
pub struct Datacenter {
    /// Node names.
    pub names: Vec<String>,
    /// Layer of each node (servers are 1).
    pub layer: Vec<u8>,
    /// Node index of each server, in server order.
    pub servers: Vec<u32>,
    /// Server index of each node (`u32::MAX` for switches).
    pub server_of: Vec<u32>,
    /// VM slots of each server.
    pub slots: Vec<u32>,
    /// Free VM slots of each server.
    pub free: Vec<u32>,
    /// The links.
    pub links: Vec<Link>,
    /// Downward links of each node.
    pub down: Vec<Vec<u32>>,
    /// Queues on each switch port (and hypervisor port) [8].
    pub queues: u32,
    /// Highest layer.
    pub top: u8,
}

impl Datacenter {
    /// The datacenter of a topology: its hosts are servers with `slots` VM slots
    /// each, every port has `queues` queues. Fails if a node is unreachable from the
    /// servers or two linked nodes share a layer (not a multi-rooted tree).
    pub fn from_builder(b: &NetworkBuilder, slots: u32, queues: u32) -> Result<Self, String> {
        let nodes: Vec<(String, bool)> = b.nodes().map(|(n, h)| (n.to_string(), h)).collect();
        let n = nodes.len();
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, c, _) in b.links() {
            adj[a.idx()].push(c.0);
            adj[c.idx()].push(a.0);
        }
        // layers by breadth-first search from every server
        let mut layer = vec![0u8; n];
        let mut frontier: Vec<u32> = (0..n as u32).filter(|&i| nodes[i as usize].1).collect();
        for &s in &frontier {
            layer[s as usize] = 1;
        }
        let mut d = 1u8;
        while !frontier.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &u in &frontier {
                for &v in &adj[u as usize] {
                    if layer[v as usize] == 0 {
                        layer[v as usize] = d;
                        next.push(v);
                    }
                }
            }
            frontier = next;
        }
        if let Some(i) = layer.iter().position(|&l| l == 0) {
            return Err(format!(
                "node {} is not connected to any server",
                nodes[i].0
            ));
        }
        let mut links = Vec::new();
        let mut down = vec![Vec::new(); n];
        for (a, c, rate) in b.links() {
            let (la, lc) = (layer[a.idx()], layer[c.idx()]);
            let (upper, lower) = match la.cmp(&lc) {
                std::cmp::Ordering::Greater => (a.0, c.0),
                std::cmp::Ordering::Less => (c.0, a.0),
                std::cmp::Ordering::Equal => {
                    return Err(format!(
                        "{} and {} are linked but on the same layer; expected a multi-rooted tree",
                        nodes[a.idx()].0,
                        nodes[c.idx()].0
                    ))
                }
            };
            down[upper as usize].push(links.len() as u32);
            links.push(Link {
                upper,
                lower,
                capacity: rate,
                reserved: 0,
                tenants: 0,
            });
        }
        let servers: Vec<u32> = (0..n as u32).filter(|&i| nodes[i as usize].1).collect();
        let mut server_of = vec![u32::MAX; n];
        for (k, &s) in servers.iter().enumerate() {
            server_of[s as usize] = k as u32;
        }
        let top = layer.iter().copied().max().unwrap_or(1);
        Ok(Datacenter {
            names: nodes.into_iter().map(|x| x.0).collect(),
            layer,
            slots: vec![slots; servers.len()],
            free: vec![slots; servers.len()],
            servers,
            server_of,
            links,
            down,
            queues,
            top,
        })
    }

    /// Nodes at layer `l`, in index order.
    pub fn nodes_at(&self, l: u8) -> impl Iterator<Item = u32> + '_ {
        (0..self.layer.len() as u32).filter(move |&i| self.layer[i as usize] == l)
    }

    /// The TR option rooted at `root`: every server below it, each with the links of
    /// its downward path from the root (server end first).
    pub fn tree(&self, root: u32) -> Tree {
        let mut out = Vec::new();
        let mut stack: Vec<(u32, Vec<u32>)> = vec![(root, Vec::new())];
        while let Some((u, path)) = stack.pop() {
            if self.server_of[u as usize] != u32::MAX {
                let mut p = path.clone();
                p.reverse();
                out.push((self.server_of[u as usize], p));
                continue;
            }
            for &l in self.down[u as usize].iter().rev() {
                let mut p = path.clone();
                p.push(l);
                stack.push((self.links[l as usize].lower, p));
            }
        }
        out.sort_by_key(|x| x.0);
        out.dedup_by_key(|x| x.0);
        out
    }

    /// Total bandwidth reserved over all links.
    pub fn total_reserved(&self) -> u64 {
        self.links.iter().map(|l| l.reserved).sum()
    }
}
