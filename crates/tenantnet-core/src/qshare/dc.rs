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
//! connected" (§4.1), where QShare obtains "a set of paths between each hypervisor
//! pair" with the k-shortest path algorithm and "combines them to produce TR
//! options", k "similar to layer" widening the exploration. §4.1 gives no more, so
//! (our reading, documented in the README):
//! * level 1 is a single server; at level j ≥ 2 a TR option is rooted at a switch
//!   and its leaves are the servers on switches at most j − 2 hops away, widening
//!   like the layers of a tree until the last level reaches every server;
//! * the paths combined are each leaf's paths to the root (a hypervisor's path to
//!   another goes through the root, and a tree keeps the hose cut B·min(m, N − m)
//!   exact). Rank 0 is the breadth-first-search tree (ties to the lowest link id).
//!   At rank r ≥ 1 every switch, in breadth-first order, joins the tree by the
//!   shortest of its r + 1 shortest paths to the root ([`ksp`], Yen's algorithm)
//!   whose links not yet in the tree each have room for one VM's guarantee (the
//!   least any split reserves), cut where it meets the tree: the tree routes around
//!   full links. Combining every switch's r-th path blindly does not: one long
//!   path drags the others onto the links it crosses;
//! * Algorithm 1 explores ranks 0..k at a level before the next level, so longer
//!   paths are used only when no shortest-path tree at that level fits
//!   (`k_paths`, default 3); ranks that give rank r − 1's tree again are skipped.
//!
//! [`ksp`]: super::ksp

use super::ksp::{k_shortest, Path};
use crate::net::NetworkBuilder;

/// A TR option: every server below its root, with the links of its path (server end first).
pub type Tree = Vec<(u32, Vec<u32>)>;

/// Path ranks explored per level in a general graph unless set otherwise.
pub const DEFAULT_K_PATHS: u8 = 3;

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
    /// Not a multi-rooted tree: TR options are built from k shortest paths.
    pub general: bool,
    /// Path ranks explored per level in a general graph (k of §4.1).
    pub k_paths: u8,
    /// Switch-to-switch (link, neighbour) pairs of each node, by link id.
    adj: Vec<Vec<(u32, u32)>>,
}

/// Each node's layer: servers 1, then the hop count of a breadth-first search from
/// every server; an error names a node no server reaches.
fn layers(b: &NetworkBuilder, nodes: &[(String, bool)]) -> Result<Vec<u8>, String> {
    let n = nodes.len();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (a, c, _) in b.links() {
        adj[a.idx()].push(c.0);
        adj[c.idx()].push(a.0);
    }
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
    match layer.iter().position(|&l| l == 0) {
        Some(i) => Err(format!(
            "node {} is not connected to any server",
            nodes[i].0
        )),
        None => Ok(layer),
    }
}

impl Datacenter {
    /// Server `s`'s name.
    pub fn server_name(&self, s: u32) -> &str {
        &self.names[self.servers[s as usize] as usize]
    }

    /// The server named `name`, if any.
    pub fn server_named(&self, name: &str) -> Option<u32> {
        (self.servers.iter())
            .position(|&n| self.names[n as usize] == name)
            .map(|s| s as u32)
    }

    /// Link `l` as "upper to lower" (node names may hold hyphens).
    pub fn link_name(&self, l: u32) -> String {
        let x = &self.links[l as usize];
        format!(
            "{} to {}",
            self.names[x.upper as usize], self.names[x.lower as usize]
        )
    }

    /// Free VM slots over all servers.
    pub fn free_slots(&self) -> u64 {
        self.free.iter().map(|&f| f as u64).sum()
    }

