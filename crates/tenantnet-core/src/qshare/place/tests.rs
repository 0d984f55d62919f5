use super::*;
use crate::engine::rng::Rng;
use crate::net::topology::{FatTree, LeafSpine};
use crate::units::{Rate, TimeSpan};

const M: u64 = 1_000_000;

pub(crate) fn fat_tree(k: u32, r: u32, slots: u32) -> Datacenter {
    let t = FatTree {
        k,
        link_rate: Rate(10_000 * M),
        fabric_rate: Some(Rate(40_000 * M)),
        link_delay: TimeSpan(1),
        oversubscription: r,
    };
    Datacenter::from_builder(&t.build().unwrap().0, slots, 8).unwrap()
}

/// Two-VM tenants (HA f = 0.5: one VM per server) with these per-VM guarantees in
/// Mb/s, placed greedily: all share the same two server links of a k = 4 fat-tree.
pub(crate) fn pairs_on_one_link(mbps: &[u64]) -> (Placer, Vec<u32>) {
    let mut p = Placer::new(fat_tree(4, 1, 100), Strategy::Greedy);
    let ids = mbps
        .iter()
        .map(|&b| {
            p.place(Request {
                hose: Hose::homogeneous(2, b * M),
                ha: Some(0.5),
            })
            .unwrap()
        })
        .collect();
    (p, ids)
}

fn jellyfish(slots: u32) -> Datacenter {
    let t = crate::net::topology::Jellyfish {
        switches: 12,
        degree: 3,
        hosts_per_switch: 2,
        link_rate: Rate(10_000 * M),
        fabric_rate: Some(Rate(5_000 * M)),
        link_delay: TimeSpan(1),
        seed: 5,
    };
    let dc = Datacenter::from_builder(&t.build().unwrap().0, slots, 8).unwrap();
    assert!(dc.general);
    dc
}

fn leaf_spine(slots: u32) -> Datacenter {
    let t = LeafSpine {
        leaves: 4,
        spines: 2,
        hosts_per_leaf: 4,
        link_rate: Rate(10_000 * M),
        fabric_rate: None,
        oversubscription: Some(2.0),
        link_delay: TimeSpan(1),
    };
    Datacenter::from_builder(&t.build().unwrap().0, slots, 8).unwrap()
}

fn random_request(rng: &mut Rng, max_n: u64) -> Request {
    let n = 1 + rng.below(max_n) as u32;
    let choices = [10, 50, 100, 200, 300];
    let hose = if rng.below(4) == 0 {
        Hose::new((0..n).map(|_| choices[rng.below(5) as usize] * M).collect())
    } else {
        Hose::homogeneous(n, choices[rng.below(5) as usize] * M)
    };
    let ha = (rng.below(5) == 0).then_some(0.5);
    Request { hose, ha }
}

/// Every invariant of the placement state, recomputed from the placements.
fn check(p: &Placer) {
    let dc = &p.dc;
    let mut reserved = vec![0u64; dc.links.len()];
    let mut tenants = vec![0u32; dc.links.len()];
    let mut used = vec![0u32; dc.servers.len()];
    for (id, t) in &p.tenants {
        let n = t.request.hose.n();
        assert_eq!(
            t.servers.iter().map(|s| s.1).sum::<u32>(),
            n,
            "tenant {id}: all VMs placed"
        );
        if let Some(f) = t.request.ha {
            let cap = (((1.0 - f) * n as f64 + 1e-9).floor() as u32).max(1);
            assert!(
                t.servers.iter().all(|s| s.1 <= cap),
                "tenant {id}: HA limit"
            );
        }
        // recompute the hose requirement on every link of its TR
        let tree: Tree = t
            .servers
            .iter()
            .zip(&t.paths)
            .map(|(s, p)| (s.0, p.clone()))
            .collect();
        assert_is_tree(dc, t.root, &tree);
        if t.rank == 0 {
            let option = dc.tree_at(t.layer, t.root);
            assert!(
                tree.iter().all(|x| option.contains(x)),
                "tenant {id}: paths of its TR"
            );
        }
        let mut below: BTreeMap<u32, u64> = BTreeMap::new();
        let mut placed = 0;
        for &(s, k) in &t.servers {
            used[s as usize] += k;
            let g = t.request.hose.sum(placed, placed + k);
            placed += k;
            let path = &tree
                .iter()
                .find(|x| x.0 == s)
                .expect("server inside its TR")
                .1;
            for &l in path {
                *below.entry(l).or_insert(0) += g;
            }
        }
        let recorded: BTreeMap<u32, u64> = t.links.iter().copied().collect();
        for (&l, &g) in &below {
            let need = t.request.hose.cut(g);
            assert_eq!(
                recorded.get(&l).copied().unwrap_or(0),
                need,
                "tenant {id}: link {l}"
            );
        }
        for &(l, r) in &t.links {
            reserved[l as usize] += r;
            tenants[l as usize] += 1;
        }
    }
    for (i, l) in dc.links.iter().enumerate() {
        assert!(l.reserved <= l.capacity, "link {i} over capacity");
        assert_eq!(l.reserved, reserved[i], "link {i} reservation");
        assert_eq!(l.tenants, tenants[i], "link {i} tenant count");
    }
    for (s, u) in used.iter().enumerate() {
        assert_eq!(dc.slots[s] - dc.free[s], *u, "server {s} slots");
    }
}

