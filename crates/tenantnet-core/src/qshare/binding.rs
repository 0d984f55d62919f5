//! Dynamic tenant-queue binding (§5): the U-factor (Eq. 1), the score (Eq. 2),
//! Algorithm 2's queue allocation, per-link queue weights and DSCP values.
//!
//! Queues of a port: queue 0 is the shared queue (DSCP 0) while any tenant on the
//! link is without a dedicated queue, so up to Q − 1 tenants hold dedicated queues
//! there; a port whose tenants all hold dedicated queues uses all Q. "A spare
//! queue on L" for tenant T therefore means: holders + 1, plus one shared queue if
//! another tenant on L would still be shared, is at most Q. Algorithm 2 never gives
//! a tenant dedicated queues on only some links of its TR.

use std::collections::{BTreeMap, BTreeSet};

use super::place::{Placement, Placer};
use crate::engine::rng::Rng;

/// A tenant's measured usage at one hypervisor (bit/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HypervisorUsage {
    /// The server.
    pub server: u32,
    /// Inbound usage U^i_j of the tenant's VMs there.
    pub inbound: f64,
    /// Outbound usage U^o_j.
    pub outbound: f64,
}

/// Eq. 1: U_T = min(max_j max(U^i_j, U^o_j) / B_j, 1), B_j the tenant's hose
/// guarantee at server j's network interface. Servers where B_j = 0 (all of the
/// tenant's VMs on one server) are skipped; with none left, U_T = 0 (the tenant
/// needs no network).
pub fn u_factor(p: &Placement, usage: &[HypervisorUsage]) -> f64 {
    let mut placed = 0;
    let mut best = 0.0f64;
    for &(s, k) in &p.servers {
        let g = p.request.hose.sum(placed, placed + k);
        placed += k;
        let bj = p.request.hose.cut(g) as f64;
        if bj <= 0.0 {
            continue;
        }
        if let Some(u) = usage.iter().find(|u| u.server == s) {
            best = best.max(u.inbound.max(u.outbound) / bj);
        }
    }
    best.min(1.0)
}

/// Eq. 2: S_T = k · N · B · U_T, with N·B the tenant's summed guarantees (its
/// payment factor, §5.2) and `k` the pricing constant.
pub fn score(p: &Placement, u: f64, k: f64) -> f64 {
    k * p.request.hose.total() as f64 * u
}

/// One port's queues after binding.
#[derive(Clone, Debug, PartialEq)]
pub struct PortQueues {
    /// The link.
    pub link: u32,
    /// (queue index, tenants in it, weight in [1, max_weight]).
    pub queues: Vec<(u32, Vec<u32>, u32)>,
}

/// The outcome of one control interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// Tenants holding dedicated queues (D-tenants).
    pub dedicated: BTreeSet<u32>,
    /// DSCP of every tenant: 0 for the shared queue, 1–63 for D-tenants.
    pub dscp: BTreeMap<u32, u8>,
    /// Queues of every link that carries a reservation.
    pub ports: Vec<PortQueues>,
    /// D-tenants that found no DSCP value free of conflicts (they stay shared).
    pub dscp_exhausted: Vec<u32>,
}

/// Tenants reserving bandwidth on each link.
fn on_links(p: &Placer) -> Vec<Vec<u32>> {
    let mut on = vec![Vec::new(); p.dc.links.len()];
    for (&id, t) in &p.tenants {
        for &(l, _) in &t.links {
            on[l as usize].push(id);
        }
    }
    on
}

/// Algorithm 2 for one control interval: `held` are the tenants holding dedicated
/// queues from the last interval (departed ones are ignored), `scores` every
/// tenant's S_T (missing: 0). Ties in score are broken by a shuffle seeded by `seed`.
pub fn allocate_queues(
    p: &Placer,
    held: &BTreeSet<u32>,
    scores: &BTreeMap<u32, f64>,
    seed: u64,
) -> BTreeSet<u32> {
    let on = on_links(p);
    let ded: BTreeSet<u32> = held
        .iter()
        .copied()
        .filter(|t| p.tenants.contains_key(t))
        .collect();
    let holders: Vec<u32> = on
        .iter()
        .map(|ts| ts.iter().filter(|t| ded.contains(t)).count() as u32)
        .collect();
    let mut st = Holders {
        p,
        on,
        q: p.dc.queues,
        ded,
        holders,
        score: |t: u32| scores.get(&t).copied().unwrap_or(0.0),
    };
    st.shed_excess();
    let mut order: Vec<u32> = p.tenants.keys().copied().collect();
    Rng::stream(seed, "qshare-binding-ties").shuffle(&mut order);
    order.sort_by(|a, b| (st.score)(*b).total_cmp(&(st.score)(*a)));
    for t in order {
        if st.ded.contains(&t) {
            continue; // line 5: holders keep their queue
        }
        if let Some(victims) = st.victims_for(t) {
            for v in victims {
                st.release(v);
            }
            st.ded.insert(t);
            for &(l, _) in &p.tenants[&t].links {
                st.holders[l as usize] += 1;
            }
        }
    }
    st.ded
}

