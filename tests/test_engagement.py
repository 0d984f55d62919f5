"""Whether each scheme's mechanism engaged (issue 37): the run's own counters
(``summary.vswitch``, ``summary.cpu.c2tb_throttled``, evictions, switch marks,
QShare's decisions) and the ``vm_data`` scope that measures what a guarantee
covers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import tenantnet
from builders.cpu import run, scenario
from tenantnet.measure import engagement
from tenantnet.sim import schemes

DEMO = tenantnet.Scenario.builtin("demo").data()


def short(policy: str, **more: Any) -> dict[str, Any]:
    d = copy.deepcopy(DEMO)
    d["simulation"]["duration"] = "400ms"
    for w in d["workloads"][2:]:
        w["start"], w["stop"] = "100ms", "300ms"
    d["vswitch"]["policy"] = policy
    d["output"]["throughput"] = ["vm", "vm_data", "link"]
    d.update(more)
    return d


def test_every_scheme_has_a_check() -> None:
    assert set(engagement.CHECKS) == set(schemes.SCHEMES)


def test_token_buckets_count_the_packets_they_held() -> None:
    none, static = (tenantnet.run(short(p)) for p in ("none", "static"))
    assert none.summary["vswitch"] == {"packets_shaped": 0, "control_packets": 0}
    assert static.summary["vswitch"]["packets_shaped"] > 1000
    assert engagement.engagement("none", none, {}).acted is None
    e = engagement.engagement("static", static, {})
    assert e.acted is True and "held" in e.evidence
    assert engagement.engagement("static", none, {}).acted is False
    # a scenario without VMs has no vswitch counters at all
    plain = tenantnet.run({"simulation": {"duration": "1ms"},
                           "topology": {"kind": "star", "hosts": 2},
                           "workloads": [{"kind": "long_lived", "src": "h0", "dst": "h1"}]})
    assert "vswitch" not in plain.summary


def test_the_vm_data_scope_counts_data_and_not_the_acks_a_vm_returns() -> None:
    d = short("static")
    d["tenants"] = [{**t, "hosts": ["h0", "h1", "h2", "h3"]} for t in d["tenants"]]
    r = tenantnet.run(d)
    tp = r.throughput
    vm = tp[tp["scope"] == "vm"].groupby("id")["gbps"].mean()
    data = tp[tp["scope"] == "vm_data"].groupby("id")["gbps"].mean()
    # receivers (h2, h3) send only ACKs: their wire rate is ACKs, their data rate 0
    assert vm["analytics/h2"] > 0.05 and data["analytics/h2"] == 0
    # senders send only data: both scopes agree, capped at the guarantee
    assert data["analytics/h0"] == pytest.approx(vm["analytics/h0"])
    late = tp[(tp["scope"] == "vm_data") & (tp["time_s"] > 0.05)]
    assert late[late["id"] == "analytics/h0"]["gbps"].max() == pytest.approx(3.0, rel=0.01)


def test_feedback_counts_for_trinity() -> None:
    d = short("trinity")
    d["tenants"] = [{**t, "hosts": ["h0", "h1", "h2", "h3"]} for t in d["tenants"]]
    d["vswitch"]["pair_guarantees"] = "hose"
    r = tenantnet.run(d)
    assert r.summary["vswitch"]["control_packets"] > 0
    e = engagement.engagement("trinity", r, d)
    assert e.acted is True and "feedback packets" in e.evidence


def test_c2tb_counts_the_times_it_throttled() -> None:
    vms = [{"name": f"vm{i}", "host": "left0", "guarantee": "1Gbps", "cycles": "0.5GHz"}
           for i in range(2)]
    d = scenario(["20Gbps"] * 2, ["1024B"] * 2, vms=vms, duration="50ms",
                 cpu={"limiter": "c2tb", "c2tb": {"mode": "strict"}})
    r = run(d)
    assert r.summary["cpu"]["c2tb_throttled"] > 0
    assert engagement.engagement("c2qos", r, d).acted is True
    d["vswitch"]["cpu"] = {}
    r = run(d)
    assert "c2tb_throttled" not in r.summary["cpu"]
    assert engagement.engagement("c2qos", r, d).acted is False


def test_a_combination_acted_when_each_of_its_schemes_did() -> None:
    r = tenantnet.run(short("static"))
    e = engagement.engagement("static+barberq", r, {})
    assert e.acted is False and e.evidence.startswith("BarberQ never evicted")
    assert engagement.engagement("none+static", r, {}).acted is True
