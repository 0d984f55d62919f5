use super::*;
use crate::engine::rng::Rng;

const M: f64 = 1e6;
const G: f64 = 1e9;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// The paper's §5.2 set-up: 9.5 Gb/s shared, guarantees 100 M, 100 M, 1 G, 3 G.
fn fig6_guarantees() -> (f64, Vec<f64>, Vec<f64>) {
    let c = 9.5 * G;
    let mg = vec![100.0 * M, 100.0 * M, 1.0 * G, 3.0 * G];
    let w = mg.iter().map(|m| m / c).collect();
    (c, mg, w)
}

#[test]
fn phase2_all_backlogged_gives_the_published_shares() {
    let (c, mg, w) = fig6_guarantees();
    let nr = allocate(c, &[f64::INFINITY; 4], &mg, &w);
    let expect = [226.0 * M, 226.0 * M, 2262.0 * M, 6786.0 * M];
    for (a, e) in nr.iter().zip(expect) {
        assert!(close(*a, e, 0.01), "{nr:?}");
    }
    assert!(close(nr.iter().sum(), c, 1e-12));
}

#[test]
fn macroscheduler_converges_to_the_published_shares() {
    // every VM backlogged: it sends exactly what it is allocated (from an unshaped
    // start where TCP split the 10 Gb/s NIC equally)
    let (c, mg, w) = fig6_guarantees();
    let p = MbfqParams::default();
    let mut st = vec![VmState::default(); 4];
    let mut sr = vec![2.5 * G; 4];
    for _ in 0..30 {
        let vms: Vec<VmInput> = (0..4)
            .map(|i| VmInput {
                sr: sr[i],
                mg: mg[i],
                w: w[i],
            })
            .collect();
        match run(&p, c, 0.95, &mut st, &vms) {
            Decision::Rates { ar, .. } => sr = ar,
            Decision::Inactive => panic!("utilisation is above 80 %"),
        }
    }
    let expect = [226.19 * M, 226.19 * M, 2261.9 * M, 6785.7 * M];
    for (a, e) in sr.iter().zip(expect) {
        assert!(close(*a, e, 0.01), "{sr:?}");
    }
}

#[test]
fn a_backlogged_vm_reaches_its_guarantee_in_three_intervals() {
    let p = MbfqParams::default();
    let c = 9.5 * G;
    let vm = |sr| VmInput {
        sr,
        mg: 1.0 * G,
        w: 1.0 / 9.5,
    };
    // idle until now: its allocation sits at the 10 Mb/s floor
    let mut st = VmState {
        ar: Some(10.0 * M),
        ru: 0,
        low: 7,
    };
    let mut trs = Vec::new();
    for _ in 0..3 {
        let ar = st.ar.unwrap();
        let tr = target_rate(&p, c, &mut st, &vm(ar));
        trs.push(tr);
        st.ar = Some(tr.min(1.0 * G));
    }
    assert!(close(trs[0], 12.0 * M, 1e-12), "{trs:?}");
    assert!(close(trs[1], 18.0 * M, 1e-12), "{trs:?}");
    assert_eq!(trs[2], 1.0 * G, "third stage: max(2 AR, MG)");
    assert_eq!(st.ru, 3);
}

#[test]
fn ramp_stages_are_capped_by_a_tenth_of_capacity() {
    let p = MbfqParams::default();
    let c = 10.0 * G;
    let mut st = VmState {
        ar: Some(4.0 * G),
        ru: 0,
        low: 0,
    };
    let v = VmInput {
        sr: 4.0 * G,
        mg: 1.0 * G,
        w: 0.1,
    };
    let tr = target_rate(&p, c, &mut st, &v);
    assert!(close(tr, 4.8 * G, 1e-12), "min(4.8 G, 4 G + 1 G): {tr}");
    let tr = target_rate(&p, c, &mut st, &v);
    assert!(close(tr, 5.0 * G, 1e-12), "min(6 G, 4 G + 1 G): {tr}");
    let tr = target_rate(&p, c, &mut st, &v);
    assert!(close(tr, 8.0 * G, 1e-12), "max(8 G, 1 G): {tr}");
}

#[test]
fn bandwidth_is_reclaimed_after_five_low_intervals_and_not_before() {
    let p = MbfqParams::default();
    assert_eq!(p.reclaim_intervals(), 5);
    let c = 9.5 * G;
    let mut st = VmState {
        ar: Some(2.0 * G),
        ru: 3,
        low: 0,
    };
    let idle = VmInput {
        sr: 0.5 * G,
        mg: 1.0 * G,
        w: 0.1,
    };
    for k in 1..5 {
        assert_eq!(target_rate(&p, c, &mut st, &idle), 2.0 * G, "interval {k}");
    }
    assert!(close(target_rate(&p, c, &mut st, &idle), 0.55 * G, 1e-12));
    // a VM that stopped entirely falls to the floor
    let mut st = VmState {
        ar: Some(2.0 * G),
        ..Default::default()
    };
    let stopped = VmInput { sr: 0.0, ..idle };
    let trs: Vec<f64> = (0..5)
        .map(|_| target_rate(&p, c, &mut st, &stopped))
        .collect();
    assert_eq!(trs, [2.0 * G, 2.0 * G, 2.0 * G, 2.0 * G, 10.0 * M]);
}

