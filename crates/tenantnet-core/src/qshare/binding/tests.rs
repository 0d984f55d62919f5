use super::*;
use crate::engine::rng::Rng;
use crate::qshare::place::tests::{fat_tree, pairs_on_one_link};
use crate::qshare::place::{Request, Strategy};
use crate::qshare::Hose;

const M: u64 = 1_000_000;

fn fill(seed: u64, k: u32, r: u32, slots: u32, tenants: usize) -> Placer {
    let mut p = Placer::new(fat_tree(k, r, slots), Strategy::Balanced { cq_weight: 0.9 });
    let mut rng = Rng::stream(seed, "binding-fill");
    let choices = [10, 50, 100, 200, 300];
    for _ in 0..tenants {
        let n = 2 + rng.below(12) as u32;
        let b = choices[rng.below(5) as usize] * M;
        p.place(Request {
            hose: Hose::homogeneous(n, b),
            ha: Some(0.5),
        });
    }
    p
}

/// Algorithm 2's invariants ([`check_invariants`]), plus what `configure` adds:
/// weights in range, shared tenants in queue 0, every tenant on exactly the links
/// of its TR, DSCP 0 exactly for shared tenants.
fn check(p: &Placer, b: &Binding, max_weight: u32) {
    check_invariants(p, b).unwrap();
    let mut seen_links: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for port in &b.ports {
        for (qi, ts, w) in &port.queues {
            assert!((1..=max_weight).contains(w));
            if ts.iter().any(|t| !b.dedicated.contains(t)) {
                assert_eq!(*qi, 0, "the shared queue is queue 0");
            }
            for &t in ts {
                seen_links.entry(t).or_default().insert(port.link);
            }
        }
    }
    for (id, t) in &p.tenants {
        let links: BTreeSet<u32> = t.links.iter().map(|x| x.0).collect();
        assert_eq!(
            seen_links.get(id).cloned().unwrap_or_default(),
            links,
            "tenant {id}"
        );
        assert_eq!(b.dscp[id] == 0, !b.dedicated.contains(id));
    }
}

#[test]
fn binding_invariants_over_random_intervals() {
    for (seed, k, r) in [(1, 4, 1), (2, 4, 4), (3, 8, 16)] {
        let mut p = fill(seed, k, r, 16, 400);
        let mut rng = Rng::stream(seed, "binding-scores");
        let mut held = BTreeSet::new();
        let mut total_d = 0;
        for interval in 0..30 {
            let scores: BTreeMap<u32, f64> =
                p.tenants.keys().map(|&t| (t, rng.uniform())).collect();
            held = allocate_queues(&p, &held, &scores, interval);
            let b = configure(&p, &held, 15);
            check(&p, &b, 15);
            assert!(b.dscp_exhausted.is_empty());
            total_d += b.dedicated.len();
            // churn: a few tenants leave, a few arrive (served shared until the next interval)
            let ids: Vec<u32> = p.tenants.keys().copied().collect();
            for _ in 0..5 {
                p.depart(ids[rng.below(ids.len() as u64) as usize]);
            }
            for _ in 0..5 {
                p.place(Request {
                    hose: Hose::homogeneous(4, 100 * M),
                    ha: Some(0.5),
                });
            }
        }
        assert!(total_d > 0);
    }
}

#[test]
fn a_higher_score_preempts_the_lowest_holder_and_holders_keep_queues() {
    // nine two-server tenants on the same pair of server links: Q = 8 queues
    let mut p = Placer::new(fat_tree(4, 1, 100), Strategy::Greedy);
    let ids: Vec<u32> = (0..9)
        .map(|_| {
            p.place(Request {
                hose: Hose::homogeneous(2, 100 * M),
                ha: Some(0.5),
            })
            .unwrap()
        })
        .collect();
    assert!(p.dc.links.iter().any(|l| l.tenants == 9));
    let sc =
        |v: &[f64]| -> BTreeMap<u32, f64> { ids.iter().copied().zip(v.iter().copied()).collect() };
    let first = allocate_queues(
        &p,
        &BTreeSet::new(),
        &sc(&[9., 8., 7., 6., 5., 4., 3., 2., 1.]),
        0,
    );
    assert_eq!(
        first,
        ids[..7].iter().copied().collect(),
        "7 dedicated + the shared queue"
    );
    // the lowest now scores highest: it takes the queue of the lowest-scored holder
    let second = allocate_queues(&p, &first, &sc(&[9., 8., 7., 6., 5., 4., 0.5, 2., 10.]), 0);
    let mut expect: BTreeSet<u32> = ids[..6].iter().copied().collect();
    expect.insert(ids[8]);
    assert_eq!(second, expect);
    // a shared tenant scoring below every holder does not displace anyone
    let third = allocate_queues(&p, &second, &sc(&[9., 8., 7., 6., 5., 4., 3., 1., 10.]), 0);
    assert_eq!(third, second);
}

