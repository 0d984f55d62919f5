"""Issue 14's property: over random pipes and demands on Trinity's 1 Gb/s dumbbell,
every backlogged VM pair gets at least its guarantee under Trinity and static
reservation, and Trinity puts spare bandwidth to use. C-ES is run and printed but
not held to it: with several pairs on one host its per-pair limiters each grow
towards the NIC's rate, overflow the host's NIC queue and stall pairs for a
retransmission timeout (issue 14's note)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from helpers import check_conservation, simulate
from tenantnet.reproduce.trinity import GOODPUT, the_testbed

POLICIES = ({"policy": "trinity"}, {"policy": "static"}, {"policy": "elasticswitch"})


@st.composite
def cases(draw: Any) -> dict[str, Any]:
    """2-4 tenants, one pipe each from a left host to a right host (hosts may be
    shared), guarantees of 50-300 Mb/s fitting 90 % of the bottleneck, each pair
    backlogged over 1-8 TCP connections."""
    n = draw(st.integers(2, 4))
    gs = [draw(st.integers(50, 300)) for _ in range(n)]
    scale = min(1.0, 900 / sum(gs))
    gs = [max(10, int(g * scale)) for g in gs]
    return {"g": gs,
            "src": [draw(st.integers(0, 3)) for _ in range(n)],
            "dst": [draw(st.integers(0, 3)) for _ in range(n)],
            "conns": [draw(st.integers(1, 8)) for _ in range(n)]}


def scenario(c: dict[str, Any], vswitch: dict[str, Any]) -> dict[str, Any]:
    tenants, workloads = [], []
    for i, g in enumerate(c["g"]):
        t = f"T{i}"
        tenants.append({
            "name": t, "guarantee": f"{g}Mbps",
            "vms": [{"name": f"{t}a", "host": f"left{c['src'][i]}"},
                    {"name": f"{t}b", "host": f"right{c['dst'][i]}"}],
            "pipes": [{"src": f"{t}a", "dst": f"{t}b", "guarantee": f"{g}Mbps"}]})
        workloads.append({"kind": "long_lived", "tenant": t, "src": f"{t}a", "dst": f"{t}b",
                          "flows_per_pair": c["conns"][i]})
    return {
        "simulation": {"duration": "600ms", "seed": 1},
        **the_testbed(4),
        "tenants": tenants, "vswitch": vswitch, "workloads": workloads,
        "output": {"throughput": ["tenant"], "sample_interval": "10ms", "queues": False},
    }


@settings(max_examples=20, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_backlogged_pair_gets_its_guarantee(c: dict[str, Any]) -> None:
    mean, worst, total = {}, {}, {}
    for vs in POLICIES:
        r, _ = simulate(scenario(c, vs))
        check_conservation(r)
        tp = r.throughput
        tp = tp[(tp["scope"] == "tenant") & (tp["time_s"] > 0.2)]
        wire = tp.pivot(index="time_s", columns="tenant", values="gbps") * 1000 / GOODPUT
        p = vs["policy"]
        mean[p] = min(float(wire[f"T{i}"].mean()) / g for i, g in enumerate(c["g"]))
        # goodput counts bytes as they reach the application in order, so a 10 ms
        # sample may hold bytes that crossed earlier (resequencing, a hole filled):
        # the worst 50 ms window, beside the mean, catches a pair that stalls
        win = wire.groupby(((wire.index - 0.2 - 1e-9) // 0.05).astype(int)).mean()
        worst[p] = min(float(win[f"T{i}"].min()) / g for i, g in enumerate(c["g"]))
        total[p] = float(wire.sum(axis=1).mean())
    print(c["g"], "mean/G", {k: round(v, 2) for k, v in mean.items()},
          "worst 50 ms/G", {k: round(v, 2) for k, v in worst.items()},
          "total", {k: round(v) for k, v in total.items()})
    for p in ("trinity", "static"):
        assert mean[p] >= 0.97, (p, c, mean)
        assert worst[p] >= 0.85, (p, c, worst)
    # the spare bandwidth: Trinity's red class uses much of it (not all: issue 14's
    # note); static reservation never does
    spare = 1000 - sum(c["g"])
    assert total["static"] < sum(c["g"]) * 1.01
    assert total["trinity"] > total["static"] + 0.5 * spare
