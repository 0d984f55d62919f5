"""One simulation on several threads: under `simulation.ties = "partitioned"` the
network is cut into partitions, one per thread, and every output is the same bytes
for any number of threads; what cannot be cut runs on one thread with a note."""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any

import pytest

import tenantnet
from helpers import check_conservation, cli
from tenantnet.jobs.pool import machine_cores, plan_note, pool_map, share
from tenantnet.sim.results import OPTIONAL_TABLES
from test_digests import digest, table_csv


def every_table(r: tenantnet.Results) -> str:
    """The digest of the reference outputs, then of every other table the run has
    (queries, the controllers' and the CPU model's)."""
    h = hashlib.sha256(digest(r).encode())
    for name in ("queries", *OPTIONAL_TABLES):
        t = getattr(r, name)
        h.update(name.encode() + (b"-" if t is None else table_csv(t)))
    return h.hexdigest()[:16]


def partitioned(d: dict[str, Any]) -> dict[str, Any]:
    d.setdefault("simulation", {})["ties"] = "partitioned"
    return d


def ran(d: dict[str, Any], threads: int | None) -> tuple[str, tenantnet.Simulation]:
    """The run's digest (every table and the summary but its wall time) on `threads`."""
    sim = tenantnet.Scenario.from_dict(d, "<test>").simulation()
    sim.set_threads(threads, exact=True)
    tenantnet.sim.api.advance(sim, None, chunks=7)
    r = sim.results()
    check_conservation(r)
    return every_table(r), sim


def permutation(k: int, duration: str) -> dict[str, Any]:
    d = tenantnet.Scenario.builtin("permutation").data()
    d["topology"]["k"] = k
    d["simulation"]["duration"] = duration
    d["output"] = {"throughput": ["flow", "link", "tenant", "tenant_link"],
                   "sample_interval": "500us", "queues": True}
    return partitioned(d)


def fct(flows: int) -> dict[str, Any]:
    d = tenantnet.Scenario.builtin("fct-websearch-144").data()
    d["workloads"][0]["flows"] = flows
    d["simulation"]["duration"] = "20ms"
    d["output"] = {"throughput": ["flow", "queue"], "sample_interval": "200us"}
    return partitioned(d)


def same_on_any_threads(d: dict[str, Any], parts: int) -> tenantnet.Simulation:
    one, seq = ran(d, 1)
    assert seq.threads == 1 and seq.threads_note is None
    for n in (2, 4):
        got, sim = ran(d, n)
        assert sim.threads == min(n, parts), sim.threads_note
        assert got == one, f"{n} threads: outputs differ from one thread's"
    return seq


def test_the_permutation_is_the_same_on_1_2_and_4_threads() -> None:
    # a fat-tree k = 4: four pods, flows between them, every scope sampled
    same_on_any_threads(permutation(4, "3ms"), parts=4)


def test_the_fct_benchmark_is_the_same_on_1_2_and_4_threads() -> None:
    # leaf-spine, SP/DWRR with BarberQ's evictions, PIAS, flows that start and
    # complete throughout, and a run that stops when the last is done
    sim = same_on_any_threads(fct(300), parts=12)
    s = sim.results().summary
    assert s["flows_completed"] == s["flows_finite"] == 300


def test_a_run_that_stops_when_done_stops_on_the_grid_of_link_delays() -> None:
    """Under partitioned ties the run goes on from the last completion to the next
    multiple of the smallest link delay (1 us here): the instant every partition
    sees at a window's end."""
    _, sim = ran(fct(50), 2)
    r = sim.results()
    last = float(r.flows["end_s"].max())
    assert r.summary["simulated_s"] > last
    assert r.summary["simulated_s"] - last <= 1e-6 + 1e-12
    assert math.isclose(r.summary["simulated_s"] * 1e6, round(r.summary["simulated_s"] * 1e6),
                        abs_tol=1e-6)


def test_stepping_a_parallel_run_does_not_change_it() -> None:
    d = permutation(4, "2ms")
    whole, _ = ran(d, 2)
    sim = tenantnet.Scenario.from_dict(d, "<test>").simulation().set_threads(2, exact=True)
    for t in (0.0003, 0.0003, 0.00071, 0.0015):
        sim.run_until(t)
        assert sim.now_s == pytest.approx(t)
        assert sim.counters()["delivered"] > 0
    sim.run()
    assert every_table(sim.results()) == whole


