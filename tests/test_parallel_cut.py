"""What a parallel run would face, profiled on the sequential run: the cut by pod, the
events of each partition, the synchronisation windows and the speedup's bound."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from helpers import cli
from tenantnet import Scenario


def permutation(k: int, duration: str = "20ms") -> Scenario:
    d = Scenario.builtin("permutation").data()
    d["topology"]["k"] = k
    d["simulation"]["duration"] = duration
    return Scenario.from_dict(d, f"<permutation k = {k}>")


def profiled(sc: Scenario, threads: int) -> tuple[dict[str, Any], dict[str, Any]]:
    sim = sc.simulation()
    profile = sim.run_profiling_cut(threads)
    return profile, sim.summary()[0]


def plain(sc: Scenario) -> dict[str, Any]:
    return sc.simulation().run().summary()[0]


def without_wall(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if "wall" not in k}


def test_profiling_changes_nothing_and_accounts_for_every_event() -> None:
    sc = permutation(4)
    p, summary = profiled(sc, 2)
    assert without_wall(summary) == without_wall(plain(sc))
    assert p["events"] == summary["events"] == sum(p["events_per_part"]) + p["global_events"]
    # k = 4: pods 0 and 2 against 1 and 3; each of the 4 cores keeps 2 of its 4 links
    assert (p["parts"], p["hosts"], p["cut_links"]) == (2, [8, 8], 8)
    delay = sc.data()["topology"]["link_delay"]
    assert p["lookahead_s"] == pytest.approx(float(delay.removesuffix("us")) * 1e-6)
    assert p["sequential_because"] is None
    # the busiest partition's events over the windows: at least half of all, at most all
    assert sum(p["events_per_part"]) / 2 <= p["critical_events"] - p["global_events"]
    assert p["critical_events"] <= p["events"]
    assert 1 <= p["balance_bound"] <= 2
    assert 0 < p["windows"] <= p["events"]
    assert p["cut_packets"] > 0


def test_a_permutation_is_balanced_and_runs_many_events_per_window() -> None:
    # every host sends to one other and receives from one: the two halves carry the
    # same load, so the bound is near 2; k = 8 holds 128 hosts, 8 pods
    p, _ = profiled(permutation(8), 2)
    assert p["hosts"] == [64, 64]
    assert abs(p["events_per_part"][0] / p["events_per_part"][1] - 1) < 0.05
    assert p["balance_bound"] > 1.8
    assert p["events_per_window"] > 20
    # windows by the cut ports' state are never shorter than a lookahead; here no
    # fewer: at every window's start some cut port is idle (measured at k = 8 and 16)
    assert p["port_state_windows"] == p["windows"]


def udp_across(*directions: tuple[str, str]) -> Scenario:
    """1 Gb/s CBR of 9000-byte packets over a dumbbell's core link, one flow each way
    named."""
    return Scenario.from_dict({
        "name": "udp-across", "simulation": {"duration": "5ms"},
        "topology": {"kind": "dumbbell", "hosts_per_side": 1, "link_rate": "1Gbps",
                     "link_delay": "1us"},
        "workloads": [{"kind": "cbr", "src": a, "dst": b, "rate": "1Gbps",
                       "packet_size": "9000B"} for a, b in directions]}, "<udp-across>")


def test_windows_by_the_cut_ports_state_span_the_packet_in_service() -> None:
    # both directions of the only cut link busy with 72 us packets: a window can run
    # until the packet in service on either has ended, plus the link's delay
    both, _ = profiled(udp_across(("left0", "right0"), ("right0", "left0")), 2)
    assert both["cut_links"] == 1
    assert both["port_state_windows"] * 3 < both["windows"]
    assert both["events_per_port_state_window"] > 3 * both["events_per_window"]
    # one way only: the idle port back holds every window to one lookahead
    one, _ = profiled(udp_across(("left0", "right0")), 2)
    assert one["port_state_windows"] == one["windows"]


def test_one_thread_is_one_window_of_every_event() -> None:
    p, summary = profiled(permutation(4, "5ms"), 1)
    assert (p["parts"], p["cut_links"], p["windows"]) == (1, 0, 1)
    assert p["critical_events"] == p["events"] == summary["events"]
    assert p["balance_bound"] == 1
    assert p["lookahead_s"] is None  # nothing is cut: no window ends


def test_only_a_simulation_that_has_not_started_is_profiled() -> None:
    sim = permutation(4, "5ms").simulation()
    sim.run_until(0.001)
    with pytest.raises(ValueError, match="the run has started"):
        sim.run_profiling_cut(2)
    with pytest.raises(ValueError, match="1 to 4096 threads"):
        permutation(4).simulation().run_profiling_cut(0)


def test_a_cut_link_without_delay_leaves_the_run_sequential() -> None:
    d = Scenario.builtin("demo").data()
    d["topology"] = {"kind": "star", "hosts": 4, "link_delay": "0us"}
    p, _ = profiled(Scenario.from_dict(d), 2)
    assert p["lookahead_s"] == 0
    assert "no delay" in p["sequential_because"] and "->" in p["sequential_because"]


def test_a_fabric_controller_s_wakes_are_counted() -> None:
    from tenantnet.reproduce.qshare_packet import fig7a_scenario
    sc = Scenario.from_dict(fig7a_scenario(interval_s=0.1, duration_s=0.3))
    p, _ = profiled(sc, 2)
    assert p["controller_wakes"] > 0
    assert p["global_events"] >= p["controller_wakes"]


def test_the_bench_command_prints_the_profile_and_refuses_what_it_cannot_cut() -> None:
    res = cli("bench", "permutation", "--k", "4", "--cut", "2")
    assert res.returncode == 0, res.stderr
    (line,) = res.stdout.splitlines()
    out = json.loads(line)
    assert (out["benchmark"], out["k"], out["threads"], out["parts"]) == (
        "permutation", 4, 2, 2)
    assert math.isfinite(out["balance_bound"])
    for args in (["permutation", "--cut", "0"], ["qshare-place", "--cut", "2"]):
        bad = cli("bench", *args)
        assert bad.returncode == 2 and "--cut" in bad.stderr and "Traceback" not in bad.stderr
