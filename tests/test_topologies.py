"""Topology shapes, names and capacities."""

from typing import Any

import pytest

import tenantnet
from helpers import simulate


def built(topology: dict[str, Any]) -> tenantnet.Results:
    d = {"simulation": {"duration": "1us"}, "topology": topology,
         "output": {"throughput": []}}
    return simulate(d)[0]


def test_dumbbell_and_star() -> None:
    r = built({"kind": "dumbbell", "hosts_per_side": 3, "bottleneck_rate": "40Gbps"})
    assert (r.summary["hosts"], r.summary["switches"], r.summary["links"]) == (6, 2, 7)
    nodes = set(r.links["node"])
    assert {"left0", "left2", "right0", "switch-left", "switch-right"} <= nodes
    bn = r.links[(r.links["node"] == "switch-left") & (r.links["peer"] == "switch-right")]
    assert bn["rate_gbps"].iloc[0] == 40
    r = built({"kind": "star", "hosts": 5})
    assert (r.summary["hosts"], r.summary["switches"], r.summary["links"]) == (5, 1, 5)


def test_leaf_spine_oversubscription() -> None:
    r = built({"kind": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 8,
               "link_rate": "10Gbps", "oversubscription": 4.0})
    up = r.links[r.links["node"].str.startswith("leaf") & r.links["peer"].str.startswith("spine")]
    assert len(up) == 8
    assert (up["rate_gbps"] == 10.0).all()  # 8 x 10 / (2 x 10) = 4:1
    assert "oversubscription 4.00:1" in r.summary["topology"]


@pytest.mark.parametrize("k,r,cores", [(4, 1, 4), (4, 2, 2), (4, 4, 1), (8, 4, 4), (8, 16, 1)])
def test_fat_tree_shape_and_core_oversubscription(k: int, r: int, cores: int) -> None:
    res = built({"kind": "fat_tree", "k": k, "oversubscription": r})
    half = k // 2
    assert res.summary["hosts"] == k ** 3 // 4
    assert res.summary["switches"] == 2 * k * half + cores
    core_links = res.links[res.links["node"].str.startswith("core")]
    assert len(core_links) == cores * k
    # core capacity is 1/r of the full fat-tree's
    full = half * half * k
    assert len(core_links) * r == full
    names = set(res.links["node"])
    expected = {"h0", f"h{k ** 3 // 4 - 1}", "pod0-edge0", f"pod{k - 1}-agg{half - 1}", "core0"}
    assert expected <= names


def test_ecmp_spreads_flows_over_all_core_paths() -> None:
    # 64 long-lived flows from pod 0 to pod 1 of a k=4 fat-tree: every core carries some
    d = {"simulation": {"duration": "2ms", "seed": 1},
         "topology": {"kind": "fat_tree", "k": 4},
         "workloads": [{"kind": "long_lived", "src": ["h0", "h1", "h2", "h3"],
                        "dst": ["h4", "h5", "h6", "h7"], "flows_per_pair": 4}],
         "output": {"throughput": []}}
    r, _ = simulate(d)
    into_core = r.links[r.links["peer"].str.startswith("core")]
    assert (into_core.groupby("peer")["tx_bytes"].sum() > 0).sum() == 4
