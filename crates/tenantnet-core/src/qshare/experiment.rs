//! The §7.3 experiments: fill a datacenter with random tenants (sizes exponential
//! with mean 49 VMs, per-VM guarantees drawn from {10, 50, 100, 200, 300} Mb/s),
//! then measure queue scarcity (Table 1) and the fluid model's gains (Fig. 10).
//!
//! Choices where §7.3 is silent (README, "QShare"):
//! * A tenant has max(1, round(X)) VMs, X exponential with mean 49.
//! * "Embed until full": tenants keep arriving until `give_up` consecutive ones
//!   are rejected (100).
//! * Ports are switch ports: the upper end of every link and the lower end of
//!   switch-to-switch links; a port serves the tenants reserving bandwidth on its link.
//! * RND: tenants none of whose links serve more tenants than a port has queues
//!   (they never contend). RNI: the mean, over `intervals` control intervals with
//!   U-factors drawn uniformly in (0, 1] each interval, of the share of tenants
//!   Algorithm 2 gives dedicated queues. Tenants on a single server (no links) count
//!   as dedicated in both (nothing to contend for); their share is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::binding::{allocate_queues, configure, score};
use super::fluid::{fluid, FluidResult, Model};
use super::hose::Hose;
use super::place::{Placer, Request};
use crate::engine::rng::Rng;

/// Random tenant requests.
#[derive(Clone, Debug, PartialEq)]
pub struct TenantGen {
    /// Mean of the exponential VM count.
    pub mean_vms: f64,
    /// Per-VM guarantees to draw from uniformly, bit/s.
    pub guarantees: Vec<u64>,
    /// High-availability survival ratio f for every tenant.
    pub ha: Option<f64>,
}

impl Default for TenantGen {
    fn default() -> Self {
        TenantGen {
            mean_vms: 49.0,
            guarantees: [10, 50, 100, 200, 300].map(|m| m * 1_000_000).to_vec(),
            ha: None,
        }
    }
}

impl TenantGen {
    /// The next request, or `None` if it has more VMs than `free` slots (it could
    /// not be placed, and is not built: an exponential draw with a huge mean would
    /// otherwise allocate one guarantee per VM).
    pub fn draw(&self, rng: &mut Rng, free: u64) -> Option<Request> {
        let n = (rng.exponential(self.mean_vms).round() as u32).max(1);
        let b = self.guarantees[rng.below(self.guarantees.len() as u64) as usize];
        (n as u64 <= free).then(|| Request {
            hose: Hose::homogeneous(n, b),
            ha: self.ha,
        })
    }
}

/// What filling the datacenter did.
#[derive(Clone, Debug, Default)]
pub struct Fill {
    /// Tenants embedded.
    pub admitted: u32,
    /// Requests rejected.
    pub rejected: u32,
    /// Wall time of each successful placement, nanoseconds.
    pub place_ns: Vec<u64>,
}

/// Places tenants from `gen` until `give_up` consecutive requests are rejected.
pub fn fill(p: &mut Placer, gen: &TenantGen, seed: u64, give_up: u32) -> Fill {
    let mut rng = Rng::stream(seed, "qshare-tenants");
    let mut f = Fill::default();
    let mut streak = 0;
    while streak < give_up {
        let req = gen.draw(&mut rng, p.dc.free_slots());
        let t0 = Instant::now();
        let ok = req.is_some_and(|r| p.place(r).is_some());
        let ns = t0.elapsed().as_nanos() as u64;
        if ok {
            f.admitted += 1;
            f.place_ns.push(ns);
            streak = 0;
        } else {
            f.rejected += 1;
            streak += 1;
        }
    }
    f
}

/// One sample of a churn run.
#[derive(Clone, Debug, PartialEq)]
pub struct ChurnSample {
    /// Time, seconds.
    pub t: f64,
    /// Tenants embedded.
    pub tenants: u32,
    /// Percent of VM slots in use.
    pub slot_use: f64,
    /// Percent of tenants none of whose links serves more tenants than a port has queues.
    pub rnd: f64,
    /// Requests rejected so far.
    pub rejected: u32,
}

/// §7.3.1's arrival-departure process: tenants from `gen` arrive as a Poisson process
/// of rate `lambda` per second and stay `lifetime` seconds (constant, as in the
/// paper and CloudMirror); the state is sampled every `every` seconds until `horizon`.
pub fn churn(
    p: &mut Placer,
    gen: &TenantGen,
    lambda: f64,
    lifetime: f64,
    horizon: f64,
    every: f64,
    seed: u64,
) -> Vec<ChurnSample> {
    let mut rng = Rng::stream(seed, "qshare-churn");
    let mut departures: std::collections::VecDeque<(f64, u32)> = Default::default();
    let mut out = Vec::new();
    let (mut t, mut next_sample, mut rejected) = (0.0, every, 0u32);
    loop {
        t += rng.exponential(1.0 / lambda);
        while next_sample <= t.min(horizon) {
            while departures.front().is_some_and(|d| d.0 <= next_sample) {
                let (_, id) = departures.pop_front().unwrap();
                p.depart(id);
            }
            out.push(sample(p, next_sample, rejected));
            next_sample += every;
        }
        if t > horizon {
            return out;
        }
        while departures.front().is_some_and(|d| d.0 <= t) {
            let (_, id) = departures.pop_front().unwrap();
            p.depart(id);
        }
        match gen
            .draw(&mut rng, p.dc.free_slots())
            .and_then(|r| p.place(r))
        {
            Some(id) => departures.push_back((t + lifetime, id)),
            None => rejected += 1,
        }
    }
}