def test_qshare_fig3c_is_the_same_on_1_2_and_4_threads() -> None:
    """QShare's controller wakes between windows on the whole run's view and its
    bindings reach every partition; the flows use TCP small queues across cut NIC
    links (a packet's ghost stays at its sender until it has left the NIC)."""
    from tenantnet.reproduce import qshare_packet as qp
    d = partitioned(qp.fig3c_scenario(duration_s=0.3, bc_s=(0.1, 0.2), interval_s=0.05))
    d["transport"] = {"profile": "linux"}
    sim = same_on_any_threads(d, parts=6)
    r = sim.results()
    q = r.qshare_queues
    assert q is not None and set(q[q["time_s"] > 0]["tenants"]) == {"A", "B C"}, q
    b = r.throughput[(r.throughput["scope"] == "tenant") & (r.throughput["time_s"] > 0.15)
                     & (r.throughput["time_s"] <= 0.2)]
    assert b.groupby("tenant")["gbps"].mean().min() > 0.1, "all three tenants send"


@pytest.mark.parametrize("scheme", ["trinity-paper", "a-es", "static", "none"])
def test_trinity_fig6_is_the_same_on_1_2_and_4_threads(scheme: str) -> None:
    """Trinity's Fig. 6 set-up (and its baselines): each host's vswitch, shapers,
    ticks and feedback packets run in the host's partition; a guarantee changed
    mid-run reaches the VM's host policy; `vm_rates` rows come back in the
    sequential run's order."""
    from tenantnet.reproduce.trinity import fig6_scenario
    d = partitioned(fig6_scenario(scheme, 300, 300, duration_s=0.06))
    d["tenants"][0]["vms"][0]["changes"] = [{"at": "25ms", "guarantee": "600Mbps"}]
    sim = same_on_any_threads(d, parts=4)
    r = sim.results()
    assert r.vms.set_index("vm")["guarantee_gbps"]["A1"] == pytest.approx(0.6)
    if scheme in ("trinity-paper", "a-es"):
        a1 = r.vm_rates[r.vm_rates["vm"] == "A1"]
        assert len(a1) >= 5 and list(a1["guarantee_gbps"])[-1] == pytest.approx(0.6)
        assert r.summary["vswitch"]["control_packets"] > 0
    if scheme != "none":
        assert r.summary["vswitch"]["packets_shaped"] > 0


@pytest.mark.parametrize("fanout", [None, 4])
def test_request_response_queries_are_the_same_on_1_2_and_4_threads(fanout: int | None) -> None:
    """Trinity's memcached set-up (Fig. 9): each gate counts deliveries and starts
    flows at one host, so in one partition; queries open (every 2 ms) and closed
    (the next when the last completes), with and without fan-out; every flow
    sampled, in the sequential run's start order."""
    from tenantnet.reproduce.trinity_memcached import fig9_scenario
    for interval in (2.0, None):
        d = fig9_scenario("trinity-paper", queries=10, interval_ms=interval)
        if fanout:
            d["workloads"][0]["fanout"] = fanout
        d["output"].update(throughput=["tenant", "flow"], sample_interval="1ms")
        sim = same_on_any_threads(partitioned(d), parts=4)
        q = sim.results().queries
        assert len(q) == 80 and q["qct_s"].notna().all()


def test_the_vswitch_cpu_model_is_the_same_on_1_2_and_4_threads() -> None:
    """C2QoS's PMD cores, C2TB manager and NIC monitor run per host in its
    partition: two hosts, each with VMs sending to the other, C2TB and HBS, the
    receive path through the cores and the NIC handler on; `vm_cpu`, `pmd` and
    `nic_monitor` come back in the sequential run's order."""
    from tenantnet.reproduce.c2qos import bench_scenario
    d = bench_scenario(True, vms=8, duration_s=0.03)
    for i, (vm, w) in enumerate(zip(d["tenants"][0]["vms"], d["workloads"], strict=True)):
        vm["host"], w["dst"] = ("s", "r") if i % 2 == 0 else ("r", "s")
    d["vswitch"]["cpu"].update({"rx_path": "pmd", "nic_handler": {"monitor": "2ms"}})
    sim = same_on_any_threads(partitioned(d), parts=2)
    r = sim.results()
    assert r.pmd is not None and r.nic_monitor is not None and r.vm_cpu is not None
    assert set(r.pmd["host"]) == set(r.nic_monitor["host"]) == {"s", "r"}
    assert r.summary["cpu"]["cycle_conservation_ok"] and r.summary["cpu"]["packets_rx"] > 0
    assert r.summary["cpu"]["c2tb_throttled"] > 0