/// Random arrivals and departures with every invariant checked after each:
/// (admitted, rejected, admitted on a TR of path rank ≥ 1).
fn churn(mut p: Placer, seed: u64, ops: usize, max_n: u64) -> (usize, usize, usize) {
    let mut rng = Rng::stream(seed, "qshare-churn");
    let (mut admitted, mut rejected, mut ranked) = (0, 0, 0);
    for _ in 0..ops {
        if !p.tenants.is_empty() && rng.below(3) == 0 {
            let ids: Vec<u32> = p.tenants.keys().copied().collect();
            p.depart(ids[rng.below(ids.len() as u64) as usize]).unwrap();
        } else {
            let before = (p.dc.links.clone(), p.dc.free.clone());
            match p.place(random_request(&mut rng, max_n)) {
                Some(id) => {
                    admitted += 1;
                    ranked += usize::from(p.tenants[&id].rank > 0);
                    if rng.below(10) == 0 {
                        p.depart(id);
                        assert_eq!(
                            (p.dc.links.clone(), p.dc.free.clone()),
                            before,
                            "departure restores"
                        );
                    }
                }
                None => {
                    rejected += 1;
                    assert_eq!(
                        (p.dc.links.clone(), p.dc.free.clone()),
                        before,
                        "rejection changes nothing"
                    );
                }
            }
        }
        check(&p);
    }
    (admitted, rejected, ranked)
}

#[test]
fn placement_invariants_hold_under_churn() {
    for (name, dc, seed) in [
        ("fat-tree k=4", fat_tree(4, 1, 20), 1),
        ("fat-tree k=4 4:1", fat_tree(4, 4, 20), 2),
        ("fat-tree k=8 16:1", fat_tree(8, 16, 10), 3),
        ("leaf-spine", leaf_spine(20), 4),
        ("jellyfish", jellyfish(20), 5),
    ] {
        for strategy in [Strategy::Balanced { cq_weight: 0.8 }, Strategy::Greedy] {
            let (a, r, k) = churn(Placer::new(dc.clone(), strategy), seed, 1500, 40);
            assert!(
                a > 100 && r > 10,
                "{name} {strategy:?}: {a} admitted, {r} rejected"
            );
            if dc.general {
                assert!(k > 0, "{name} {strategy:?}: no TR of rank >= 1 explored");
            }
            println!("{name} {strategy:?}: {a} admitted, {r} rejected, {k} on rank >= 1");
        }
    }
}

#[test]
fn a_tenant_that_fits_one_server_stays_on_it() {
    let mut p = Placer::new(fat_tree(4, 1, 20), Strategy::Balanced { cq_weight: 0.5 });
    let id = p
        .place(Request {
            hose: Hose::homogeneous(15, 100 * M),
            ha: None,
        })
        .unwrap();
    let t = &p.tenants[&id];
    assert_eq!((t.layer, t.servers.len(), t.cb), (1, 1, 0));
    // with HA f = 0.5 at most 7 of 15 per server: it spreads and reserves bandwidth
    let id = p
        .place(Request {
            hose: Hose::homogeneous(15, 100 * M),
            ha: Some(0.5),
        })
        .unwrap();
    let t = &p.tenants[&id];
    assert!(t.servers.len() >= 3 && t.servers.iter().all(|s| s.1 <= 7));
    assert_eq!(
        t.layer, 3,
        "an edge switch has only 2 servers at k = 4: an aggregation switch"
    );
}

