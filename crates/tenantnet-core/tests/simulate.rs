//! Whole simulations through the public API: conservation, determinism, exact rates.

use std::path::Path;

use tenantnet_core::scenario::{load, Format};
use tenantnet_core::sim::results::{Column, Results};

/// Runs a scenario to its end and checks packet conservation.
fn run(text: &str) -> Results {
    let mut sim = load(text, "test.toml", Path::new("."), Format::Toml).expect("valid scenario");
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
