//! Tenant placement: QShare's Algorithm 1 (balanced placement, §4) and a greedy
//! Oktopus-style baseline, with admission control, the high-availability limit
//! and departures.
//!
//! Algorithm 1 explores TR options layer by layer from the servers up; at the first
//! layer where some option is feasible it elects, among all feasible options of that
//! layer, the one with the lowest cost. In a random topology each level is explored
//! path rank by path rank (k of §4.1, see [`super::dc`]), so a stage is a
//! (level, rank) pair. `get_optimal_allocation` (§4.2) places VMs
//! on the server with the largest usable slots first, usable slots being limited by
//! free slots, by the high-availability limit ⌊(1 − f)·N⌋ and by the bandwidth left
//! on the server's path to the TR's root; the option is feasible if every VM is
//! placed and every link of the TR can carry its hose reservation.
//!
//! Choices where §4.2 is silent (documented in the README):
//! * cost = w_q · c_q / max c_q + (1 − w_q) · c_b / max c_b over the layer's
//!   candidates (`cq_weight` = w_q); ties go to the option that leaves the fewest
//!   free slots on the servers it uses (best fit), then to the lowest root index.
//! * usable slots under a bandwidth limit a on the path: m VMs need B·min(m, N − m)
//!   ≤ a, i.e. m ≤ ⌊a/B⌋ or m ≥ N − ⌊a/B⌋ (B the largest per-VM guarantee); the
//!   final allocation is then checked exactly on every link.
//! * c_q counts the tenants already reserving bandwidth on a link, plus this one,
//!   over the links where this tenant would reserve any; a TR with no such link
//!   (one server) has c_q = c_b = 0.

use std::collections::{BTreeMap, HashMap};

use super::dc::{Datacenter, Tree};
use super::hose::Hose;
use super::ksp::Path;

/// How tenants are placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strategy {
    /// Algorithm 1 with this weight w_q on c_q (1 − w_q on c_b).
    Balanced {
        /// Weight of the queue-occupation cost.
        cq_weight: f64,
    },
    /// The first feasible TR option at the lowest layer, in root order (Oktopus-like).
    Greedy,
}

/// A tenant request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The VMs' guarantees.
    pub hose: Hose,
    /// Worst-case survival ratio f: at most ⌊(1 − f)·N⌋ VMs per server (`None`: no limit).
    pub ha: Option<f64>,
}

/// Where a tenant was embedded.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The request.
    pub request: Request,
    /// The TR's root node.
    pub root: u32,
    /// Its layer (exploration level in a general graph).
    pub layer: u8,
    /// The path rank its TR was built from (0 in a multi-rooted tree).
    pub rank: u8,
    /// (server, VMs) pairs.
    pub servers: Vec<(u32, u32)>,
    /// Each server's links up to the root (server end first), as `servers`.
    pub paths: Vec<Vec<u32>>,
    /// (link, reserved bandwidth) over the links where it reserves any.
    pub links: Vec<(u32, u64)>,
    /// c_b, the bandwidth it reserves summed over its links.
    pub cb: u64,
    /// c_q when it was placed.
    pub cq: u32,
}

/// A candidate allocation inside one TR option.
struct Candidate {
    root: u32,
    rank: u8,
    servers: Vec<(u32, u32)>,
    /// Index in the TR option of each of `servers` (paths are copied on commit only).
    index: Vec<usize>,
    links: Vec<(u32, u64)>,
    cb: u64,
    cq: u32,
    left_free: u32,
}

/// The placement engine: the datacenter state plus the tenants embedded in it.
pub struct Placer {
    /// Inventory and reservations.
    pub dc: Datacenter,
    /// Embedded tenants by id.
    pub tenants: BTreeMap<u32, Placement>,
    /// The placement strategy.
    pub strategy: Strategy,
    trees: HashMap<(u8, u32), Tree>,
    paths: HashMap<u32, Vec<Vec<Path>>>,
    next_id: u32,
    /// What changed the datacenter, in order: replaying it on a fresh placer over
    /// the same topology rebuilds this one exactly (rejected requests change
    /// nothing and are not logged; ids are given in admission order).
    pub log: Vec<LogOp>,
}