#[test]
fn bandwidth_limits_usable_slots() {
    // 10 servers' worth of VMs at 1 Gb/s each cannot squeeze 10 VMs per side of a
    // 10 Gb/s server link when others are elsewhere: min(m, N - m) * 1G <= 10G
    let mut p = Placer::new(fat_tree(4, 1, 40), Strategy::Balanced { cq_weight: 0.5 });
    let id = p
        .place(Request {
            hose: Hose::homogeneous(60, 1000 * M),
            ha: None,
        })
        .unwrap();
    let t = p.tenants[&id].clone();
    for &(l, r) in &t.links {
        assert!(r <= p.dc.links[l as usize].capacity);
    }
    check(&p);
    // a tenant needing more than any link can carry is rejected and leaves no trace
    let before = p.dc.links.clone();
    assert!(p
        .place(Request {
            hose: Hose::homogeneous(200, 1000 * M),
            ha: None
        })
        .is_none());
    assert_eq!(p.dc.links, before);
}

#[test]
fn balanced_placement_spreads_tenants_over_ports() {
    // many two-server tenants: weighting c_q spreads them, the greedy baseline piles
    // them onto the first edge switch's ports
    let run = |s: Strategy| {
        let mut p = Placer::new(fat_tree(4, 1, 8), s);
        for _ in 0..8 {
            p.place(Request {
                hose: Hose::homogeneous(4, 10 * M),
                ha: Some(0.5),
            })
            .unwrap();
        }
        p.dc.links.iter().map(|l| l.tenants).max().unwrap()
    };
    let balanced = run(Strategy::Balanced { cq_weight: 1.0 });
    let greedy = run(Strategy::Greedy);
    assert_eq!((balanced, greedy), (1, 4), "max tenants per link");
}

#[test]
fn jellyfish_trs_are_shortest_path_trees_that_widen_with_the_level() {
    let dc = jellyfish(20);
    let root = dc.roots_at(2)[0];
    let mut last = 0;
    for level in 2..=dc.top {
        let tree = dc.tree_at(level, root);
        assert!(tree.len() >= last);
        last = tree.len();
        for (s, path) in &tree {
            // a path from the server's link up to the root, each link touching the next
            let first = &dc.links[path[0] as usize];
            assert_eq!(first.lower, dc.servers[*s as usize]);
            assert!((path.len() as u8) < level);
        }
    }
    assert_eq!(
        last,
        dc.servers.len(),
        "the last level reaches every server"
    );
    assert_eq!(
        dc.tree_at(2, root).len(),
        2,
        "level 2: the root switch's own servers"
    );
}

/// A ring of 5 switches A..E (each with one server) and ring links with ids 0..4:
/// A-B, B-C, C-D, D-E, E-A.
fn ring5(slots: u32) -> Datacenter {
    let mut b = crate::net::NetworkBuilder::new();
    let sw: Vec<_> = (0..5).map(|i| b.switch(format!("s{i}"))).collect();
    let t: crate::engine::Time = 1;
    for i in 0..5 {
        b.link(sw[i], sw[(i + 1) % 5], 10_000 * M, t);
    }
    for (i, &s) in sw.iter().enumerate() {
        let h = b.host(format!("h{i}"));
        b.link(s, h, 10_000 * M, t);
    }
    let dc = Datacenter::from_builder(&b, slots, 8).unwrap();
    assert!(dc.general);
    dc
}

/// The links of `tree` form a tree rooted at `root` whose leaves are its servers:
/// every path climbs link by link from the server to the root, and every node has
/// one link up.
fn assert_is_tree(dc: &Datacenter, root: u32, tree: &Tree) {
    let mut up_of: BTreeMap<u32, u32> = BTreeMap::new();
    for (s, path) in tree {
        let mut at = dc.servers[*s as usize];
        for &l in path {
            let link = &dc.links[l as usize];
            assert!(
                link.upper == at || link.lower == at,
                "link {l} touches node {at}"
            );
            assert_eq!(*up_of.entry(at).or_insert(l), l, "node {at}: one link up");
            at = if link.upper == at {
                link.lower
            } else {
                link.upper
            };
        }
        assert_eq!(at, root, "server {s}'s path ends at the root");
    }
}

