//! Whole simulations through the public API: conservation, determinism, exact rates.

use std::path::Path;

use tenantnet_core::scenario::{load, Format, LoadOptions};
use tenantnet_core::sim::results::{Column, Results};

/// Runs a scenario to its end and checks packet conservation.
fn run(text: &str) -> Results {
    let mut sim = load(
        text,
        "test.toml",
        Path::new("."),
        Format::Toml,
        &LoadOptions::default(),
    )
    .expect("valid scenario");
    sim.run();
    let r = sim.results();
    let s = &r.summary;
    assert_eq!(
        s.packets_sent,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight
    );
    assert!(s.conservation_ok);
    assert!(s.buffer_accounting_ok);
    r
}

fn column<'a>(r: &'a Results, table: &str, name: &str) -> &'a Column {
    let t = r.tables.iter().find(|t| t.name == table).expect("table");
    &t.columns.iter().find(|c| c.0 == name).expect("column").1
}

const MIXED: &str = r#"
[simulation]
duration = "3ms"
seed = 4
[topology]
kind = "fat_tree"
k = 4
[network]
buffer = "60KB"
ecn_threshold = "20pkt"
[transport]
protocol = "dctcp"
[[workloads]]
kind = "poisson"
load = 0.7
cdf = "websearch"
stop = "2ms"
[[workloads]]
kind = "incast"
receiver = "h0"
size = "100KB"
[[workloads]]
kind = "on_off"
src = "h5"
dst = "h9"
rate = "3Gbps"
on = "100us"
off = "100us"
"#;

#[test]
fn packets_are_conserved_under_loss() {
    let r = run(MIXED);
    let s = &r.summary;
    assert!(
        s.packets_dropped > 0,
        "the scenario should overflow some buffer"
    );
    assert_eq!(
        s.packets_sent,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight
    );
    assert!(s.conservation_ok);
}

#[test]
fn same_seed_same_results() {
    let a = run(MIXED);
    let b = run(MIXED);
    assert_eq!(a.tables, b.tables);
    assert_eq!(a.summary.events, b.summary.events);
    let c = run(&MIXED.replace("seed = 4", "seed = 5"));
    assert_ne!(column(&a, "flows", "dst"), column(&c, "flows", "dst"));
}

#[test]
fn cbr_below_capacity_is_delivered_exactly() {
    let r = run(r#"
[simulation]
duration = "10ms"
[topology]
kind = "star"
hosts = 2
[[workloads]]
kind = "cbr"
src = "h0"
dst = "h1"
rate = "3Gbps"
packet_size = "1000B"
"#);
    // 3 Gb/s for 10 ms = 3.75 MB; packets leave every 2.667 us from t = 0 and the
    // last ones are still on the wire when the run ends
    let Column::U64(delivered) = column(&r, "flows", "bytes_delivered") else {
        panic!()
    };
    let sent = 3_750_000u64;
    assert!(
        delivered[0] <= sent && delivered[0] >= sent - 3 * 1000,
        "{}",
        delivered[0]
    );
    assert_eq!(r.summary.packets_dropped, 0);
}

fn opt_f64<'a>(r: &'a Results, table: &str, name: &str) -> &'a [Option<f64>] {
    match column(r, table, name) {
        Column::OptF64(v) => v,
        other => panic!("{name}: {other:?}"),
    }
}

/// A lone flow within its initial window completes in exactly its ideal time, on
/// a path whose slowest hop is in the middle (a 1 Gb/s bottleneck between 10 Gb/s
/// hops, different delays, clocks exact, no transmit wait): slowdown 1. A flow that
/// must grow its window takes longer (slow start), and flows that share the
/// bottleneck longer still.
#[test]
fn a_lone_flow_within_its_window_has_slowdown_one() {
    let text = |flows: &str| {
        format!(
            r#"
[simulation]
duration = "20ms"
[topology]
kind = "dumbbell"
hosts_per_side = 2
link_rate = "10Gbps"
bottleneck_rate = "1Gbps"
link_delay = "3us"
bottleneck_delay = "7us"
[network]
clock_ppm = 0
tx_jitter = "0us"
[transport]
init_cwnd = 10
{flows}
"#
        )
    };
    let one =
        "[[workloads]]\nkind = \"fixed\"\nsrc = \"left0\"\ndst = \"right0\"\nsize = \"10000B\"\n";
    let r = run(&text(one));
    let s = opt_f64(&r, "flows", "slowdown")[0].unwrap();
    let ideal = opt_f64(&r, "flows", "ideal_fct_s")[0].unwrap();
    // 10 000 B in 7 segments: 10 280 wire bytes at 1 Gb/s plus one 1500-B packet at
    // 10 Gb/s before and one 1280-B packet after; 3 + 7 + 3 us each way; ACKs of 64 B
    let expect = 10_280.0 * 8.0 / 1e9
        + 1500.0 * 8.0 / 1e10
        + 1280.0 * 8.0 / 1e10
        + 26e-6
        + 64.0 * 8.0 * (2.0 / 1e10 + 1.0 / 1e9);
    assert!((ideal - expect).abs() < 1e-12, "{ideal} vs {expect}");
    assert!((s - 1.0).abs() < 1e-6, "slowdown {s}");
    // a 1 MB flow is never window-bound at 1 Gb/s (the initial window exceeds the
    // bandwidth-delay product): still exactly ideal; two such flows share it
    let big = one.replace("10000B", "1MB");
    let s = opt_f64(&run(&text(&big)), "flows", "slowdown")[0].unwrap();
    assert!((s - 1.0).abs() < 1e-6, "slowdown {s}");
    let two = big.clone() + &big.replace("left0", "left1").replace("right0", "right1");
    let r = run(&text(&two));
    let both = opt_f64(&r, "flows", "slowdown");
    assert!(both.iter().all(|x| x.unwrap() > 1.4), "{both:?}");
    // at 10 Gb/s over 600 us the window must grow: slow start costs round trips
    let fast = text(&big)
        .replace("\"1Gbps\"", "\"10Gbps\"")
        .replace("\"7us\"", "\"100us\"");
    let s = opt_f64(&run(&fast), "flows", "slowdown")[0].unwrap();
    assert!(s > 1.3, "slow start: {s}");
}