/// Algorithm 2's working state: who holds a dedicated queue, and how many holders
/// each link has.
struct Holders<'a, S: Fn(u32) -> f64> {
    p: &'a Placer,
    /// Tenants reserving bandwidth on each link.
    on: Vec<Vec<u32>>,
    /// Queues per port.
    q: u32,
    ded: BTreeSet<u32>,
    holders: Vec<u32>,
    score: S,
}

impl<S: Fn(u32) -> f64> Holders<'_, S> {
    /// The lowest-scored of `ts` that `pick` accepts (ties to the lower id).
    fn lowest(&self, ts: &[u32], pick: impl Fn(u32) -> bool) -> Option<u32> {
        let s = &self.score;
        ts.iter()
            .copied()
            .filter(|&o| pick(o))
            .min_by(|a, b| s(*a).total_cmp(&s(*b)).then(a.cmp(b)))
    }

    /// Tenant `v` gives its dedicated queues up.
    fn release(&mut self, v: u32) {
        self.ded.remove(&v);
        for &(l, _) in &self.p.tenants[&v].links {
            self.holders[l as usize] -= 1;
        }
    }

    /// Arrivals since the last interval are shared; where that leaves a port with
    /// more holders than queues (holders + a shared queue > Q), its lowest-scored
    /// holders give their queues up first.
    fn shed_excess(&mut self) {
        for l in 0..self.on.len() {
            loop {
                let ts = &self.on[l];
                let shared = ts.iter().any(|o| !self.ded.contains(o)) as u32;
                if self.holders[l] == 0 || self.holders[l] + shared <= self.q {
                    break;
                }
                let v = self.lowest(ts, |o| self.ded.contains(&o)).unwrap();
                self.release(v);
            }
        }
    }

    /// What tenant `t` needs to hold a queue on each of its links: per link a spare
    /// queue, or else the lowest-scored holder scoring below T (line 16), which
    /// then moves to the shared queue. `None` if some link has neither.
    fn victims_for(&self, t: u32) -> Option<BTreeSet<u32>> {
        let mut victims: BTreeSet<u32> = BTreeSet::new();
        for &(l, _) in &self.p.tenants[&t].links {
            let ts = &self.on[l as usize];
            let gone = ts.iter().filter(|o| victims.contains(o)).count() as u32;
            let h = self.holders[l as usize] - gone;
            let shared_others = ts
                .iter()
                .any(|&o| o != t && (!self.ded.contains(&o) || victims.contains(&o)));
            if h + 1 + shared_others as u32 <= self.q {
                continue;
            }
            let st = (self.score)(t);
            let victim = self.lowest(ts, |o| {
                self.ded.contains(&o) && !victims.contains(&o) && (self.score)(o) < st
            });
            match victim {
                // after the swap: h holders (T in for the victim) plus the shared queue
                Some(v) if h < self.q => {
                    victims.insert(v);
                }
                _ => return None,
            }
        }
        Some(victims)
    }
}

