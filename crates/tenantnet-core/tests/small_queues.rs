//! TCP small queues (`transport.limit_output_bytes`): a sender stops while more
//! than the limit of its data is in its host, so its host holds at most the limit
//! plus one packet, and it still fills its link.

use std::path::Path;

use tenantnet_core::scenario::{load, Format, LoadOptions};
use tenantnet_core::sim::results::Column;
use tenantnet_core::sim::Sim;

fn sim(text: &str) -> Sim {
    let opts = LoadOptions::default();
    load(text, "tsq.toml", Path::new("."), Format::Toml, &opts).expect("valid scenario")
}

/// Two hosts on one switch, all links 10 Gb/s: the sender's NIC is the bottleneck,
/// so without a limit its window piles up in the NIC's queue until it overflows.
fn lone_flow(limit: &str) -> String {
    format!(
        r#"
[simulation]
duration = "20ms"
[topology]
kind = "star"
hosts = 2
link_delay = "2us"
[network]
buffer = "300KB"
[transport]
mss = "1460B"
{limit}
[[workloads]]
kind = "fixed"
src = "h0"
dst = "h1"
size = "100MB"
"#
    )
}

/// (largest bytes the first host's NIC held, packets dropped, its flow's goodput in
/// bit/s over the run).
fn nic_and_goodput(text: &str) -> (u64, u64, f64) {
    let mut s = sim(text);
    s.run();
    let nic = s.fabric.net.hosts[0].nic;
    let held = s.fabric.net.ports[nic.idx()].core.max_bytes;
    let r = s.results();
    let Column::U64(delivered) = &r
        .tables
        .iter()
        .find(|t| t.name == "flows")
        .unwrap()
        .columns
        .iter()
        .find(|c| c.0 == "bytes_delivered")
        .unwrap()
        .1
    else {
        panic!("bytes_delivered")
    };
    assert!(r.summary.conservation_ok && r.summary.buffer_accounting_ok);
    (
        held,
        r.summary.packets_dropped,
        delivered[0] as f64 * 8.0 / 0.020,
    )
}

#[test]
fn the_limit_bounds_the_nic_queue_and_the_link_stays_full() {
    let (free_held, free_drops, free_rate) = nic_and_goodput(&lone_flow(""));
    let limit = 8 * 1500;
    let text = lone_flow(&format!("limit_output_bytes = \"{limit}B\""));
    let (held, drops, rate) = nic_and_goodput(&text);
    // without the limit the window fills the 300 KB NIC buffer and overflows it
    assert!(free_held > 200_000, "{free_held}");
    assert!(free_drops > 0);
    // with it, the NIC never holds more than the limit plus the packet sent at the
    // limit (Linux throttles only once the bytes exceed it), and nothing is lost
    assert!(held <= limit + 1500, "{held} > {limit} + 1500");
    assert!(held > limit, "{held}: the sender reaches its limit");
    assert_eq!(drops, 0);
    // and the link stays busy: the payload share of 10 Gb/s less slow start
    let line = 10e9 * 1460.0 / 1500.0;
    assert!(rate > 0.97 * line, "{rate} vs {line}");
    assert!(rate >= 0.99 * free_rate, "{rate} vs {free_rate}");
}

#[test]
fn a_limit_below_a_packet_lets_one_packet_through_at_a_time() {
    // the socket is throttled only while its bytes exceed the limit: with a
    // 100-byte limit one packet at a time is in the host, and because the NIC
    // reports it sent as its last bit leaves, the next starts at once (with no
    // transmit wait: the `linux` profile's would put up to 1 us between them)
    let text = lone_flow("limit_output_bytes = \"100B\"").replace(
        "buffer = \"300KB\"",
        "buffer = \"300KB\"\ntx_jitter = \"0us\"",
    );
    let (held, drops, rate) = nic_and_goodput(&text);
    assert_eq!(held, 1500);
    assert_eq!(drops, 0);
    assert!(rate > 0.97 * 10e9 * 1460.0 / 1500.0, "{rate}");
}

#[test]
fn the_limit_is_refused_in_packets_or_at_zero() {
    for bad in ["\"10pkt\"", "\"0B\""] {
        let text = lone_flow(&format!("limit_output_bytes = {bad}"));
        let opts = LoadOptions::default();
        let e = load(&text, "tsq.toml", Path::new("."), Format::Toml, &opts)
            .err()
            .expect("refused");
        let msg = e.to_string();
        assert!(msg.contains("limit_output_bytes"), "{msg}");
    }
}
