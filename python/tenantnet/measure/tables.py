"""The tables of a report, from a run's results: per tenant, per flow-size bucket, per
VM and phase, per port. Every column name carries its unit."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..sim.results import Results
from .analysis import window

SIZE_BUCKETS = [(0, 100e3, "< 100 KB"), (100e3, 10e6, "100 KB - 10 MB"),
                (10e6, np.inf, "≥ 10 MB")]


def boundaries(r: Results) -> list[float]:
    """Times (s) at which workloads start or stop: the distinct start times of
    workloads that start all their flows at once, and every stop time."""
    f = r.flows
    starts = [float(g["start_s"].iloc[0]) for _, g in f.groupby("workload")
              if g["start_s"].nunique() == 1]
    stops = [float(x) for x in f["stop_s"].dropna().unique()] if "stop_s" in f else []
    end = float(r.summary.get("simulated_s", 0))
    return sorted({t for t in starts + stops if 0 < t < end})[:12]


def phases(r: Results) -> list[tuple[float, float]]:
    """The run cut at the times workloads start and stop: [(from_s, to_s)]."""
    cuts = [0.0, *boundaries(r), float(r.summary.get("simulated_s", 0))]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def tenant_table(r: Results) -> pd.DataFrame:
    """Per tenant: flows, sized flows and how many completed, mean goodput over the run,
    retransmissions."""
    span = float(r.summary["simulated_s"])
    f = r.flows
    if not len(f):
        return pd.DataFrame()
    g = f.groupby("tenant", sort=True)
    return pd.DataFrame({
        "flows": g.size(),
        "sized": g["size_bytes"].count(),
        "completed": g["end_s"].count(),
        "goodput (Gb/s)": g["bytes_delivered"].sum() * 8 / span / 1e9,
        "retransmits": g["retransmits"].sum(),
    }).reset_index()


def bucket_rows(sized: pd.DataFrame, column: str, scale: float, unit: str,
                buckets: list[tuple[float, float, str]]) -> list[dict[str, object]]:
    """Per size bucket with flows in `sized` (flows with a size): how many finished
    and did not, and the p50, p99 and mean of `column` × `scale` over those that
    finished (columns named with `unit`)."""
    rows: list[dict[str, object]] = []
    for lo, hi, name in buckets:
        b = sized[(sized["size_bytes"] >= lo) & (sized["size_bytes"] < hi)]
        s = b[column].dropna().astype(float) * scale
        if len(b):
            rows.append({"size": name, "finished": len(s), "unfinished": len(b) - len(s),
                         f"p50{unit}": s.quantile(0.5) if len(s) else np.nan,
                         f"p99{unit}": s.quantile(0.99) if len(s) else np.nan,
                         f"mean{unit}": s.mean() if len(s) else np.nan})
    return rows


def _by_bucket(r: Results, column: str, scale: float, unit: str) -> pd.DataFrame:
    sized = r.flows.dropna(subset=["size_bytes"])
    rows = [{"tenant": tenant, **row} for tenant, g in sized.groupby("tenant", sort=True)
            for row in bucket_rows(g, column, scale, unit, SIZE_BUCKETS)]
    return pd.DataFrame(rows) if any(row["finished"] for row in rows) else pd.DataFrame()


def slowdown_table(r: Results) -> pd.DataFrame:
    """Slowdown percentiles by tenant and flow-size bucket, with counts."""
    return _by_bucket(r, "slowdown", 1.0, "")


def fct_table(r: Results) -> pd.DataFrame:
    """Flow-completion-time percentiles (ms) by tenant and flow-size bucket."""
    return _by_bucket(r, "fct_s", 1e3, " (ms)")


def vm_phase_table(r: Results) -> pd.DataFrame:
    """Per VM: tenant, guarantee, and its mean transmit rate in each phase."""
    if not len(r.vms):
        return pd.DataFrame()
    out = r.vms[["vm", "tenant", "policy"]].copy()
    g = r.vm_rates.groupby("vm")["guarantee_gbps"]
    first, last = g.first(), g.last()
    out["guarantee (Gb/s)"] = [
        f"{first[v]:.3g}" if v in first and first[v] == last[v] else
        (f"{first[v]:.3g} → {last[v]:.3g}" if v in first else f"{gb:.3g}")
        for v, gb in zip(r.vms["vm"], r.vms["guarantee_gbps"], strict=True)]
    for a, b in phases(r):
        out[f"{a:.4g} to {b:.4g} s (Gb/s)"] = out["vm"].map(vm_means(r, a, b)).astype(float)
    return out


def vm_means(r: Results, lo: float, hi: float) -> pd.Series:
    """Each VM's mean transmit rate (Gb/s) over the samples in (lo, hi] seconds."""
    tp = r.throughput[r.throughput["scope"] == "vm"]
    w = window(tp, lo, hi)
    return w.groupby("id")["gbps"].mean()


def links_table(r: Results, top: int = 10) -> pd.DataFrame:
    """The ports that dropped, evicted or marked packets, the most packets first."""
    L = r.links
    hit = L[(L["drops"] + L["evictions"] + L["ecn_marks"]) > 0]
    if not len(hit):
        return pd.DataFrame()
    total = hit["drops"] + hit["evictions"] + hit["ecn_marks"]
    hit = hit.assign(total=total).sort_values(["total", "drops"], ascending=False).head(top)
    return pd.DataFrame({
        "port": hit["node"] + " → " + hit["peer"],
        "drops (packets)": hit["drops"], "evictions (packets)": hit["evictions"],
        "ECN marks (packets)": hit["ecn_marks"],
        "utilisation (%)": hit["utilization"] * 100,
        "max queue (KB)": hit["max_queue_bytes"] / 1e3,
    })