#[test]
fn jellyfish_ranks_route_around_full_links() {
    let dc = jellyfish(20);
    let mut rerouted = 0;
    for root in dc.roots_at(2) {
        let paths = dc.paths_from(root);
        for level in 2..=dc.top {
            let base = dc.tree_at(level, root);
            assert_is_tree(&dc, root, &base);
            // with every link free, each rank's tree is the shortest-path one
            assert_eq!(dc.tree_via(level, root, &paths, 2, 1), base);
            // mark the links of the base tree's longest path full: rank 2 avoids them
            let Some((_, long)) = base.iter().max_by_key(|x| x.1.len()) else {
                continue;
            };
            let mut busy = dc.clone();
            for &l in &long[1..] {
                busy.links[l as usize].reserved = busy.links[l as usize].capacity;
            }
            let t = busy.tree_via(level, root, &paths, 2, 1);
            assert_is_tree(&dc, root, &t);
            let servers: Vec<u32> = t.iter().map(|x| x.0).collect();
            let same: Vec<u32> = base.iter().map(|x| x.0).collect();
            assert_eq!(servers, same, "a rank changes paths, not leaves");
            let full = |p: &Vec<u32>| p[1..].iter().any(|l| long[1..].contains(l));
            let before = base.iter().filter(|x| full(&x.1)).count();
            let after = t.iter().filter(|x| full(&x.1)).count();
            assert!(after <= before);
            rerouted += usize::from(after < before);
        }
    }
    assert!(rerouted > 20, "{rerouted} trees routed around full links");
}

#[test]
fn a_full_shortest_path_is_routed_around_at_the_same_level() {
    // two VMs, one on s0's server and one on s2's (the others have no slots), with
    // the direct route s1-s2 (link 1) full: level 3 (root s1, reaching s0 and s2) has
    // no feasible shortest-path tree, but its rank-1 tree reaches s2 by s1-s0-s4-s3-s2
    let place = |k: u8| {
        let mut dc = ring5(1);
        dc.k_paths = k;
        for s in [1, 3, 4] {
            dc.free[s] = 0;
        }
        dc.links[1].reserved = dc.links[1].capacity;
        let mut p = Placer::new(dc, Strategy::Balanced { cq_weight: 0.5 });
        let id = p
            .place(Request {
                hose: Hose::homogeneous(2, 100 * M),
                ha: Some(0.5),
            })
            .unwrap();
        let t = p.tenants[&id].clone();
        assert!(
            t.links.iter().all(|&(l, _)| l != 1),
            "not over the full link"
        );
        (
            t.layer,
            t.rank,
            p.dc.names[t.root as usize].clone(),
            t.links.len(),
        )
    };
    // 5 links: two server links and s0-s4-s3-s2; s1-s0 carries both VMs' sides, so nothing
    assert_eq!(place(3), (3, 1, "s1".to_string(), 5));
    let (layer, rank, _, _) = place(1);
    assert_eq!((layer, rank), (4, 0), "k = 1: only a wider level fits");
}