/// One change of a placer's datacenter.
#[derive(Clone, Debug, PartialEq)]
pub enum LogOp {
    /// Tenant `id` was admitted for `request`.
    Place {
        /// The request.
        request: Request,
        /// The id it got.
        id: u32,
    },
    /// Tenant `id` was embedded with its VMs on given servers ([`Placer::pin`]).
    Pin {
        /// The request.
        request: Request,
        /// (server, VMs) in VM order.
        servers: Vec<(u32, u32)>,
        /// The id it got.
        id: u32,
    },
    /// Tenant `id` left.
    Depart {
        /// Its id.
        id: u32,
    },
}

const EPS: f64 = 1e-9;

/// The most VMs of `req` one server may hold: ⌊(1 − f)·N⌋ (at least 1) under the
/// high-availability limit, else N.
fn ha_cap(req: &Request) -> u32 {
    let n = req.hose.n();
    req.ha
        .map_or(n, |f| (((1.0 - f) * n as f64 + EPS).floor() as u32).max(1))
}

impl Placer {
    /// An empty datacenter. Every TR option is explored once here and cached (the
    /// paper: "the topology search results can be cached"), so placement times
    /// measure the algorithm, not the topology walk. Options of path rank ≥ 1 (random
    /// topologies only) depend on the reservations and are built when explored, from
    /// k shortest paths cached per root.
    pub fn new(dc: Datacenter, strategy: Strategy) -> Self {
        let mut trees = HashMap::new();
        for level in 1..=dc.top {
            for r in dc.roots_at(level) {
                trees.insert((level, r), dc.tree_at(level, r));
            }
        }
        Placer {
            dc,
            tenants: BTreeMap::new(),
            strategy,
            trees,
            paths: HashMap::new(),
            next_id: 0,
            log: Vec::new(),
        }
    }

    /// `get_optimal_allocation` for `req` in the TR option `tree` rooted at `root`,
    /// built from path rank `rank`.
    fn allocate(&self, tree: &Tree, root: u32, rank: u8, req: &Request) -> Option<Candidate> {
        let n = req.hose.n();
        let cap = ha_cap(req);
        let dc = &self.dc;
        let mut usable: Vec<(u32, u32, usize)> = Vec::new(); // (usable, server, tree index)
        for (i, (s, path)) in tree.iter().enumerate() {
            let u = self.usable(*s, path, req, cap);
            if u > 0 {
                usable.push((u, *s, i));
            }
        }
        usable.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut left = n;
        let mut servers = Vec::new();
        let mut index = Vec::new();
        let mut left_free = 0;
        for &(u, s, i) in &usable {
            if left == 0 {
                break;
            }
            let take = u.min(left);
            servers.push((s, take));
            index.push(i);
            left_free += dc.free[s as usize] - take;
            left -= take;
        }
        if left > 0 {
            return None;
        }
        self.reserve(tree, root, rank, req, servers, index, left_free)
            .ok()
    }

    /// The reservations `req` needs in the TR option `tree` with its VMs on
    /// `servers` (in VM order; `index`: each one's place in `tree`), or the first
    /// link (with what it needs) that cannot carry its share.
    #[allow(clippy::too_many_arguments)]
    fn reserve(
        &self,
        tree: &Tree,
        root: u32,
        rank: u8,
        req: &Request,
        servers: Vec<(u32, u32)>,
        index: Vec<usize>,
        left_free: u32,
    ) -> Result<Candidate, (u32, u64)> {
        let mut below: BTreeMap<u32, u64> = BTreeMap::new();
        let mut placed = 0;
        for (&(_, take), &i) in servers.iter().zip(&index) {
            let g = req.hose.sum(placed, placed + take);
            placed += take;
            for &l in &tree[i].1 {
                *below.entry(l).or_insert(0) += g;
            }
        }
        let mut links = Vec::new();
        let (mut cb, mut cq) = (0u64, 0u32);
        for (&l, &g) in &below {
            let need = req.hose.cut(g);
            if need == 0 {
                continue;
            }
            let link = &self.dc.links[l as usize];
            if need > link.available() {
                return Err((l, need));
            }
            cb += need;
            cq = cq.max(link.tenants + 1);
            links.push((l, need));
        }
        Ok(Candidate {
            root,
            rank,
            servers,
            index,
            links,
            cb,
            cq,
            left_free,
        })
    }

