//! Pinned placement: a tenant whose VMs' servers are given (an experiment's
//! instance, e.g. QShare Fig. 7(a)'s ten tenants with one VM on every server, or a
//! scenario that says where each VM runs), embedded in the lowest TR option that
//! holds all of them, its hose reserved on every link as Algorithm 1 would.
//!
//! Choices: among the layer's TR options whose servers include every given server,
//! the strategy's cost elects as in [`Placer::place`]; in a random topology only
//! the shortest-path trees (rank 0) are tried. Admission control holds: a tenant
//! whose hose a link cannot carry is refused, naming the link, and nothing changes.
//! The high-availability limit is not applied (the servers are given).

use super::{Datacenter, Placer, Request};

/// Why a pinned tenant cannot be embedded.
#[derive(Clone, Debug, PartialEq)]
pub enum PinError {
    /// The VMs given on the servers do not add up to the request's.
    Count {
        /// VMs given.
        given: u32,
        /// VMs in the request.
        want: u32,
    },
    /// A server given twice, or with too few free slots.
    Slots {
        /// The server.
        server: u32,
        /// Its free slots (0 if there is no such server).
        free: u32,
    },
    /// No TR option holds every given server (servers the topology does not join).
    NoTree,
    /// A link of every TR option holding the servers lacks bandwidth (the first
    /// one found, at the lowest layer where such options exist).
    Link {
        /// The link.
        link: u32,
        /// What the tenant needs on it, bit/s.
        need: u64,
        /// What is left on it, bit/s.
        available: u64,
    },
}

impl PinError {
    /// What is wrong, in words, naming servers and links as `dc` does.
    pub fn describe(&self, dc: &Datacenter) -> String {
        match self {
            PinError::Count { given, want } => {
                format!("{given} VMs given on servers; the request has {want}")
            }
            PinError::Slots { server, free } => format!(
                "server {}: given twice, or with {free} free slots, fewer than asked",
                crate::units::quoted(dc.server_name(*server))
            ),
            PinError::NoTree => "no TR option holds every given server".into(),
            PinError::Link {
                link,
                need,
                available,
            } => format!(
                "link {} has {available} bit/s unreserved; the tenant needs {need}",
                dc.link_name(*link)
            ),
        }
    }
}

impl Placer {
    /// Embeds `req` with `servers[i].1` of its VMs (in VM order) on server
    /// `servers[i].0` (each a server of the datacenter); its id, or why not
    /// (nothing changes).
    pub fn pin(&mut self, req: Request, servers: &[(u32, u32)]) -> Result<u32, PinError> {
        let given: u32 = servers.iter().map(|x| x.1).sum();
        if given != req.hose.n() || given == 0 {
            return Err(PinError::Count {
                given,
                want: req.hose.n(),
            });
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut left_free = 0;
        for &(s, k) in servers {
            let free = self.dc.free[s as usize];
            if free < k || !seen.insert(s) {
                return Err(PinError::Slots { server: s, free });
            }
            left_free += free - k;
        }
        let mut first_err = None;
        for layer in 1..=self.dc.top {
            let mut cands = Vec::new();
            for r in self.dc.roots_at(layer) {
                let tree = &self.trees[&(layer, r)];
                let index: Option<Vec<usize>> = servers
                    .iter()
                    .map(|&(s, _)| tree.iter().position(|(t, _)| *t == s))
                    .collect();
                let Some(index) = index else {
                    continue;
                };
                match self.reserve(tree, r, 0, &req, servers.to_vec(), index, left_free) {
                    Ok(c) => cands.push(c),
                    Err((link, need)) => {
                        first_err.get_or_insert(PinError::Link {
                            link,
                            need,
                            available: self.dc.links[link as usize].available(),
                        });
                    }
                }
            }
            if let Some(best) = self.elect(cands) {
                let tree = &self.trees[&(layer, best.root)];
                let paths = best.index.iter().map(|&k| tree[k].1.clone()).collect();
                return Ok(self.commit(best, paths, req, layer, true));
            }
        }
        Err(first_err.unwrap_or(PinError::NoTree))
    }
}
