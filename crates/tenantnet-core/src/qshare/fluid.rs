//! The tenant-level fluid model of §7.3.2 and the large-scale experiment drivers
//! behind Table 1 and Fig. 10.
//!
//! Fluid model: each tenant is active (unbounded demand) or inactive (no demand).
//! An active tenant T spreads its traffic over its TR's links in proportion to its
//! reservations r_T(L) (the paper's "communication pattern spreading the throughput
//! gain across T's links proportionally to T's guaranteed bandwidth"), so one
//! scalar, its gain g_T, describes it: it carries g_T · r_T(L) on every link L.
//! Tenants in the shared queue get exactly their guarantee (g = 1, as the paper
//! assumes). D-tenants are served by WFQ queues weighted by their reservations,
//! which on every link shares what the shared queue leaves in proportion to r_T(L).
//! Two readings of how the links combine ([`Sharing`]):
//! * **per link** (§7.3.2 as written): on each link L every active D-tenant's gain
//!   is (C_L − shared load) / Σ active D reservations, as if all were backlogged
//!   there; g_T is the smallest over T's links ("the smallest bandwidth gain that T
//!   obtains on any link of its TR"), and a link carries Σ g_T · r_T(L), which the
//!   paper notes never exceeds 100 %. Bandwidth a tenant cannot use because another
//!   of its links is tighter stays idle.
//! * **max-min**: the weighted max-min fair gains, by progressive filling (all
//!   unfrozen gains rise together; when a link fills, the tenants on it freeze), so
//!   such bandwidth goes to the tenants that can use it: fully work-conserving.
//!
//! Static reservation gives every active tenant g = 1.

use std::collections::{BTreeMap, BTreeSet};

use super::place::Placer;

/// What the fluid model computes for one set of active tenants.
#[derive(Clone, Debug, PartialEq)]
pub struct FluidResult {
    /// Gain of every active tenant that reserves bandwidth on some link.
    pub gain: BTreeMap<u32, f64>,
    /// Utilisation of every link under QShare.
    pub util_qshare: Vec<f64>,
    /// Utilisation of every link under static reservation.
    pub util_static: Vec<f64>,
}

/// How D-tenants' gains combine across links (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Each link shared independently; a tenant's gain is its smallest (§7.3.2).
    PerLink,
    /// Weighted max-min fair gains (progressive filling).
    MaxMin,
}

/// The fluid model's reading of §7.3.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// How gains combine across links.
    pub sharing: Sharing,
    /// Capacity of the server links while sharing (placement keeps the topology's):
    /// `Some(40 Gb/s)` reads §7.3's "the switch port capacity is 40 Gbps" as covering
    /// the top-of-rack ports facing the servers too. `None`: the topology's.
    pub server_port_bps: Option<u64>,
}

impl From<Sharing> for Model {
    fn from(sharing: Sharing) -> Self {
        Model {
            sharing,
            server_port_bps: None,
        }
    }
}

/// Runs the fluid model for the `active` tenants, `dedicated` holding dedicated queues.
pub fn fluid(
    p: &Placer,
    dedicated: &BTreeSet<u32>,
    active: &BTreeSet<u32>,
    model: impl Into<Model>,
) -> FluidResult {
    let model = model.into();
    let nl = p.dc.links.len();
    let cap: Vec<f64> =
        p.dc.links
            .iter()
            .map(|l| match model.server_port_bps {
                Some(c) if p.dc.server_of[l.lower as usize] != u32::MAX => c as f64,
                _ => l.capacity as f64,
            })
            .collect();
    let mut fixed = vec![0.0f64; nl]; // load of tenants at g = 1 (shared)
    let mut util_static = vec![0.0f64; nl];
    let mut free: Vec<u32> = Vec::new(); // active D-tenants
    let mut gain: BTreeMap<u32, f64> = BTreeMap::new();
    for &t in active {
        let Some(pl) = p.tenants.get(&t) else {
            continue;
        };
        if pl.links.is_empty() {
            continue;
        }
        for &(l, r) in &pl.links {
            util_static[l as usize] += r as f64;
        }
        if dedicated.contains(&t) {
            free.push(t);
        } else {
            gain.insert(t, 1.0);
            for &(l, r) in &pl.links {
                fixed[l as usize] += r as f64;
            }
        }
    }
    // what the shared queue leaves on each link, and the D-tenants' reservations there
    let room: Vec<f64> = (0..nl).map(|l| (cap[l] - fixed[l]).max(0.0)).collect();
    let mut dload = vec![0.0f64; nl];
    for &t in &free {
        for &(l, r) in &p.tenants[&t].links {
            dload[l as usize] += r as f64;
        }
    }
    let gains = match model.sharing {
        Sharing::PerLink => per_link(p, &free, &room, &dload),
        Sharing::MaxMin => max_min(p, &free, &room, dload),
    };
    let mut load = fixed;
    for (&t, &g) in &gains {
        for &(l, r) in &p.tenants[&t].links {
            load[l as usize] += g * r as f64;
        }
    }
    gain.extend(gains);
    let util_qshare = (0..nl).map(|l| load[l] / cap[l]).collect();
    for (l, u) in util_static.iter_mut().enumerate() {
        *u /= cap[l];
    }
    FluidResult {
        gain,
        util_qshare,
        util_static,
    }
}