#[test]
fn u_factor_and_score_follow_eq_1_and_2() {
    let mut p = Placer::new(fat_tree(4, 1, 6), Strategy::Greedy);
    let id = p
        .place(Request {
            hose: Hose::homogeneous(10, 100 * M),
            ha: None,
        })
        .unwrap();
    let t = &p.tenants[&id];
    assert_eq!(t.servers, vec![(0, 6), (1, 4)]);
    // B_0 = B_1 = 100 M * min(6, 4) = 400 M
    let usage = [
        HypervisorUsage {
            server: 0,
            inbound: 200e6,
            outbound: 100e6,
        },
        HypervisorUsage {
            server: 1,
            inbound: 0.0,
            outbound: 300e6,
        },
    ];
    let u = u_factor(t, &usage);
    assert!((u - 0.75).abs() < 1e-12);
    assert!((score(t, u, 2.0) - 2.0 * 1e9 * 0.75).abs() < 1e-3);
    let busy = [HypervisorUsage {
        server: 1,
        inbound: 900e6,
        outbound: 0.0,
    }];
    assert_eq!(u_factor(t, &busy), 1.0, "capped at 1");
}

#[test]
fn weights_are_reservation_shares_scaled_to_the_switch_range() {
    let (p, ids) = pairs_on_one_link(&[300, 100]);
    let (a, b) = (ids[0], ids[1]);
    let ded: BTreeSet<u32> = [a, b].into_iter().collect();
    let cfg = configure(&p, &ded, 100);
    let port = &cfg.ports[0];
    let w: BTreeMap<u32, u32> = port.queues.iter().map(|(_, ts, w)| (ts[0], *w)).collect();
    assert_eq!((w[&a], w[&b]), (100, 33), "the largest queue at max_weight");
    assert_ne!(cfg.dscp[&a], cfg.dscp[&b]);
    // Fig. 7(a)'s link: seven 94 Mb/s D-tenants beside a shared queue of three
    let (p, ids) = pairs_on_one_link(&[94; 10]);
    let ded: BTreeSet<u32> = ids[..7].iter().copied().collect();
    let cfg = configure(&p, &ded, 15);
    let ws: Vec<u32> = cfg.ports[0].queues.iter().map(|q| q.2).collect();
    assert_eq!(ws, [15, 5, 5, 5, 5, 5, 5, 5]);
}

#[test]
fn invariant_check_catches_each_violation() {
    let (p, ids) = pairs_on_one_link(&[300, 100, 100]);
    let ded: BTreeSet<u32> = ids[..2].iter().copied().collect();
    let good = configure(&p, &ded, 15);
    check_invariants(&p, &good).unwrap();
    // a D-tenant put back into the shared queue on its link
    let mut b = good.clone();
    let q = &mut b.ports[0].queues;
    let (_, moved, _) = q.remove(1);
    q[0].1.extend(moved);
    assert!(check_invariants(&p, &b)
        .unwrap_err()
        .contains("dedicated on only part of its TR"));
    // two D-tenants with one DSCP value
    let mut b = good.clone();
    b.dscp.insert(ids[1], b.dscp[&ids[0]]);
    assert!(check_invariants(&p, &b)
        .unwrap_err()
        .contains("both hold DSCP"));
    // more queues than the port has
    let mut b = good.clone();
    for i in 0..p.dc.queues {
        b.ports[0].queues.push((10 + i, vec![], 1));
    }
    assert!(check_invariants(&p, &b)
        .unwrap_err()
        .contains("more than the port's"));
    // a tenant in no queue
    let mut b = good;
    b.ports[0].queues[0].1.clear();
    assert!(check_invariants(&p, &b)
        .unwrap_err()
        .contains("in 0 queues"));
}
