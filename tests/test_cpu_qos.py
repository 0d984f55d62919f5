"""Issue 15, second increment: OVS's ingress policing, HBS, the deployment
coefficients, per-workload classification and the ping-pong probe (C2QoS §II-B,
§III-C, §IV-B; spec c2qos.md §2, §4, §5.6). Expected values are the model's own
arithmetic: c(s, single) = 400 + 480/1436 (s - 64) + 175 + 120 cycles at R = 1."""

from __future__ import annotations

from typing import Any

import pytest

import tenantnet
from builders.cpu import HZ, cycles, per_second, run, scenario
from helpers import simulate
from tenantnet.reproduce.c2qos_fig7 import max_i
from tenantnet.reproduce.c2qos_fig13 import RUNS, fig13_scenario, run_fig13


def test_policing_passes_the_rate_and_policed_packets_cost_their_copy() -> None:
    # spec §5.6 test 3: UDP at 3 Gb/s of 1024 B into a 1 Gb/s byte policer with
    # a 100 KB bucket: the VM forwards 1 Gb/s plus the burst; each policed packet
    # cost its ingress copy only (c_in = 400 + 0.3343 * 960 cycles)
    vms = [{"name": "vm0", "host": "left0", "guarantee": "1Gbps"}]
    d = scenario(["3Gbps"], ["1024B"], vms=vms, duration="100ms",
                 cpu={"limiter": "policing", "policer": {"burst": "100KB"}})
    r = run(d)
    v = r.vm_cpu[r.vm_cpu["vm"] == "vm0"]
    passed, policed = int(v["packets"].sum()), int(v["policed"].sum())
    assert passed * 1024 == pytest.approx(1e9 * 0.1 / 8 + 100e3, abs=2 * 1024)
    offered = 3e9 * 0.1 / 8 / 1024
    assert passed + policed == pytest.approx(offered, abs=2)
    assert r.summary["cpu"]["packets_policed"] == policed
    c_in = 400 + 480 / 1436 * (1024 - 64)
    # whole cycles per packet
    assert int(v["cycles"].sum()) == passed * round(cycles(1024)) + policed * round(c_in)
    # in packets per second: 1 Gb/s over the 1024-byte preference = 122 kpps
    d["vswitch"]["cpu"] = {"limiter": "policing", "preference": {"packet_size": "1024B"},
                           "policer": {"unit": "packets", "burst": "102400B"}}
    d["workloads"][0]["packet_size"] = "64B"
    v = run(d).vm_cpu
    pps = int(v[v["vm"] == "vm0"]["packets"].sum()) / 0.1
    assert pps == pytest.approx(1e9 / (8 * 1024) + 100 / 0.1, rel=0.01)


def test_policing_drops_reach_tcp_as_loss() -> None:
    vms = [{"name": "vm0", "host": "left0", "guarantee": "2Gbps"}]
    d = scenario([], ["x"], vms=vms, tcp=True, duration="200ms",
                 cpu={"limiter": "policing", "policer": {"burst": "1MB"}})
    r = run(d)
    assert r.summary["cpu"]["packets_policed"] > 0
    assert int(r.flows["retransmits"].sum()) > 0
    # goodput stays at or under the policed rate (plus the 1 MB burst)
    assert float(r.flows["bytes_delivered"].sum()) * 8 <= 2e9 * 0.2 + 8e6 + 12000


def test_hbs_serves_the_higher_class_first_and_strict_c2tb_still_caps_it() -> None:
    # two backlogged VMs, classes 1 and 2, C_alloc 0.5 G each under strict C2TB:
    # class 1 is served while it has tokens and gets exactly its C_alloc; class 2
    # gets the same, its MIN, because it is served whenever class 1 waits (§IV-B-3:
    # C2TB rules out starvation)
    vms = [{"name": f"vm{i}", "host": "left0", "guarantee": "1Gbps", "cycles": "0.5GHz",
            "priority": p} for i, p in enumerate([2, 1])]
    d = scenario(["20Gbps"] * 2, ["1024B"] * 2, vms=vms, duration="200ms",
                 cpu={"limiter": "c2tb", "scheduler": "hbs", "c2tb": {"mode": "strict"}})
    got = per_second(run(d), "cycles", after=0.05)
    assert got["vm0"] == pytest.approx(0.5e9, rel=0.01)
    assert got["vm1"] == pytest.approx(0.5e9, rel=0.01)
    # without a limiter the higher class takes the whole core
    d["vswitch"]["cpu"] = {"scheduler": "hbs"}
    r = run(d)
    got = per_second(r, "cycles", after=0.05)
    assert got["vm1"] / HZ > 0.99 and got["vm0"] == 0.0
    mine = r.vm_cpu[r.vm_cpu["vm"] != "sink"]
    assert set(mine["class"].dropna().astype(int)) <= {1, 2}


