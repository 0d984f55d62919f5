"""Pipe-model guarantees (`[[tenants.pipes]]`) and static reservation per VM pair:
Trinity's testbed (a 1 Gb/s dumbbell) with its Fig. 6 traffic, A1 -> A2 over one TCP
connection against B1 -> B2 over ten."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from helpers import simulate

# Linux over 1 GbE with a 1500-byte MTU: 1448 bytes of payload in 1538 on the wire.
GOODPUT = 1448 / 1538


def fig6(policy: str, ga: str, gb: str, *, n: int = 10, duration: str = "1s",
         pipes: bool = True) -> dict[str, Any]:
    """Trinity Fig. 6's traffic on a 1 Gb/s dumbbell: tenant A, 1 connection from
    left0 to right0; tenant B, `n` connections from left1 to right1; pipes A1 -> A2 at
    `ga` and B1 -> B2 at `gb` (hose guarantees equal to the pipes)."""
    def tenant(name: str, g: str, side: int) -> dict[str, Any]:
        t: dict[str, Any] = {
            "name": name, "guarantee": g,
            "vms": [{"name": f"{name}1", "host": f"left{side}"},
                    {"name": f"{name}2", "host": f"right{side}"}],
        }
        if pipes:
            t["pipes"] = [{"src": f"{name}1", "dst": f"{name}2", "guarantee": g}]
        return t
    return {
        "simulation": {"duration": duration, "seed": 1},
        "topology": {"kind": "dumbbell", "hosts_per_side": 2, "link_rate": "1Gbps",
                     "link_delay": "25us"},
        "network": {"buffer": "200KB"},
        "transport": {"protocol": "newreno", "mss": "1448B", "header": "90B",
                      "init_cwnd": 3, "min_rto": "200ms"},
        "tenants": [tenant("A", ga, 0), tenant("B", gb, 1)],
        "vswitch": {"policy": policy, "interval": "10ms"},
        "workloads": [
            {"kind": "long_lived", "tenant": "A", "src": "A1", "dst": "A2"},
            {"kind": "long_lived", "tenant": "B", "src": "B1", "dst": "B2",
             "flows_per_pair": n},
        ],
        "output": {"sample_interval": "10ms", "throughput": ["tenant"]},
    }


def wire_mbps(r: Any, after_s: float = 0.2) -> pd.Series:
    """Each tenant's mean throughput after `after_s`, as wire Mb/s (goodput scaled
    by the framing)."""
    tp = r.throughput
    tp = tp[(tp["scope"] == "tenant") & (tp["time_s"] > after_s)]
    return tp.groupby("tenant")["gbps"].mean() * 1000 / GOODPUT


@pytest.mark.parametrize("g", [100, 300])
def test_static_per_pair_gives_each_pair_its_guarantee(g: int) -> None:
    r, _ = simulate(fig6("static", f"{g}Mbps", f"{g}Mbps"))
    got = wire_mbps(r)
    print(f"\nstatic, pipes {g}/{g} Mb/s: {got.round(1).to_dict()} (wire Mb/s)")
    for t in ("A", "B"):
        assert abs(got[t] / g - 1) < 0.02, (t, got[t])


def test_without_enforcement_connections_share_the_link() -> None:
    r, _ = simulate(fig6("none", "100Mbps", "100Mbps"))
    got = wire_mbps(r)
    print(f"\nno protection: {got.round(1).to_dict()} (wire Mb/s)")
    # one connection against ten: A gets about C / (N + 1), far below its pipe
    assert abs(got["A"] / (1000 / 11) - 1) < 0.2, got
    assert got["A"] + got["B"] > 950


def test_a_pipe_is_enforced_on_its_pair_only() -> None:
    """A pair without a pipe stays under its VM's own shaper: with pipes, A1's pair
    is capped at the pipe; without, at the VM's hose guarantee (here 3x the pipe)."""
    sc = fig6("static", "100Mbps", "100Mbps")
    sc["tenants"][0]["guarantee"] = "300Mbps"
    got = wire_mbps(simulate(sc)[0])
    assert abs(got["A"] / 100 - 1) < 0.02, got
    sc["tenants"][0]["pipes"] = []
    got = wire_mbps(simulate(sc)[0])
    assert abs(got["A"] / 300 - 1) < 0.02, got