/// Queue weights (line 10) and DSCP values (§5.4) for a set of D-tenants.
/// A queue's weight is its reserved bandwidth over the link's total, "proportionally
/// translated" into [1, `max_weight`] (15 on the paper's switches, 100 for SONiC
/// DWRR): the port's largest queue gets `max_weight`, the others their reservation
/// relative to it, rounded. (Scaling the share itself, e.g. 10 % to 1.5 of 15, lets
/// rounding distort small queues' ratios: seven 94 Mb/s queues beside a 282 Mb/s
/// one would weigh 2 and 5, leaving the shared queue 26 % of the link for its 30 %
/// of the reservations; scaled to the largest they weigh 5 and 15, exactly.)
/// DSCP values are given greedily in tenant order: the smallest value in 1–63 that
/// no D-tenant sharing a link with it holds.
pub fn configure(p: &Placer, dedicated: &BTreeSet<u32>, max_weight: u32) -> Binding {
    let on = on_links(p);
    let mut dscp: BTreeMap<u32, u8> = p.tenants.keys().map(|&t| (t, 0)).collect();
    let mut exhausted = Vec::new();
    let mut ded = BTreeSet::new();
    for &t in dedicated {
        let mut used = [false; 64];
        for &(l, _) in &p.tenants[&t].links {
            for &o in &on[l as usize] {
                if o != t && ded.contains(&o) {
                    used[dscp[&o] as usize] = true;
                }
            }
        }
        match (1..64).find(|&d| !used[d]) {
            Some(d) => {
                dscp.insert(t, d as u8);
                ded.insert(t);
            }
            None => exhausted.push(t),
        }
    }
    let mut ports = Vec::new();
    for (l, ts) in on.iter().enumerate() {
        if ts.is_empty() {
            continue;
        }
        let resv = |t: u32| {
            p.tenants[&t]
                .links
                .iter()
                .find(|x| x.0 == l as u32)
                .map_or(0, |x| x.1)
        };
        let shared: Vec<u32> = ts.iter().copied().filter(|t| !ded.contains(t)).collect();
        let mut queues = Vec::new();
        let mut next = 0;
        if !shared.is_empty() {
            let r: u64 = shared.iter().map(|&t| resv(t)).sum();
            queues.push((0, shared, r));
            next = 1;
        }
        for &t in ts.iter().filter(|t| ded.contains(t)) {
            queues.push((next, vec![t], resv(t)));
            next += 1;
        }
        let top = queues.iter().map(|q| q.2).max().unwrap_or(0).max(1) as f64;
        let queues = queues
            .into_iter()
            .map(|(q, ts, r)| {
                let w = (r as f64 / top * max_weight as f64).round() as u32;
                (q, ts, w.clamp(1, max_weight))
            })
            .collect();
        ports.push(PortQueues {
            link: l as u32,
            queues,
        });
    }
    Binding {
        dedicated: ded,
        dscp,
        ports,
        dscp_exhausted: exhausted,
    }
}

/// Algorithm 2's invariants for binding `b` of the tenants in `p`, checked at
/// every control interval of a packet-level run (issue 16): every D-tenant holds
/// its own queue on every link of its TR (never on only part of it), every tenant
/// on a link is in exactly one of its queues, a port has at most Q queues, and no
/// two D-tenants sharing a link share a DSCP value (nor use 0, the shared queue's).
/// The first violation, in words.
pub fn check_invariants(p: &Placer, b: &Binding) -> Result<(), String> {
    let on = on_links(p);
    for pq in &b.ports {
        let l = pq.link as usize;
        let name = || p.dc.link_name(pq.link);
        if pq.queues.len() > p.dc.queues as usize {
            return Err(format!(
                "link {}: {} queues, more than the port's {}",
                name(),
                pq.queues.len(),
                p.dc.queues
            ));
        }
        let mut seen_dscp = BTreeMap::new();
        for &t in &on[l] {
            let holding: Vec<_> = pq.queues.iter().filter(|q| q.1.contains(&t)).collect();
            if holding.len() != 1 {
                return Err(format!(
                    "link {}: tenant {t} is in {} queues, expected 1",
                    name(),
                    holding.len()
                ));
            }
            let own = holding[0].1 == [t];
            let ded = b.dedicated.contains(&t);
            if ded && !own {
                return Err(format!(
                    "tenant {t} is dedicated but shares a queue on link {}: dedicated on only part of its TR",
                    name()
                ));
            }
            if !ded {
                continue;
            }
            let d = b.dscp.get(&t).copied().unwrap_or(0);
            if d == 0 {
                return Err(format!("tenant {t} is dedicated with DSCP 0"));
            }
            if let Some(o) = seen_dscp.insert(d, t) {
                return Err(format!(
                    "link {}: tenants {o} and {t} both hold DSCP {d}",
                    name()
                ));
            }
        }
    }
    for &t in &b.dedicated {
        for &(l, _) in &p.tenants[&t].links {
            if !b.ports.iter().any(|pq| pq.link == l) {
                return Err(format!(
                    "tenant {t} is dedicated but link {} has no queues",
                    p.dc.link_name(l)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