def test_minmax_with_hbs_keeps_every_min_only_in_the_backlog_reading() -> None:
    """The paper's two mechanisms together, every VM backlogged, VM3 and VM4 in
    class 1. The default (backlog) reading drops a backlogged VM's overflow, so the
    class-1 VMs run dry at MAX_i and VM1, VM2 get theirs (0.3667 G). In the
    proportional reading VM1 and VM2, never served, overflow their buckets and Alg. 1
    hands the overflow by weight to all, so the class-1 VMs never run dry and take
    the whole core: there MIN-MAX protects MIN only if the scheduler serves every VM
    with tokens (issue 15's note)."""
    vms = [{"name": f"vm{i}", "host": "left0", "guarantee": "1Gbps", "weight": w,
            "cycles": c, "priority": p}
           for i, (w, c, p) in enumerate([(1, "0.2GHz", 2), (1, "0.2GHz", 2),
                                          (2, "0.4GHz", 1), (2, "0.4GHz", 1)])]
    got = {}
    for reading in ("backlog", "proportional"):
        d = scenario(["20Gbps"] * 4, ["1024B"] * 4, vms=vms, duration="300ms",
                     cpu={"limiter": "c2tb", "scheduler": "hbs",
                          "c2tb": {"redistribution": reading}})
        got[reading] = per_second(run(d), "cycles", after=0.1)
    for vm, want in zip(("vm0", "vm1", "vm2", "vm3"), max_i(), strict=True):
        assert got["backlog"][vm] == pytest.approx(want * 1e9, rel=0.01), got
    p = got["proportional"]
    assert p["vm0"] == p["vm1"] == 0.0
    assert p["vm2"] == pytest.approx(1.1e9, rel=0.01)
    assert p["vm3"] == pytest.approx(1.1e9, rel=0.01)


def test_the_nic_handler_polices_when_the_nic_is_the_bottleneck() -> None:
    """§VII (Fig. 13, 10x faster): VM1, priced at 128-byte packets, sends 1500 B
    from 0.6 s and takes the NIC from VM2; the monitor (every 0.1 s) sees the NIC at
    >= 95 % and switches ingress policing on at both guarantees, which gives VM2 its
    6 Gb/s back; without the handler the NIC stays full."""
    rates, nic = run_fig13(t0=0.6, duration=1.4, monitor=0.1)
    alone, handled = (rates[rates["run"] == r].set_index("time_s") for r in RUNS)
    after = slice(0.8 + 1e-9, 1.4)
    assert alone.loc[after, "VM1_gbps"].mean() > 2.5
    assert (alone.loc[after, "VM1_gbps"] + alone.loc[after, "VM2_gbps"]).mean() > 9.5
    on = nic[nic["policing"] == 1]["time_s"]
    assert on.min() == pytest.approx(0.7)
    assert (nic[nic["time_s"] < 0.65]["policing"] == 0).all()
    assert handled.loc[after, "VM2_gbps"].between(0.98 * 6, 1.02 * 6).all()
    assert handled.loc[after, "VM1_gbps"].mean() == pytest.approx(2.0, rel=0.06)
    # before the switch both hold their purchase, and the NIC is below 95 %
    for r in (alone, handled):
        assert r.loc[0.1:0.6, "VM2_gbps"].mean() == pytest.approx(6.0, rel=0.02)
        assert r.loc[0.1:0.6, "VM1_gbps"].mean() == pytest.approx(2.0, rel=0.02)
    assert nic[nic["time_s"] <= 0.6 + 1e-9]["nic_gbps"].max() < 9.5


def test_the_nic_handler_releases_after_quiet_intervals() -> None:
    """Once VM1 stops sending 1500 B (back to 128 B at 0.5 s), no policer drops and
    the NIC stays below 95 %: policing goes off after three quiet intervals."""
    d = fig13_scenario(True, t0=0.2, duration=1.2, monitor=0.1)
    d["workloads"][1]["stop"] = "500ms"
    d["workloads"].append({**d["workloads"][0], "start": "500ms"})
    del d["workloads"][-1]["stop"]
    r = run(d)
    states = r.nic_monitor.set_index("time_s")["policing"]
    assert states.loc[0.3] == 1
    off = states[(states.index > 0.5) & (states == 0)].index.min()
    assert 0.75 < off < 1.0, states.to_dict()
    assert (states.loc[off:] == 0).all()


