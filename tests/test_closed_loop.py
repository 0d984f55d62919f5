"""The closed_loop workload (QShare §7.1.2, §7.2): chains of flows, each starting
when the last was delivered, at once or after a dormant period U[0, dormancy]."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import tenantnet
from helpers import simulate
from tenantnet.errors import ScenarioError


def scenario(**loop: Any) -> dict[str, Any]:
    """Four hosts on a 1 Gb/s star, one tenant with a VM on each; its closed loops
    run until `stop` (default 2 s) in a 3 s run, under the `htsim` transport profile
    (an ACK a packet: a flow's last ACK is never held back by a delayed-ACK timer)."""
    w = {"kind": "closed_loop", "tenant": "T", "cdf": "enterprise", "stop": "2s", **loop}
    return {
        "simulation": {"duration": "3s", "seed": 7},
        "topology": {"kind": "star", "hosts": 4, "link_rate": "1Gbps", "link_delay": "10us"},
        "transport": {"protocol": "newreno", "init_cwnd": 10, "min_rto": "10ms",
                      "profile": "htsim"},
        "tenants": [{"name": "T", "guarantee": "100Mbps", "hosts": "all"}],
        "workloads": [w],
        "output": {"sample_interval": "100ms", "throughput": [], "queues": False},
    }


def loops(r: Any) -> dict[tuple[str, str], pd.DataFrame]:
    """Each (server, client) pair's started flows in start order."""
    f = r.flows[r.flows["start_s"].notna()]
    return {k: g.sort_values("start_s") for k, g in f.groupby(["src", "dst"], observed=True)}


def gaps(g: pd.DataFrame) -> np.ndarray:
    """Each flow's start after its predecessor's end, s. A flow ends when its sender
    has its last ACK, after the client has the last byte (when the next one may
    start), so an active loop's gaps are at most 0, by the ACK's delay."""
    return g["start_s"].to_numpy()[1:] - g["end_s"].to_numpy()[:-1]


def test_an_active_loop_asks_again_the_moment_a_flow_is_delivered() -> None:
    r, _ = simulate(scenario(dormant=0.0))
    by = loops(r)
    assert len(by) == 4 * 3  # a loop per (client, server on another host)
    for g in by.values():
        assert len(g) > 10
        assert gaps(g).max() <= 1e-9 and gaps(g).min() > -0.02
    f = r.flows
    assert f["start_s"].max() < 2.0  # nothing begins at or after stop
    assert f["start_s"].isna().any()  # the chains reach past stop: the rest never start


def test_dormant_periods_are_uniform_up_to_dormancy() -> None:
    r, _ = simulate(scenario(dormant=1.0, dormancy="200ms"))
    d = np.concatenate([gaps(g) for g in loops(r).values()])
    assert len(d) > 150
    assert d.min() > -0.02 and d.max() <= 0.2
    assert d.mean() == pytest.approx(0.1, rel=0.1)


def test_half_the_deliveries_are_followed_by_a_sleep() -> None:
    r, _ = simulate(scenario(dormancy="100ms"))
    d = np.concatenate([gaps(g) for g in loops(r).values()])
    asleep = (d > 1e-9).mean()
    assert asleep == pytest.approx(0.5, abs=0.05), asleep


def test_sizes_come_from_the_cdf() -> None:
    r, _ = simulate(scenario(dormant=0.0))
    s = r.flows["size_bytes"]
    assert s.min() >= 1500 and s.max() <= 3160500
    assert (s == 1500).mean() == pytest.approx(0.5, abs=0.05)  # the CDF's step at 1500 B


def test_a_random_loop_has_one_flow_in_flight_per_client() -> None:
    r, _ = simulate(scenario(servers="random", dormant=0.0))
    f = r.flows[r.flows["start_s"].notna()]
    for _, g in f.groupby("dst", observed=True):
        g = g.sort_values("start_s")
        assert g["src"].nunique() == 3  # servers drawn among the other hosts
        assert gaps(g).max() <= 1e-9 and gaps(g).min() > -0.02


def test_same_seed_same_flows() -> None:
    a = tenantnet.run(scenario())
    b = tenantnet.run(scenario())
    assert a.flows.equals(b.flows)


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"dormant": 1.5}, "dormant", "probability from 0 to 1"),
    ({"stop": "0s"}, "stop", "after start"),
    ({"cdf": None}, "cdf", "required key is missing"),
    ({"dst": "h0", "src": "h0"}, "dst", "no server on another host"),
    ({"dormant": 0.0, "stop": "100000s"}, "stop", "flows"),
])
def test_bad_loops_name_the_key(change: dict[str, Any], key: str, words: str) -> None:
    d = scenario(**{k: v for k, v in change.items() if v is not None})
    if change.get("cdf", "") is None:
        del d["workloads"][0]["cdf"]
    with pytest.raises(ScenarioError, match=rf"workloads\[0\]\.{key}.*{words}"):
        tenantnet.Scenario.from_dict(d).simulation()
