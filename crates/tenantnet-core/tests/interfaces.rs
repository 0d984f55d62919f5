//! The narrow interfaces through the public API: controller actions (validated,
//! then applied mid-run) and host-to-host control packets.

use std::path::Path;

use tenantnet_core::control::{Action, TagScope};
use tenantnet_core::net::{PortId, VmId};
use tenantnet_core::scenario::{load, Format, LoadOptions};
use tenantnet_core::sim::{RunView, Sim};
use tenantnet_core::switch::DscpMap;

const MS: f64 = 1e-3;

/// Two tenants' VMs on h0 and h1 send UDP to h2 (a VM of tenant a, a plain host
/// for b) through a two-queue DWRR switch.
const TWO_TENANTS: &str = r#"
[simulation]
duration = "30ms"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
[network]
buffer = "400KB"
queues = 2
scheduler = "dwrr"
weights = [1, 1]
[[tenants]]
name = "a"
guarantee = "2Gbps"
hosts = ["h0", "h2"]
[[tenants]]
name = "b"
guarantee = "2Gbps"
hosts = ["h1"]
[[workloads]]
kind = "cbr"
tenant = "a"
src = "h0"
dst = "h2"
rate = "4Gbps"
[[workloads]]
kind = "cbr"
tenant = "b"
src = "all"
dst = "h2"
rate = "4Gbps"
"#;

fn sim(text: &str) -> Sim {
    load(
        text,
        "t.toml",
        Path::new("."),
        Format::Toml,
        &LoadOptions::default(),
    )
    .expect("valid")
}

fn ps(secs: f64) -> u64 {
    (secs * 1e12).round() as u64
}

fn port(s: &Sim, name: &str) -> PortId {
    (0..s.fabric.net.ports.len() as u32)
        .map(PortId)
        .find(|&p| s.fabric.net.port_name(p) == name)
        .expect("port")
}

fn conserved(s: &Sim) {
    let (live, counted) = RunView::of(s).in_flight_check();
    assert_eq!(live, counted);
    let (c, _) = RunView::of(s).counters();
    assert_eq!(c.sent, c.delivered + c.dropped + live);
}

#[test]
fn invalid_actions_are_refused_with_the_reason() {
    let mut s = sim(TWO_TENANTS);
    let nic = s.fabric.net.hosts[0].nic;
    let down = port(&s, "switch->h2");
    let cases = [
        (
            Action::QueueWeights {
                port: nic,
                weights: vec![1, 1],
            },
            "host's NIC",
        ),
        (
            Action::QueueWeights {
                port: down,
                weights: vec![1, 0],
            },
            "each at least 1",
        ),
        (
            Action::DscpMap {
                port: down,
                map: DscpMap::from_pairs(&[(3, 5)]),
            },
            "queue from 0 to 1",
        ),
        (
            Action::TagDscp {
                scope: TagScope::Tenant(0),
                dscp: Some(64),
            },
            "0 to 63",
        ),
        (
            Action::TagDscp {
                scope: TagScope::Tenant(7),
                dscp: Some(1),
            },
            "tenant 7 has no VMs",
        ),
        (
            Action::TagDscp {
                scope: TagScope::Host(tenantnet_core::net::HostId(99)),
                dscp: None,
            },
            "no host 99",
        ),
        (
            Action::VmCap {
                vm: VmId(9),
                cap_bps: Some(1),
            },
            "no VM 9",
        ),
        (
            Action::VmGuarantee {
                vm: VmId(0),
                guarantee_bps: 0,
                weight: None,
            },
            "positive guarantee",
        ),
    ];
    for (a, why) in cases {
        let e = s.apply(a.clone()).expect_err("refused");
        assert!(e.contains(why), "{a:?}: {e}");
    }
}

#[test]
fn a_cap_limits_a_vm_and_lifting_it_restores_its_rate() {
    let mut s = sim(TWO_TENANTS);
    let rate = |s: &mut Sim, from: f64, to: f64| {
        s.run_until(ps(from));
        let b0 = s.hosts.vms[0].tx_bytes;
        s.run_until(ps(to));
        (s.hosts.vms[0].tx_bytes - b0) as f64 * 8.0 / (to - from) / 1e9
    };
    let free = rate(&mut s, 2.0 * MS, 8.0 * MS);
    assert!((free - 4.0).abs() < 0.1, "uncapped {free} Gb/s");
    s.apply(Action::VmCap {
        vm: VmId(0),
        cap_bps: Some(1_000_000_000),
    })
    .unwrap();
    let capped = rate(&mut s, 10.0 * MS, 18.0 * MS);
    assert!((capped - 1.0).abs() < 0.02, "capped {capped} Gb/s");
    s.apply(Action::VmCap {
        vm: VmId(0),
        cap_bps: None,
    })
    .unwrap();
    let again = rate(&mut s, 20.0 * MS, 28.0 * MS);
    assert!((again - 4.0).abs() < 0.1, "lifted {again} Gb/s");
    conserved(&s);
}

#[test]
fn tagging_and_a_per_port_dscp_map_move_one_tenant_to_another_queue() {
    let mut s = sim(TWO_TENANTS);
    let down = port(&s, "switch->h2");
    let up = port(&s, "switch->h0");
    s.apply(Action::TagDscp {
        scope: TagScope::Tenant(1),
        dscp: Some(5),
    })
    .unwrap();
    s.apply(Action::DscpMap {
        port: down,
        map: DscpMap::from_pairs(&[(5, 1)]),
    })
    .unwrap();
    s.run_until(ps(10.0 * MS));
    let q = |p: PortId, i: usize| s.fabric.net.ports[p.idx()].queue_tx_bytes(i);
    // tenant b's 4 Gb/s for 10 ms lands in queue 1 of the port toward h2 only
    let b = q(down, 1) as f64 * 8.0 / 10e-3 / 1e9;
    assert!((b - 4.0).abs() < 0.2, "queue 1 carried {b} Gb/s");
    assert!(q(down, 0) > 0);
    assert_eq!(
        s.fabric.net.dscp_map(up).queue(5),
        0,
        "other ports keep their map"
    );
    conserved(&s);
}

#[test]
fn control_packets_cross_the_fabric_and_count_in_conservation() {
    // Trinity's receiving host sends tenant a's sending VM its feedback as control
    // packets (a channel per VM pair with a guarantee: here the hose's share)
    let with = TWO_TENANTS
        .replacen(
            "[[tenants]]",
            "[vswitch]\npolicy = \"trinity\"\npair_guarantees = \"hose\"\n[[tenants]]",
            1,
        )
        .replacen(
            "kind = \"cbr\"\ntenant = \"a\"\nsrc = \"h0\"\ndst = \"h2\"\nrate = \"4Gbps\"",
            "kind = \"long_lived\"\ntenant = \"a\"\nsrc = \"h0\"\ndst = \"h2\"",
            1,
        );
    let mut s = sim(&with);
    for ms in 1..=30 {
        s.run_until(ps(ms as f64 * MS));
        conserved(&s);
    }
    let c = RunView::of(&s).counters().0;
    assert!(c.control_sent >= 5, "{} control packets", c.control_sent);
}