    /// The datacenter of a topology: its hosts are servers with `slots` VM slots
    /// each, every port has `queues` queues. Fails if a node is unreachable from the
    /// servers or two linked nodes share a layer (not a multi-rooted tree).
    pub fn from_builder(b: &NetworkBuilder, slots: u32, queues: u32) -> Result<Self, String> {
        let nodes: Vec<(String, bool)> = b.nodes().map(|(n, h)| (n.to_string(), h)).collect();
        let n = nodes.len();
        let layer = layers(b, &nodes)?;
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
            k_paths: DEFAULT_K_PATHS,
            adj,
        };
        dc.top = dc.top_level();
        Ok(dc)
    }

    /// The highest level a tenant's tree may be rooted at: the top layer of a
    /// layered fabric; in a general one, level 2 plus the largest eccentricity among
    /// switches (which reaches every server).
    fn top_level(&self) -> u8 {
        if !self.general {
            return self.layer.iter().copied().max().unwrap_or(1);
        }
        let ecc = (0..self.layer.len() as u32)
            .filter(|&i| self.layer[i as usize] > 1)
            .map(|s| self.bfs(s).iter().map(|x| x.1).max().unwrap_or(0))
            .max()
            .unwrap_or(0);
        (ecc + 2).min(u8::MAX as u32) as u8
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

    /// Path ranks at exploration level `level`: `k_paths` in a general graph above
    /// level 1, else 1.
    pub fn ranks_at(&self, level: u8) -> u8 {
        if self.general && level > 1 {
            self.k_paths.max(1)
        } else {
            1
        }
    }

    /// The `k_paths` shortest paths from switch `root` to every node (by node index;
    /// none to servers), for [`Datacenter::tree_via`].
    pub fn paths_from(&self, root: u32) -> Vec<Vec<Path>> {
        (0..self.layer.len() as u32)
            .map(|u| {
                if self.layer[u as usize] > 1 {
                    k_shortest(&self.adj, root, u, self.k_paths.max(1) as usize)
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    /// The TR option rooted at `root` at exploration level `level` (path rank 0).
    pub fn tree_at(&self, level: u8, root: u32) -> Tree {
        self.build(level, root, |_, _| None)
    }

    /// The TR option of path rank `rank` ≥ 1 (see the module doc): each switch, in
    /// breadth-first order, joins the tree by the shortest of its first `rank` + 1
    /// paths to the root (`paths`, from [`Datacenter::paths_from`]) whose links not
    /// yet in the tree each have at least `min_available` bit/s unreserved, else by
    /// its shortest path.
    pub fn tree_via(
        &self,
        level: u8,
        root: u32,
        paths: &[Vec<Path>],
        rank: u8,
        min_available: u64,
    ) -> Tree {
        self.build(level, root, |u, path_of| {
            paths[u as usize].iter().take(rank as usize + 1).find(|p| {
                p.nodes[1..]
                    .iter()
                    .zip(&p.links)
                    .rev()
                    .take_while(|(n, _)| path_of[**n as usize].is_none())
                    .all(|(_, &l)| self.links[l as usize].available() >= min_available)
            })
        })
    }

    /// A TR option in a general graph: the switches at most `level` − 2 hops from
    /// `root`, in breadth-first order, each joining the tree by the path `pick`
    /// returns (from the root; `None`: its breadth-first-search parent), cut where it
    /// meets the tree; the leaves are their servers.
    fn build<'a>(
        &self,
        level: u8,
        root: u32,
        pick: impl Fn(u32, &[Option<Vec<u32>>]) -> Option<&'a Path>,
    ) -> Tree {
        if !self.general || level == 1 {
            return self.tree(root);
        }
        let radius = level as u32 - 2;
        let mut path_of: Vec<Option<Vec<u32>>> = vec![None; self.layer.len()];
        path_of[root as usize] = Some(Vec::new());
        let mut out = Vec::new();
        for (u, d, parent) in self.bfs(root) {
            if d > radius {
                break;
            }
            if path_of[u as usize].is_none() {
                if let Some(p) = pick(u, &path_of) {
                    // from u towards the root, up to the first node already in the tree
                    let m = p.nodes.len() - 1;
                    let join = (0..=m)
                        .rev()
                        .find(|&i| path_of[p.nodes[i] as usize].is_some())
                        .expect("the root is in the tree");
                    for i in join + 1..=m {
                        let mut up = vec![p.links[i - 1]];
                        up.extend(path_of[p.nodes[i - 1] as usize].clone().unwrap_or_default());
                        path_of[p.nodes[i] as usize] = Some(up);
                    }
                } else {
                    let l = &self.links[parent as usize];
                    let up = if l.upper == u { l.lower } else { l.upper };
                    let mut p = vec![parent];
                    p.extend(path_of[up as usize].clone().unwrap_or_default());
                    path_of[u as usize] = Some(p);
                }
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