    /// Embeds a tenant: the TR elected by the strategy, or `None` (rejected, nothing
    /// changes) if no TR option at any layer is feasible.
    pub fn place(&mut self, req: Request) -> Option<u32> {
        if req.hose.n() == 0 {
            return None;
        }
        for layer in 1..=self.dc.top {
            let roots = self.dc.roots_at(layer);
            let mut last: Vec<Option<Tree>> = vec![None; roots.len()];
            for rank in 0..self.dc.ranks_at(layer) {
                let mut cands = Vec::new();
                for (i, &r) in roots.iter().enumerate() {
                    let base = &self.trees[&(layer, r)];
                    let c = if rank == 0 {
                        self.allocate(base, r, 0, &req)
                    } else {
                        // ranks change paths, not leaves: no use where the slots do not
                        // suffice, nor where the shortest-path tree has room on every link
                        let b = req.hose.min();
                        if self.roomy(base, b) || !self.slots_fit(base, &req) {
                            continue;
                        }
                        let tree = self.ranked_tree(layer, r, rank, b);
                        if last[i].as_ref().unwrap_or(&self.trees[&(layer, r)]) == &tree {
                            continue;
                        }
                        let c = self.allocate(&tree, r, rank, &req);
                        last[i] = Some(tree);
                        c
                    };
                    if let Some(c) = c {
                        cands.push(c);
                        if self.strategy == Strategy::Greedy {
                            break;
                        }
                    }
                }
                if let Some(best) = self.elect(cands) {
                    // the elected option: cached at rank 0, else the one just built
                    let i = roots.iter().position(|&r| r == best.root).expect("a root");
                    let tree = match &last[i] {
                        Some(t) if rank > 0 => t,
                        _ => &self.trees[&(layer, best.root)],
                    };
                    let paths = best.index.iter().map(|&k| tree[k].1.clone()).collect();
                    return Some(self.commit(best, paths, req, layer, false));
                }
            }
        }
        None
    }

    /// Usable slots of server `s` for `req` (§4.2): free slots under the HA limit
    /// `cap`, limited by the bandwidth left on `path`: m VMs need B·min(m, N − m) ≤ a.
    fn usable(&self, s: u32, path: &[u32], req: &Request, cap: u32) -> u32 {
        let n = req.hose.n();
        let raw = self.dc.free[s as usize].min(cap).min(n);
        if raw == 0 {
            return 0;
        }
        let a = path
            .iter()
            .map(|&l| self.dc.links[l as usize].available())
            .min()
            .unwrap_or(u64::MAX);
        let mcap = a
            .checked_div(req.hose.max())
            .map_or(n, |m| m.min(n as u64) as u32);
        if raw >= n - mcap.min(n) {
            raw
        } else {
            raw.min(mcap)
        }
    }

    /// Whether the servers of `tree` could hold `req` through their own links (what
    /// no choice of switch paths changes).
    fn slots_fit(&self, tree: &Tree, req: &Request) -> bool {
        let cap = ha_cap(req);
        let room: u32 = tree
            .iter()
            .map(|(s, p)| self.usable(*s, &p[..1], req, cap))
            .sum();
        room >= req.hose.n()
    }