/// Percent of tenants none of whose links serves more than `max` tenants (they
/// never contend for queues when a port can give `max` tenants their own).
pub fn never_contending(p: &Placer, max: u32) -> f64 {
    let links = &p.dc.links;
    let calm = p
        .tenants
        .values()
        .filter(|t| {
            t.links
                .iter()
                .all(|&(l, _)| links[l as usize].tenants <= max)
        })
        .count();
    if p.tenants.is_empty() {
        100.0
    } else {
        calm as f64 / p.tenants.len() as f64 * 100.0
    }
}

/// Percent of VM slots in use.
fn slot_use(p: &Placer) -> f64 {
    let slots: u64 = p.dc.slots.iter().map(|&s| s as u64).sum();
    let free: u64 = p.dc.free.iter().map(|&s| s as u64).sum();
    (slots - free) as f64 / slots as f64 * 100.0
}

fn sample(p: &Placer, t: f64, rejected: u32) -> ChurnSample {
    ChurnSample {
        t,
        tenants: p.tenants.len() as u32,
        slot_use: slot_use(p),
        rnd: never_contending(p, p.dc.queues),
        rejected,
    }
}

/// Table 1's measures of one filled datacenter.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Scarcity {
    /// Switch ports.
    pub ports: u32,
    /// Percent of ports serving fewer than 9 tenants.
    pub rnl_lt9: f64,
    /// Percent serving 9 to 12.
    pub rnl_9_12: f64,
    /// Percent serving more than 12.
    pub rnl_gt12: f64,
    /// Most tenants on one port.
    pub max_per_port: u32,
    /// Percent of tenants that never contend for queues (no link of theirs serves
    /// more tenants than a port has queues).
    pub rnd: f64,
    /// The same with queue 0 always kept for the shared queue (at most Q − 1).
    pub rnd_strict: f64,
    /// Mean percent of tenants with a dedicated queue per interval.
    pub rni: f64,
    /// Tenants embedded.
    pub tenants: u32,
    /// Percent of tenants on a single server.
    pub single_server: f64,
    /// Largest DSCP value the greedy colouring used.
    pub dscp_max: u8,
    /// D-tenants the colouring could not serve.
    pub dscp_exhausted: u32,
    /// Percent of VM slots in use.
    pub slot_use: f64,
    /// Percent of link capacity reserved (all links).
    pub bandwidth_use: f64,
}

/// Table 1 for the placement `p`.
pub fn scarcity(p: &Placer, intervals: u32, seed: u64) -> Scarcity {
    let dc = &p.dc;
    let q = dc.queues;
    let mut counts = Vec::new();
    for l in &dc.links {
        counts.push(l.tenants);
        if dc.server_of[l.lower as usize] == u32::MAX {
            counts.push(l.tenants);
        }
    }
    let ports = counts.len() as f64;
    let pct =
        |f: &dyn Fn(u32) -> bool| counts.iter().filter(|&&c| f(c)).count() as f64 / ports * 100.0;
    let n = p.tenants.len() as f64;
    let mut rng = Rng::stream(seed, "qshare-ufactors");
    let mut held = BTreeSet::new();
    let mut ded_sum = 0.0;
    let mut last = BTreeSet::new();
    for i in 0..intervals {
        let scores: BTreeMap<u32, f64> = p
            .tenants
            .iter()
            .map(|(&id, t)| (id, score(t, 1.0 - rng.uniform(), 1.0)))
            .collect();
        held = allocate_queues(p, &held, &scores, seed ^ i as u64);
        ded_sum += held.len() as f64 / n * 100.0;
        last = held.clone();
    }
    let b = configure(p, &last, 15);
    let cap: u64 = dc.links.iter().map(|l| l.capacity).sum();
    Scarcity {
        ports: counts.len() as u32,
        rnl_lt9: pct(&|c| c < 9),
        rnl_9_12: pct(&|c| (9..=12).contains(&c)),
        rnl_gt12: pct(&|c| c > 12),
        max_per_port: counts.iter().copied().max().unwrap_or(0),
        rnd: never_contending(p, q),
        rnd_strict: never_contending(p, q.saturating_sub(1)),
        rni: ded_sum / intervals.max(1) as f64,
        tenants: p.tenants.len() as u32,
        single_server: p.tenants.values().filter(|t| t.links.is_empty()).count() as f64 / n * 100.0,
        dscp_max: b.dscp.values().copied().max().unwrap_or(0),
        dscp_exhausted: b.dscp_exhausted.len() as u32,
        slot_use: slot_use(p),
        bandwidth_use: dc.total_reserved() as f64 / cap as f64 * 100.0,
    }
}

/// One draw of Fig. 10 at inactive ratio `r_in`: the gain of every active tenant
/// that uses the network (shared-queue ones count 1), and link utilisations under
/// QShare and static reservation. Inactive tenants are drawn at random; active
/// ones score k·N·B (U = 1), inactive ones 0, and Algorithm 2 runs from scratch.
pub fn gain_at(p: &Placer, r_in: f64, seed: u64, model: Model) -> FluidResult {
    let mut rng = Rng::stream(seed, &format!("qshare-inactive/{r_in}"));
    let active: BTreeSet<u32> = p
        .tenants
        .keys()
        .copied()
        .filter(|_| rng.uniform() >= r_in)
        .collect();
    let scores: BTreeMap<u32, f64> = p
        .tenants
        .iter()
        .map(|(&id, t)| {
            let u = if active.contains(&id) { 1.0 } else { 0.0 };
            (id, score(t, u, 1.0))
        })
        .collect();
    let ded = allocate_queues(p, &BTreeSet::new(), &scores, seed);
    let ded = configure(p, &ded, 15).dedicated;
    fluid(p, &ded, &active, model)
}