#[test]
fn a_disabled_allocation_targets_1_1_times_the_send_rate() {
    let p = MbfqParams::default();
    let mut st = VmState::default();
    let v = VmInput {
        sr: 5.0 * G,
        mg: 0.1 * G,
        w: 0.01,
    };
    assert!(close(target_rate(&p, 9.5 * G, &mut st, &v), 5.5 * G, 1e-12));
    // below 80 % NIC utilisation the microschedulers are off and state restarts
    let mut sts = vec![
        VmState {
            ar: Some(1.0 * G),
            ru: 2,
            low: 3
        };
        2
    ];
    assert_eq!(
        run(&p, 9.5 * G, 0.79, &mut sts, &[v, v]),
        Decision::Inactive
    );
    assert!(sts.iter().all(|s| *s == VmState::default()));
}

/// Fig. 4 read literally: `AvailBw_All` is never lowered by what a pass hands out.
fn literal_fig4(c: f64, tr: &[f64], mg: &[f64], w: &[f64]) -> Vec<f64> {
    let n = tr.len();
    let mut nr: Vec<f64> = (0..n).map(|i| tr[i].min(mg[i])).collect();
    let mut below: Vec<bool> = (0..n).map(|i| nr[i] < tr[i]).collect();
    let mut avail = c - nr.iter().sum::<f64>();
    let mut w_all: f64 = (0..n).filter(|&i| below[i]).map(|i| w[i]).sum();
    let mut count = below.iter().filter(|b| **b).count();
    while avail > 0.0 && count != 0 {
        for i in 0..n {
            if below[i] {
                nr[i] += avail * w[i] / w_all;
                if nr[i] >= tr[i] {
                    avail += nr[i] - tr[i];
                    nr[i] = tr[i];
                    below[i] = false;
                    w_all -= w[i];
                    count -= 1;
                }
            }
        }
    }
    nr
}

#[test]
fn the_literal_fig4_would_oversubscribe_the_link() {
    let (c, mg, w) = fig6_guarantees();
    let tr = [1.0 * G, 1.0 * G, 5.0 * G, 20.0 * G];
    let lit = literal_fig4(c, &tr, &mg, &w);
    assert!(lit.iter().sum::<f64>() > 1.5 * c, "{lit:?}");
    let ours = allocate(c, &tr, &mg, &w);
    assert!(ours.iter().sum::<f64>() <= c * (1.0 + 1e-12), "{ours:?}");
}

#[test]
fn phase2_properties_over_random_vms() {
    let mut rng = Rng::stream(42, "mbfq-phase2");
    for case in 0..20_000 {
        let n = 1 + rng.below(12) as usize;
        let c = (1.0 + rng.below(100) as f64) * G;
        // guarantees that fit C, demands from nothing to far above C
        let raw: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
        let fill = rng.uniform();
        let total: f64 = raw.iter().sum();
        let mg: Vec<f64> = raw.iter().map(|r| r / total * fill * c).collect();
        let tr: Vec<f64> = (0..n)
            .map(|_| {
                let x = rng.uniform();
                if x < 0.3 {
                    f64::INFINITY
                } else {
                    x * x * 2.0 * c
                }
            })
            .collect();
        let w: Vec<f64> = (0..n).map(|_| 0.01 + rng.uniform()).collect();
        let nr = allocate(c, &tr, &mg, &w);
        let eps = 1e-9 * c;
        let sum: f64 = nr.iter().sum();
        assert!(sum <= c + eps, "case {case}: sum {sum} > {c}");
        for i in 0..n {
            assert!(
                nr[i] + eps >= tr[i].min(mg[i]),
                "case {case}: vm {i} below min(TR, MG)"
            );
            assert!(nr[i] <= tr[i] + eps, "case {case}: vm {i} above TR");
        }
        // leftovers in proportion to weights: VMs still short of their target all
        // got the same extra per unit of weight, and no VM that reached its target
        // got more per unit of weight than that
        let level = |i: usize| (nr[i] - tr[i].min(mg[i])) / w[i];
        let short: Vec<usize> = (0..n).filter(|&i| nr[i] < tr[i] - eps).collect();
        if let Some(&first) = short.first() {
            for &i in &short {
                assert!(
                    (level(i) - level(first)).abs() <= 1e-6 * (1.0 + level(first)),
                    "case {case}: unequal shares {} vs {}",
                    level(i),
                    level(first)
                );
            }
            for i in (0..n).filter(|i| !short.contains(i)) {
                assert!(
                    level(i) <= level(first) * (1.0 + 1e-6) + 1e-6,
                    "case {case}"
                );
            }
            assert!(sum >= c - eps, "case {case}: a VM is short yet {sum} < {c}");
        }
    }
}