def probe_scenario(cpu: dict[str, Any], bulk: int, duration: str = "60ms") -> dict[str, Any]:
    """A class-1 VM runs a ping-pong probe to host right1 (no VM, no PMD) while
    `bulk` class-8 VMs send backlogged 1024-byte TCP to the sink on the same core."""
    vms = [{"name": "probe", "host": "left0", "guarantee": "1Gbps", "priority": 1}]
    vms += [{"name": f"bulk{i}", "host": "left0", "guarantee": "1Gbps"} for i in range(bulk)]
    d = scenario([], ["x"] * bulk, vms=vms, tcp=True, duration=duration, cpu=cpu)
    for w in d["workloads"]:
        w["src"] = w["src"].replace("vm", "bulk")
        w["transport"] = {"mss": "984B"}
    d["topology"]["hosts_per_side"] = 2
    d["workloads"].append({"kind": "pingpong", "tenant": "T", "src": "probe", "dst": "right1",
                           "count": 20000})
    return d


def test_pingpong_reports_half_the_round_trip() -> None:
    # alone, the probe's RTT/2 is the path's one-way delay: 3 links of 1 us, the
    # packets' serialisation and the PMD's copy; the client's ACK of a response
    # and its next request share the core, so round trips differ by an ACK's cycles
    d = probe_scenario({}, 0, duration="10ms")
    d.setdefault("network", {})["tx_jitter"] = "0us"  # hosts send at once: the path's own time
    r, _ = simulate(d)
    p = r.pingpong()
    assert len(p) > 1000 and (p["latency_s"] > 3e-6).all()
    assert float(p["latency_s"].max() - p["latency_s"].min()) < cycles(64) / HZ
    assert r.summary["workloads"][-1]["kind"] == "pingpong"
    # the bad keys are named
    from tenantnet.errors import ScenarioError
    d["workloads"][-1]["count"] = 0
    with pytest.raises(ScenarioError, match=r"workloads\[0\]\.count"):
        tenantnet.Scenario.from_dict(d).simulation()


def test_hbs_keeps_a_class_1_probe_behind_at_most_one_batch() -> None:
    # spec §5.6 test 6: under round robin the probe waits for every other VM's
    # batch (up to 3 x 32 x c(1024) cycles = 44 us); under HBS for at most the one
    # batch in progress (14.8 us) beyond its own path
    alone = float(simulate(probe_scenario({}, 0, duration="10ms"))[0]
                  .pingpong()["latency_s"].median())
    batch = 32 * cycles(1024) / HZ
    rr = run(probe_scenario({}, 3)).pingpong()["latency_s"]
    hbs = run(probe_scenario({"scheduler": "hbs"}, 3)).pingpong()["latency_s"]
    # a round trip waits once, for its request (RTT/2 gets half of it)
    assert float(hbs.max()) <= alone + batch / 2 + 1e-7
    assert float(rr.max()) > alone + batch
    assert float(hbs.mean()) < float(rr.mean())


def test_deployment_factors_and_many_flows_cost_more() -> None:
    # R_NUMA 1.4 for a remote VM, R_#VMs 1.14 for 4 VMs on one node; a many-flow
    # workload pays classify_multiple (1.67 x 175) instead of 175
    vms = [{"name": f"vm{i}", "host": "left0", "guarantee": "1Gbps",
            "numa": "remote" if i == 0 else "local"} for i in range(4)]
    d = scenario(["0.5Gbps"] * 4, ["1024B"] * 4, vms=vms,
                 cpu={"vms_factor": "same_node"})
    d["workloads"][1]["classify"] = "multiple"
    got = per_second(run(d), "cycles")
    pps = 0.5e9 / 8 / 1024
    assert got["vm0"] == pytest.approx(pps * cycles(1024) * 1.4 * 1.14, rel=0.002)
    many = (cycles(1024) - 175 + 175 * 1.67) * 1.14
    assert got["vm1"] == pytest.approx(pps * many, rel=0.002)
    assert got["vm2"] == pytest.approx(pps * cycles(1024) * 1.14, rel=0.002)


def test_bad_qos_settings_are_named() -> None:
    from tenantnet.errors import ScenarioError
    cases = [
        ({"scheduler": "fifo"}, "vswitch.cpu.scheduler"),
        ({"policer": {"burst": "0B"}}, "vswitch.cpu.policer.burst"),
        ({"hbs": {"demote_after": 0}}, "vswitch.cpu.hbs.demote_after"),
        ({"numa_remote": -1}, "vswitch.cpu.numa_remote"),
        ({"vms_factor": "same"}, "vswitch.cpu.vms_factor"),
    ]
    for cpu, key in cases:
        with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
            tenantnet.Scenario.from_dict(scenario(["1Gbps"], ["64B"], cpu=cpu)).simulation()
    for vm, key in [({"priority": 9}, "priority"), ({"numa": "far"}, "numa"),
                    ({"preference": {"packet_size": "10B"}}, "preference.packet_size")]:
        vms = [{"name": "vm0", "host": "left0", "guarantee": "1Gbps", **vm}]
        with pytest.raises(ScenarioError, match=rf"tenants\[0\]\.vms\[0\]\.{key}"):
            tenantnet.Scenario.from_dict(scenario(["1Gbps"], ["64B"], vms=vms)).simulation()