def test_scheduled_ties_run_on_one_thread_and_say_how_to_cut() -> None:
    d = permutation(4, "1ms")
    d["simulation"]["ties"] = "scheduled"
    _, sim = ran(d, 2)
    assert sim.threads == 1
    assert 'simulation.ties = "partitioned"' in (sim.threads_note or "")


def test_left_to_choose_a_small_run_keeps_one_thread() -> None:
    """The default: a dumbbell's windows hold a handful of events, too few for a
    second thread to gain; the note gives the estimate."""
    d = partitioned(tenantnet.Scenario.builtin("permutation").data())
    d["topology"] = {"kind": "dumbbell", "hosts_per_side": 2, "link_rate": "1Gbps",
                     "link_delay": "10us"}
    d["simulation"]["duration"] = "2ms"
    _, sim = ran(d, None)
    assert sim.threads == 1
    assert "events per window" in (sim.threads_note or "")


def test_threads_are_checked() -> None:
    sim = tenantnet.Scenario.builtin("permutation").simulation()
    for bad in (0, -1, 5000, 1.5, True):
        with pytest.raises(ValueError, match="threads"):
            sim.set_threads(bad)  # type: ignore[arg-type]
    sim.run_until(1e-6)
    with pytest.raises(ValueError, match="started"):
        sim.set_threads(2)


def test_run_takes_threads_and_notes_why_not(tmp_path: Any) -> None:
    sc = tmp_path / "perm.json"
    sc.write_text(json.dumps(permutation(4, "1ms")))
    out = cli("run", str(sc), "--threads", "2", "-o", str(tmp_path / "a"), "-q")
    assert out.returncode == 0, out.stderr
    # no note, unless the machine's other work (the suite's other tests) kept its
    # cores busy when the run started
    assert "note" not in out.stderr or "the machine's other work" in out.stderr, out.stderr
    out = cli("run", str(sc), "--threads", "2", "--ties", "scheduled", "-o",
              str(tmp_path / "b"), "-q")
    assert out.returncode == 0 and "runs on one thread" in out.stderr, out.stderr
    bad = cli("run", str(sc), "--threads", "0", "-o", str(tmp_path / "c"))
    assert bad.returncode == 2 and "--threads" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "c").exists()


def test_bench_reports_the_speedup_and_the_efficiency() -> None:
    out = cli("bench", "permutation", "--k", "4", "--threads", "2")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert [x["threads"] for x in lines[:2]] == [1, 2]
    assert lines[0]["events"] == lines[1]["events"]
    last = lines[-1]
    # the figures only (the machine may be busy: timing is a benchmark's job)
    assert last["speedup"] == pytest.approx(last["median_wall_s_1"] / last["median_wall_s_2"],
                                            rel=0.02, abs=0.002)
    assert last["efficiency"] == pytest.approx(last["speedup"] / 2, abs=0.002)


def test_queue_weights_set_mid_run_reach_every_partition() -> None:
    d = permutation(4, "2ms")
    d["network"].update(queues=2, scheduler="wfq")
    d["workloads"][0]["dscp"] = [0, 1]
    d["network"]["dscp_map"] = "identity"

    def stepped(threads: int) -> str:
        sim = tenantnet.Scenario.from_dict(d, "<test>").simulation()
        sim.set_threads(threads, exact=True)
        sim.run_until(0.0005)
        node, peer = sim.flow_paths[0][2].split("->")
        sim.set_queue_weights(node, [1, 7], peer=peer)
        sim.run()
        return digest(sim.results())

    one = stepped(1)
    assert stepped(2) == one
    untouched, _ = ran(d, 1)
    assert untouched != one


