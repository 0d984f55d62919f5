//! A host's packets reach its NIC at once where nothing could tell the difference
//! (`sim/handoff.rs`): the same results as by `Handoff` events.

use std::path::Path;

use tenantnet_core::scenario::{load, Format, LoadOptions};
use tenantnet_core::sim::Sim;

/// Plain hosts' web-search flows and an incast on a leaf-spine whose hosts' NICs are
/// small enough to drop and mark, with queues sampled: handoffs of every kind (idle
/// NICs, busy ones, wake-ups due before the handoff, drops at the NIC, samples).
const MIXED: &str = r#"
[simulation]
duration = "4ms"
seed = 7
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link_rate = "10Gbps"
[network]
buffer = "60KB"
host_buffer = "12KB"
ecn_threshold = "9KB"
tx_jitter = "2us"
[output]
sample_interval = "50us"
queues = true
[[workloads]]
kind = "poisson"
load = 0.8
cdf = "websearch"
stop = "3ms"
[[workloads]]
kind = "incast"
receiver = "h0"
size = "60KB"
"#;

fn sim(text: &str, at_once: bool) -> Sim {
    let opts = LoadOptions::default();
    let mut s = load(text, "t.toml", Path::new("."), Format::Toml, &opts).expect("valid");
    s.set_threads(1, true);
    if !at_once {
        s.fabric.hand_over_by_events();
    }
    s
}

/// Every output but the wall time, and the packets sent and dropped.
fn outputs(s: &mut Sim) -> (String, u64, u64) {
    let mut r = s.results();
    r.summary.wall_s = 0.0;
    let (sent, dropped) = (r.summary.packets_sent, r.summary.packets_dropped);
    (format!("{:?}", (r.summary, r.tables)), sent, dropped)
}

/// Handing packets over at once changes no output (the event count included), and
/// happens for most packets here, under TCP and DCTCP.
#[test]
fn handing_over_at_once_gives_the_same_results() {
    let dctcp = MIXED.replace("[output]", "[transport]\nprotocol = \"dctcp\"\n[output]");
    for text in [MIXED.to_string(), dctcp] {
        let (mut a, mut b) = (sim(&text, true), sim(&text, false));
        a.run();
        b.run();
        assert_eq!(b.fabric.handoffs_made(), 0);
        let (out, sent, dropped) = outputs(&mut a);
        let made = a.fabric.handoffs_made();
        assert!(made * 2 > sent, "{made} of {sent}");
        assert!(dropped > 0);
        assert_eq!(out, outputs(&mut b).0);
    }
}

/// A run stopped and resumed through the API hands over at once only within each
/// stretch: what it reports at every stop is what the events give.
#[test]
fn a_run_in_stretches_gives_the_same_results() {
    let (mut a, mut b) = (sim(MIXED, true), sim(MIXED, false));
    let mut t = 0;
    while t < 4_000_000_000 {
        t += 4_321_987;
        a.run_until(t);
        b.run_until(t);
        if t % 8 == 0 {
            assert_eq!(outputs(&mut a).0, outputs(&mut b).0, "at {t} ps");
        }
    }
    assert!(a.fabric.handoffs_made() > 0);
    assert_eq!(outputs(&mut a).0, outputs(&mut b).0);
}
