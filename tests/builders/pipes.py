"""Trinity Fig. 6's traffic as test scenarios: pipe-model guarantees on a 1 Gb/s
dumbbell, A1 -> A2 over one TCP connection against B1 -> B2 over `n`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tenantnet.reproduce.trinity import GOODPUT, fig6_scenario


def fig6(policy: str, ga: str, gb: str, *, n: int = 10, duration: str = "1s",
         pipes: bool = True) -> dict[str, Any]:
    """Trinity Fig. 6's traffic on a 1 Gb/s dumbbell (the reproduction's scenario):
    tenant A, 1 connection from left0 to right0; tenant B, `n` connections from left1
    to right1; pipes A1 -> A2 at `ga` and B1 -> B2 at `gb` (hose guarantees equal to
    the pipes); hosts tick every 10 ms unless a policy's table says otherwise."""
    mbps = (float(g.removesuffix("Mbps")) for g in (ga, gb))
    sc = fig6_scenario({"policy": policy, "interval": "10ms"}, *mbps, n=n, pipes=pipes)
    sc["simulation"]["duration"] = duration
    sc["output"] = {"sample_interval": "10ms", "throughput": ["tenant"]}
    return sc


def wire_mbps(r: Any, after_s: float = 0.2) -> pd.Series:
    """Each tenant's mean throughput after `after_s`, as wire Mb/s (goodput scaled
    by the framing)."""
    tp = r.throughput
    tp = tp[(tp["scope"] == "tenant") & (tp["time_s"] > after_s)]
    return tp.groupby("tenant")["gbps"].mean() * 1000 / GOODPUT
