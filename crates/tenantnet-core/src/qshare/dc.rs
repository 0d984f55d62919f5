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
//!
//! Any other graph (one with links inside a layer, e.g. Jellyfish) is "randomly
//! connected" (§4.1), where QShare explores TR options built from shortest paths,
//! the exploration widening with a parameter "similar to layer". Here level 1 is a
//! single server, and level j ≥ 2 the shortest-path tree rooted at a switch (a
//! breadth-first search, ties to the lowest link id) spanning the servers on
//! switches at most j − 2 hops away; the last level reaches every server. This
//! takes one shortest path per server rather than combining k of them per pair.

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
    /// Highest layer (exploration level in a general graph).
    pub top: u8,
    /// Not a multi-rooted tree: TR options are shortest-path trees.
    pub general: bool,
    /// Switch-to-switch (link, neighbour) pairs of each node, by link id.
    adj: Vec<Vec<(u32, u32)>>,
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
        let general = b.links().any(|(a, c, _)| layer[a.idx()] == layer[c.idx()]);
        let mut links = Vec::new();
        let mut down = vec![Vec::new(); n];
        let mut adj = vec![Vec::new(); n];
        for (a, c, rate) in b.links() {
            let (la, lc) = (layer[a.idx()], layer[c.idx()]);
            if nodes[a.idx()].1 && nodes[c.idx()].1 {
                return Err(format!(
                    "servers {} and {} are linked directly; expected servers on switches",
                    nodes[a.idx()].0,
                    nodes[c.idx()].0
                ));
            }
            let (upper, lower) = if la >= lc { (a.0, c.0) } else { (c.0, a.0) };
            if layer[upper as usize] > 1 && layer[lower as usize] > 1 {
                adj[a.idx()].push((links.len() as u32, c.0));
                adj[c.idx()].push((links.len() as u32, a.0));
            }
            if la != lc {
                down[upper as usize].push(links.len() as u32);
            }
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
        let mut dc = Datacenter {
            names: nodes.into_iter().map(|x| x.0).collect(),
            layer,
            slots: vec![slots; servers.len()],
            free: vec![slots; servers.len()],
            servers,
            server_of,
            links,
            down,
            queues,
            top: 1,
            general,
            adj,
        };
        dc.top = if general {
            // level 2 + the largest eccentricity among switches reaches every server
            let switches: Vec<u32> = (0..n as u32)
                .filter(|&i| dc.layer[i as usize] > 1)
                .collect();
            let ecc = switches
                .iter()
                .map(|&s| dc.bfs(s).iter().map(|x| x.1).max().unwrap_or(0))
                .max()
                .unwrap_or(0);
            (ecc + 2).min(u8::MAX as u32) as u8
        } else {
            dc.layer.iter().copied().max().unwrap_or(1)
        };
        Ok(dc)
    }

    /// Breadth-first search over switch-to-switch links from switch `root`:
    /// (switch, hops, link to its parent) in visiting order.
    fn bfs(&self, root: u32) -> Vec<(u32, u32, u32)> {
        let mut seen = vec![false; self.layer.len()];
        seen[root as usize] = true;
        let mut order = vec![(root, 0u32, u32::MAX)];
        let mut i = 0;
        while i < order.len() {
            let (u, d, _) = order[i];
            i += 1;
            for &(l, v) in &self.adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    order.push((v, d + 1, l));
                }
            }
        }
        order
    }

    /// The roots of the TR options at exploration level `level` (its layer in a
    /// multi-rooted tree; in a general graph, servers at level 1, switches above).
    pub fn roots_at(&self, level: u8) -> Vec<u32> {
        if !self.general {
            return self.nodes_at(level).collect();
        }
        (0..self.layer.len() as u32)
            .filter(|&i| (self.layer[i as usize] == 1) == (level == 1))
            .collect()
    }

    /// The TR option rooted at `root` at exploration level `level`.
    pub fn tree_at(&self, level: u8, root: u32) -> Tree {
        if !self.general || level == 1 {
            return self.tree(root);
        }
        let radius = level as u32 - 2;
        let order = self.bfs(root);
        let mut path_of: Vec<Option<Vec<u32>>> = vec![None; self.layer.len()];
        path_of[root as usize] = Some(Vec::new());
        let mut out = Vec::new();
        for &(u, d, parent) in &order {
            if d > radius {
                break;
            }
            if parent != u32::MAX {
                let l = &self.links[parent as usize];
                let up = if l.upper == u { l.lower } else { l.upper };
                let mut p = vec![parent];
                p.extend(path_of[up as usize].clone().unwrap_or_default());
                path_of[u as usize] = Some(p);
            }
            let here = path_of[u as usize].clone().unwrap_or_default();
            for &l in &self.down[u as usize] {
                let s = self.links[l as usize].lower;
                if self.server_of[s as usize] != u32::MAX {
                    let mut p = vec![l];
                    p.extend(here.iter().copied());
                    out.push((self.server_of[s as usize], p));
                }
            }
        }
        out.sort_by_key(|x| x.0);
        out
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