/// Per-link sharing: each D-tenant's gain is the smallest, over its links, of the
/// room the shared queue leaves over the D-tenants' summed reservations.
fn per_link(p: &Placer, free: &[u32], room: &[f64], dload: &[f64]) -> BTreeMap<u32, f64> {
    free.iter()
        .map(|&t| {
            let g = p.tenants[&t]
                .links
                .iter()
                .map(|&(l, _)| room[l as usize] / dload[l as usize])
                .fold(f64::INFINITY, f64::min);
            (t, g)
        })
        .collect()
}

/// Weighted max-min gains by progressive filling: all unfrozen gains rise
/// together; when a link fills, the tenants on it freeze at that level.
fn max_min(p: &Placer, free: &[u32], room: &[f64], mut rising: Vec<f64>) -> BTreeMap<u32, f64> {
    let nl = room.len();
    let mut frozen_load = vec![0.0f64; nl];
    let mut gain = BTreeMap::new();
    let mut left: BTreeSet<u32> = free.iter().copied().collect();
    while !left.is_empty() {
        // the level at which each link with rising tenants fills
        let fill_at = |l: usize| (room[l] - frozen_load[l]).max(0.0) / rising[l];
        let level = (0..nl)
            .filter(|&l| rising[l] > 0.0)
            .map(fill_at)
            .fold(f64::INFINITY, f64::min);
        let full: Vec<usize> = (0..nl)
            .filter(|&l| rising[l] > 0.0 && fill_at(l) <= level * (1.0 + 1e-12))
            .collect();
        let freeze: BTreeSet<u32> = left
            .iter()
            .copied()
            .filter(|t| {
                p.tenants[t]
                    .links
                    .iter()
                    .any(|x| full.contains(&(x.0 as usize)))
            })
            .collect();
        for t in freeze {
            left.remove(&t);
            gain.insert(t, level);
            for &(l, r) in &p.tenants[&t].links {
                rising[l as usize] -= r as f64;
                frozen_load[l as usize] += level * r as f64;
            }
        }
        for r in rising.iter_mut() {
            if r.abs() < 1e-6 {
                *r = 0.0;
            }
        }
    }
    gain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qshare::place::tests::{fat_tree, pairs_on_one_link};
    use crate::qshare::place::{Request, Strategy};
    use crate::qshare::Hose;

    const M: u64 = 1_000_000;

    #[test]
    fn two_dedicated_tenants_share_a_link_by_reservation() {
        // both tenants on the same two server links (10 Gb/s): A reserves 300 M,
        // B 100 M; alone on the links they fill them in a 3:1 ratio
        let (p, ids) = pairs_on_one_link(&[300, 100]);
        let (a, b) = (ids[0], ids[1]);
        let both: BTreeSet<u32> = [a, b].into_iter().collect();
        let r = fluid(&p, &both, &both, Sharing::MaxMin);
        let g = 10_000.0 / 400.0;
        assert!(
            (r.gain[&a] - g).abs() < 1e-9 && (r.gain[&b] - g).abs() < 1e-9,
            "{r:?}"
        );
        let busy: Vec<f64> = r.util_qshare.iter().copied().filter(|u| *u > 0.0).collect();
        assert!(
            busy.iter().all(|u| (u - 1.0).abs() < 1e-9),
            "work-conserving"
        );
        // static reservation uses only the reservations
        let s: f64 = r.util_static.iter().copied().fold(0.0, f64::max);
        assert!((s - 0.04).abs() < 1e-12);
        // B in the shared queue keeps its guarantee; A takes the rest
        let only_a: BTreeSet<u32> = [a].into_iter().collect();
        let r = fluid(&p, &only_a, &both, Sharing::MaxMin);
        assert_eq!(r.gain[&b], 1.0);
        assert!((r.gain[&a] - 9_900.0 / 300.0).abs() < 1e-9);
        // an inactive tenant's share goes to the active one
        let r = fluid(&p, &both, &only_a, Sharing::MaxMin);
        assert!((r.gain[&a] - 10_000.0 / 300.0).abs() < 1e-9);
        assert!(!r.gain.contains_key(&b));
    }

    #[test]
    fn per_link_gains_are_each_tenants_tightest_link_and_below_max_min() {
        let mut p = Placer::new(fat_tree(4, 1, 30), Strategy::Balanced { cq_weight: 1.0 });
        let mut ids = BTreeSet::new();
        for i in 0..40u64 {
            ids.extend(p.place(Request {
                hose: Hose::homogeneous(2 + (i % 9) as u32, (50 + 70 * (i % 5)) * M),
                ha: Some(0.5),
            }));
        }
        let ded: BTreeSet<u32> = ids.iter().copied().filter(|t| t % 3 != 0).collect();
        let per = fluid(&p, &ded, &ids, Sharing::PerLink);
        let mm = fluid(&p, &ded, &ids, Sharing::MaxMin);
        let nl = p.dc.links.len();
        let (mut shared, mut dload) = (vec![0.0; nl], vec![0.0; nl]);
        for t in &ids {
            for &(l, r) in &p.tenants[t].links {
                if ded.contains(t) {
                    dload[l as usize] += r as f64;
                } else {
                    shared[l as usize] += r as f64;
                }
            }
        }
        for t in &ids {
            let want = if ded.contains(t) {
                p.tenants[t]
                    .links
                    .iter()
                    .map(|&(l, _)| {
                        let l = l as usize;
                        (p.dc.links[l].capacity as f64 - shared[l]) / dload[l]
                    })
                    .fold(f64::INFINITY, f64::min)
            } else {
                1.0
            };
            assert!((per.gain[t] - want).abs() < 1e-9, "tenant {t}");
            assert!(per.gain[t] >= 1.0 && per.gain[t] <= mm.gain[t] + 1e-9);
        }
        for l in 0..nl {
            assert!(per.util_qshare[l] <= 1.0 + 1e-9, "never over 100 %");
            assert!(per.util_qshare[l] <= mm.util_qshare[l] + 1e-9);
            assert!(per.util_qshare[l] >= per.util_static[l] - 1e-9);
        }
        let total = |u: &[f64]| u.iter().sum::<f64>();
        assert!(
            total(&per.util_qshare) < total(&mm.util_qshare) - 0.1,
            "per-link sharing leaves capacity idle that max-min hands out: {} vs {}",
            total(&per.util_qshare),
            total(&mm.util_qshare)
        );
    }

    #[test]
    fn wider_server_ports_scale_a_server_bound_gain() {
        // two tenants alone on two 10 Gb/s server links: gain 25; read as 40 Gb/s, 100
        let (p, ids) = pairs_on_one_link(&[300, 100]);
        let both: BTreeSet<u32> = ids.iter().copied().collect();
        let model = Model {
            sharing: Sharing::PerLink,
            server_port_bps: Some(40_000 * M),
        };
        let narrow = fluid(&p, &both, &both, Sharing::PerLink);
        let wide = fluid(&p, &both, &both, model);
        for t in &ids {
            assert!((narrow.gain[t] - 25.0).abs() < 1e-9);
            assert!((wide.gain[t] - 100.0).abs() < 1e-9);
        }
    }

    #[test]
    fn gains_are_max_min_fair_across_links() {
        // a tenant bottlenecked on a crowded link does not hold back the others
        let mut p = Placer::new(fat_tree(4, 1, 100), Strategy::Balanced { cq_weight: 0.0 });
        let mut ids = Vec::new();
        for _ in 0..6 {
            ids.push(
                p.place(Request {
                    hose: Hose::homogeneous(4, 200 * M),
                    ha: Some(0.5),
                })
                .unwrap(),
            );
        }
        let all: BTreeSet<u32> = ids.iter().copied().collect();
        let r = fluid(&p, &all, &all, Sharing::MaxMin);
        for (l, u) in r.util_qshare.iter().enumerate() {
            assert!(*u <= 1.0 + 1e-9, "link {l} over capacity: {u}");
        }
        for &t in &ids {
            // every tenant is limited by some full link of its own
            let full = p.tenants[&t]
                .links
                .iter()
                .any(|&(l, _)| (r.util_qshare[l as usize] - 1.0).abs() < 1e-9);
            assert!(full, "tenant {t} could still grow");
            assert!(r.gain[&t] >= 1.0);
        }
    }
}