@pytest.mark.parametrize("example,profile", [
    ("star-udp", None),             # every host's NIC link is cut; UDP sources
    ("jellyfish-poisson", None),    # a random graph, cut by its pieces
    ("dynamic-threshold", None),    # shared buffer pools with dynamic thresholds
    ("leafspine-ns3", "linux"),     # SACK, RACK-TLP, delayed ACKs across the cut
])
def test_examples_are_the_same_on_1_2_and_4_threads(example: str, profile: str | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path
    if profile:
        monkeypatch.setenv("TENANTNET_TRANSPORT_PROFILE", profile)
    path = Path(__file__).resolve().parents[1] / "examples" / f"{example}.toml"
    d = partitioned(tenantnet.Scenario.from_file(path).data())
    d["simulation"]["duration"] = "5ms"
    one, _ = ran(d, 1)
    for n in (2, 4):
        got, sim = ran(d, n)
        assert sim.threads > 1, sim.threads_note
        assert got == one, f"{example}, {n} threads: outputs differ"


def test_tenantnet_threads_sets_the_default_and_pool_workers_share_the_cores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    d = permutation(4, "1ms")
    monkeypatch.setenv("TENANTNET_THREADS", "1")
    _, sim = ran(d, None)
    assert sim.threads == 1
    sim = tenantnet.Scenario.from_dict(d).simulation()
    sim.run()
    assert sim.threads == 1
    monkeypatch.setenv("TENANTNET_THREADS", "two")
    with pytest.raises(tenantnet.ScenarioError, match="TENANTNET_THREADS = 'two'"):
        tenantnet.Scenario.from_dict(d).simulation()
    monkeypatch.delenv("TENANTNET_THREADS")
    # each job of the pool is told its share of the cores, and no number of threads
    cores = machine_cores()
    env = ("TENANTNET_CORES",), ("TENANTNET_THREADS",)
    assert pool_map(os.getenv, env, 2, lambda *_: "", ["a", "b"]) \
        == [str(share(cores, 0, 2, 2)), None]
    # alone on two workers, one job may take every core
    assert pool_map(os.getenv, env[:1], 2, lambda *_: "", ["a"]) == [str(cores)]


def test_a_job_takes_what_the_jobs_beside_it_leave_of_the_cores() -> None:
    # 16 cores, 3 jobs on 3 workers: 5 each, and the last takes the core left over
    assert [share(16, 0, 3, 3), share(16, 5, 2, 2), share(16, 10, 1, 1)] == [5, 5, 6]
    # more jobs than workers: one core each, to the last
    assert [share(2, 0, 2, 21), share(2, 1, 1, 20), share(2, 1, 1, 1)] == [1, 1, 1]
    # fewer workers than cores (--jobs 2 on 16): the rest split between them
    assert share(16, 0, 2, 40) == 8
    assert "2 at a time on 2 cores: one thread each" in plan_note(21, 2, 2)
    assert "up to 8 threads each" in plan_note(2, 2, 16)


def test_a_run_chosen_for_takes_no_more_than_its_share_of_the_cores() -> None:
    d = permutation(6, "1ms")  # large enough for the rule to give it every core
    sim = tenantnet.Scenario.from_dict(d).simulation().set_threads(None, cores=1)
    sim.run()
    assert sim.threads == 1
    assert "its share of the machine's" in (sim.threads_note or ""), sim.threads_note
    with pytest.raises(ValueError, match="cores = 0: expected a whole number"):
        tenantnet.Scenario.from_dict(d).simulation().set_threads(None, cores=0)


def test_a_run_whose_copies_would_pass_the_memory_budget_runs_on_one_thread() -> None:
    """Each partition holds a copy of the run's state: 4 threads need 5 copies."""
    d = permutation(4, "1ms")
    fp = tenantnet.Scenario.from_dict(d).simulation().footprint
    fixed = sum(p.bytes for p in fp if p.kind == "fixed")
    tight = int(max(fp.bytes, fixed * 4.5))  # the sequential run fits, 5 copies do not
    sim = tenantnet.Scenario.from_dict(d).simulation(memory_budget=tight).set_threads(4, exact=True)
    sim.run()
    assert sim.threads == 1
    assert "memory budget" in (sim.threads_note or "")
    sim = tenantnet.Scenario.from_dict(d).simulation(memory_budget=int(fixed * 6 + fp.bytes))
    assert sim.set_threads(4, exact=True).run().threads == 4