#[test]
fn a_pinned_tenant_gets_the_lowest_tr_holding_its_servers() {
    let mut p = Placer::new(fat_tree(4, 1, 10), Strategy::Balanced { cq_weight: 0.5 });
    let req = |n: u32, mbps: u64| Request {
        hose: Hose::homogeneous(n, mbps * M),
        ha: None,
    };
    // servers 0 and 1 share an edge switch: a layer-2 TR, B·min(2, 2) on each link
    let id = p.pin(req(4, 100), &[(0, 2), (1, 2)]).unwrap();
    let t = &p.tenants[&id];
    assert_eq!((t.layer, t.servers.clone()), (2, vec![(0, 2), (1, 2)]));
    assert_eq!(t.links.len(), 2);
    assert!(t.links.iter().all(|l| l.1 == 200 * M));
    // one server per pod: a core's TR; its reservations are what Algorithm 1's
    // accounting gives (checked by `check` as for placed tenants)
    let id = p
        .pin(req(4, 50), &[(0, 1), (4, 1), (8, 1), (12, 1)])
        .unwrap();
    assert_eq!(p.tenants[&id].layer, 4);
    check(&p);
    // the log replays onto a fresh placer exactly
    let mut q = Placer::new(fat_tree(4, 1, 10), Strategy::Balanced { cq_weight: 0.5 });
    for op in p.log.clone() {
        match op {
            LogOp::Pin {
                request, servers, ..
            } => {
                q.pin(request, &servers).unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(q.tenants, p.tenants);
    assert_eq!(q.dc.links, p.dc.links);
}

#[test]
fn a_pinned_tenant_that_does_not_fit_is_refused_and_changes_nothing() {
    let mut p = Placer::new(fat_tree(4, 1, 10), Strategy::Greedy);
    let req = |n: u32, mbps: u64| Request {
        hose: Hose::homogeneous(n, mbps * M),
        ha: None,
    };
    let before = p.dc.links.clone();
    assert_eq!(
        p.pin(req(3, 100), &[(0, 2)]),
        Err(PinError::Count { given: 2, want: 3 })
    );
    assert_eq!(
        p.pin(req(11, 100), &[(0, 11)]),
        Err(PinError::Slots {
            server: 0,
            free: 10
        })
    );
    assert!(matches!(
        p.pin(req(2, 100), &[(0, 1), (0, 1)]),
        Err(PinError::Slots { server: 0, .. })
    ));
    // 20 VMs at 1 Gb/s split 10/10 need 10 Gb/s on each server link, available;
    // a second such tenant finds them full
    p.pin(req(20, 1000), &[(0, 10), (1, 10)]).unwrap();
    let full = p.dc.links.clone();
    let mut q = Placer::new(fat_tree(4, 1, 20), Strategy::Greedy);
    q.pin(req(20, 1000), &[(0, 10), (1, 10)]).unwrap();
    match q.pin(req(2, 1000), &[(0, 1), (1, 1)]) {
        Err(PinError::Link {
            need, available, ..
        }) => assert_eq!((need, available), (1000 * M, 0)),
        other => panic!("{other:?}"),
    }
    assert_ne!(full, before);
    assert_eq!(p.tenants.len(), 1);
}

#[test]
fn a_churned_log_replays_op_by_op_and_a_wrong_state_is_named() {
    for (dc, seed) in [(fat_tree(4, 4, 20), 7), (jellyfish(20), 8)] {
        let strategy = Strategy::Balanced { cq_weight: 0.5 };
        let mut p = Placer::new(dc.clone(), strategy);
        churn_in(&mut p, seed);
        let mut q = Placer::new(dc.clone(), strategy);
        for op in &p.log {
            q.apply(op).unwrap();
        }
        assert_eq!(q.tenants, p.tenants);
        assert_eq!(q.dc.links, p.dc.links);
        assert_eq!(q.dc.free, p.dc.free);
        // out of order: a departure of a tenant not there, an id already taken
        let depart = p.log.iter().find(|o| matches!(o, LogOp::Depart { .. }));
        let mut fresh = Placer::new(dc.clone(), strategy);
        let e = fresh.apply(depart.unwrap()).unwrap_err();
        assert!(
            e.contains("Depart") && e.contains("gave tenant None"),
            "{e}"
        );
        let second = p
            .log
            .iter()
            .find(|o| matches!(o, LogOp::Place { id, .. } if *id > 0));
        let e = fresh.apply(second.unwrap()).unwrap_err();
        assert!(e.contains("gave tenant Some(0)"), "{e}");
    }
}

/// 300 random arrivals and departures on `p`.
fn churn_in(p: &mut Placer, seed: u64) {
    let mut rng = Rng::stream(seed, "qshare-replay");
    for _ in 0..300 {
        if !p.tenants.is_empty() && rng.below(3) == 0 {
            let ids: Vec<u32> = p.tenants.keys().copied().collect();
            p.depart(ids[rng.below(ids.len() as u64) as usize]).unwrap();
        } else {
            p.place(random_request(&mut rng, 30));
        }
    }
}