    /// Whether every switch-to-switch link of `tree` (a path's first link is its
    /// server's) has at least `b` unreserved.
    fn roomy(&self, tree: &Tree, b: u64) -> bool {
        tree.iter().all(|(_, p)| {
            p.iter()
                .skip(1)
                .all(|&l| self.dc.links[l as usize].available() >= b)
        })
    }

    /// The TR option of path rank `rank` ≥ 1 at `level` under `root` for a tenant
    /// whose smallest per-VM guarantee is `b`.
    fn ranked_tree(&mut self, level: u8, root: u32, rank: u8, b: u64) -> Tree {
        let dc = &self.dc;
        let paths = self
            .paths
            .entry(root)
            .or_insert_with(|| dc.paths_from(root));
        dc.tree_via(level, root, paths, rank, b)
    }

    fn elect(&self, cands: Vec<Candidate>) -> Option<Candidate> {
        let w = match self.strategy {
            Strategy::Greedy => return cands.into_iter().next(),
            Strategy::Balanced { cq_weight } => cq_weight,
        };
        let max_cb = cands.iter().map(|c| c.cb).max().unwrap_or(0) as f64;
        let max_cq = cands.iter().map(|c| c.cq).max().unwrap_or(0) as f64;
        let cost = |c: &Candidate| {
            let q = if max_cq > 0.0 {
                c.cq as f64 / max_cq
            } else {
                0.0
            };
            let b = if max_cb > 0.0 {
                c.cb as f64 / max_cb
            } else {
                0.0
            };
            w * q + (1.0 - w) * b
        };
        cands.into_iter().min_by(|x, y| {
            cost(x)
                .total_cmp(&cost(y))
                .then(x.left_free.cmp(&y.left_free))
                .then(x.root.cmp(&y.root))
        })
    }

    /// Embeds candidate `c` (`pinned`: its servers were given, [`Placer::pin`]).
    fn commit(
        &mut self,
        c: Candidate,
        paths: Vec<Vec<u32>>,
        request: Request,
        layer: u8,
        pinned: bool,
    ) -> u32 {
        for &(s, k) in &c.servers {
            self.dc.free[s as usize] -= k;
        }
        for &(l, r) in &c.links {
            let link = &mut self.dc.links[l as usize];
            link.reserved += r;
            link.tenants += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.log.push(match pinned {
            true => LogOp::Pin {
                request: request.clone(),
                servers: c.servers.clone(),
                id,
            },
            false => LogOp::Place {
                request: request.clone(),
                id,
            },
        });
        self.tenants.insert(
            id,
            Placement {
                request,
                root: c.root,
                layer,
                rank: c.rank,
                servers: c.servers,
                paths,
                links: c.links,
                cb: c.cb,
                cq: c.cq,
            },
        );
        id
    }

    /// A tenant leaves: its slots and reservations are released.
    pub fn depart(&mut self, id: u32) -> Option<Placement> {
        let p = self.tenants.remove(&id)?;
        self.log.push(LogOp::Depart { id });
        for &(s, k) in &p.servers {
            self.dc.free[s as usize] += k;
        }
        for &(l, r) in &p.links {
            let link = &mut self.dc.links[l as usize];
            link.reserved -= r;
            link.tenants -= 1;
        }
        Some(p)
    }

    /// Replays `op` from another placer's log: on a placer in the state that one
    /// was in when it logged `op`, the same tenant gets the same id and embedding.
    /// An error says how this placer's state differs.
    pub fn apply(&mut self, op: &LogOp) -> Result<(), String> {
        let (got, want) = match op {
            LogOp::Place { request, id } => (self.place(request.clone()), *id),
            LogOp::Pin {
                request,
                servers,
                id,
            } => (self.pin(request.clone(), servers).ok(), *id),
            LogOp::Depart { id } => (self.depart(*id).map(|_| *id), *id),
        };
        match got {
            Some(g) if g == want => Ok(()),
            _ => Err(format!("replaying {op:?} gave tenant {got:?}, not {want}")),
        }
    }
}

mod pin;
#[cfg(test)]
pub(crate) mod tests;

pub use pin::PinError;
