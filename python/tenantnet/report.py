"""HTML reports with plots: throughput over time, flow-completion times, queues.

A report is one self-contained HTML file (plots embedded as PNG) describing one or
more runs side by side, so later comparisons of isolation schemes reuse it.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .results import Results

SIZE_BUCKETS = [(0, 100e3, "< 100 KB"), (100e3, 10e6, "100 KB - 10 MB"), (10e6, np.inf, "≥ 10 MB")]


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _img(fig: Figure, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{_png(fig)}">'


def tenant_throughput_figure(runs: Mapping[str, Results]) -> Figure:
    """Goodput of each tenant over time, one panel per run."""
    fig, axes = plt.subplots(1, len(runs), figsize=(6.4 * len(runs), 3.6), squeeze=False,
                             sharey=True)
    for ax, (label, r) in zip(axes[0], runs.items(), strict=True):
        tp = r.throughput[r.throughput["scope"] == "tenant"]
        for tenant, g in tp.groupby("id", sort=True):
            ax.plot(g["time_s"] * 1e3, g["gbps"], label=str(tenant), drawstyle="steps-pre")
        ax.set_title(label)
        ax.set_xlabel("time (ms)")
        ax.grid(alpha=0.3)
        if len(tp):
            ax.legend(title="tenant", fontsize=8)
    axes[0][0].set_ylabel("goodput (Gb/s)")
    return fig


def fct_figure(runs: Mapping[str, Results]) -> Figure:
    """CDF of flow-completion times of finished flows, per run and tenant."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, r in runs.items():
        done = r.flows.dropna(subset=["fct_s"])
        for tenant, g in done.groupby("tenant", sort=True):
            x = np.sort(g["fct_s"].to_numpy(dtype=float) * 1e3)
            y = np.arange(1, len(x) + 1) / len(x)
            name = f"{label} / {tenant}" if len(runs) > 1 else str(tenant)
            ax.step(x, y, where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("flow-completion time (ms)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def queue_figure(r: Results, top: int = 6, title: str = "") -> Figure:
    """Occupancy over time of the ports with the largest mean occupancy."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    q = r.queues
    if len(q):
        key = q["switch"] + "→" + q["peer"]
        busiest = q.assign(key=key).groupby("key")["bytes"].mean().nlargest(top).index
        for k in busiest:
            g = q[key == k]
            ax.plot(g["time_s"] * 1e3, g["bytes"] / 1e3, label=k, drawstyle="steps-post")
        ax.legend(fontsize=7)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("occupancy (KB)")
    ax.set_title(title or "busiest switch ports")
    ax.grid(alpha=0.3)
    return fig


def vm_figure(runs: Mapping[str, Results]) -> Figure:
    """Transmit rate of each VM over time (solid) and its guarantee (dotted), one
    panel per run."""
    fig, axes = plt.subplots(1, len(runs), figsize=(6.4 * len(runs), 3.6), squeeze=False,
                             sharey=True)
    for ax, (label, r) in zip(axes[0], runs.items(), strict=True):
        tp = r.throughput[r.throughput["scope"] == "vm"]
        for vm, g in tp.groupby("id", sort=True):
            line, = ax.plot(g["time_s"], g["gbps"], label=str(vm), drawstyle="steps-pre")
            rates = r.vm_rates[r.vm_rates["vm"] == vm]
            if len(rates):
                ax.plot(rates["time_s"], rates["guarantee_gbps"], ls=":", lw=1,
                        color=line.get_color(), drawstyle="steps-post")
        ax.set_title(label)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        if len(tp):
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel("transmit rate (Gb/s)")
    return fig


def allocation_figure(runs: Mapping[str, Results]) -> Figure | None:
    """The rate each VM's token bucket enforced (MBFQ's AR) over time, for the runs
    that throttle; ``None`` if none does."""
    shaped = {k: r for k, r in runs.items() if r.vm_rates["allocated_gbps"].notna().any()}
    if not shaped:
        return None
    fig, axes = plt.subplots(1, len(shaped), figsize=(6.4 * len(shaped), 3.2), squeeze=False,
                             sharey=True)
    for ax, (label, r) in zip(axes[0], shaped.items(), strict=True):
        for vm, g in r.vm_rates.groupby("vm", sort=True):
            ax.plot(g["time_s"], g["allocated_gbps"].astype(float), label=str(vm),
                    drawstyle="steps-post", marker=".", ms=3)
        ax.set_title(label)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("allocated rate (Gb/s)")
    return fig


def vm_table(r: Results) -> pd.DataFrame:
    """Per VM: tenant, host, policy, guarantee and mean transmit rate."""
    cols = ["vm", "tenant", "host", "policy", "guarantee_gbps", "mean_gbps", "drops"]
    return r.vms[cols]


def fct_table(r: Results) -> pd.DataFrame:
    """FCT percentiles (ms) by tenant and flow-size bucket."""
    done = r.flows.dropna(subset=["fct_s"])
    rows = []
    for tenant, g in done.groupby("tenant", sort=True):
        for lo, hi, name in SIZE_BUCKETS:
            s = g[(g["size_bytes"] >= lo) & (g["size_bytes"] < hi)]["fct_s"].astype(float) * 1e3
            if len(s):
                rows.append({"tenant": tenant, "size": name, "flows": len(s),
                             "p50_ms": s.quantile(0.5), "p99_ms": s.quantile(0.99),
                             "mean_ms": s.mean()})
    return pd.DataFrame(rows)


def tenant_table(r: Results) -> pd.DataFrame:
    """Mean goodput per tenant over the run and flow counts."""
    span = float(r.summary["simulated_s"])
    f = r.flows
    g = f.groupby("tenant", sort=True)
    return pd.DataFrame({
        "flows": g.size(),
        "finished": g["end_s"].count(),
        "goodput_gbps": g["bytes_delivered"].sum() * 8 / span / 1e9,
        "retransmits": g["retransmits"].sum(),
    }).reset_index()


def _summary_rows(r: Results) -> str:
    s = r.summary
    keys = ["topology", "simulated_s", "wall_s", "events", "packets_sent", "packets_delivered",
            "packets_dropped", "ecn_marks", "flows", "flows_completed", "seed",
            "tenantnet_version"]
    def fmt(v: object) -> str:
        return html.escape(str(round(v, 4) if isinstance(v, float) else v))

    cells = "".join(f"<tr><th>{k}</th><td>{fmt(s[k])}</td></tr>" for k in keys if k in s)
    return f"<table class=kv>{cells}</table>"


def _df_html(df: pd.DataFrame) -> str:
    if df.empty:
        return "<p><i>none</i></p>"
    return str(df.to_html(index=False, float_format=lambda v: f"{v:.3f}", border=0,
                          classes="data"))


def _per_run(runs: Mapping[str, Results], table: Callable[[Results], pd.DataFrame]) -> str:
    cells = "".join(f"<div><h3>{html.escape(label)}</h3>{_df_html(table(r))}</div>"
                    for label, r in runs.items())
    return f"<div class=runs>{cells}</div>"


CSS = """
body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #eee}
.kv th{color:#555;font-weight:normal} img{max-width:100%}
.runs{display:flex;flex-wrap:wrap;gap:2em}
"""


def write_report(runs: Mapping[str, Results], out: str | Path, title: str,
                 intro: str = "", extra: str = "") -> Path:
    """Writes an HTML report comparing ``runs`` (label → results) to ``out``;
    ``extra`` is HTML placed after the introduction."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>",
             f"<style>{CSS}</style><h1>{html.escape(title)}</h1>"]
    if intro:
        parts.append(f"<p>{intro}</p>")
    parts.append(extra)
    if any(len(r.vms) for r in runs.values()):
        parts.append("<h2>VMs: transmit rate past the vswitch</h2>")
        parts.append(_img(vm_figure(runs), "VM transmit rate over time"))
        alloc = allocation_figure(runs)
        if alloc is not None:
            parts.append("<h2>Rate enforced by each VM's token bucket</h2>")
            parts.append(_img(alloc, "allocated rate per VM"))
        parts.append(_per_run(runs, vm_table))
    parts.append("<h2>Goodput per tenant</h2>")
    parts.append(_img(tenant_throughput_figure(runs), "tenant goodput over time"))
    parts.append(_per_run(runs, tenant_table))
    parts.append("<h2>Flow-completion times</h2>")
    parts.append(_img(fct_figure(runs), "FCT CDF"))
    parts.append(_per_run(runs, fct_table))
    parts.append("<h2>Queue occupancy</h2><div class=runs>")
    for label, r in runs.items():
        parts.append(_img(queue_figure(r, title=label), f"queues {label}"))
    parts.append("</div><h2>Runs</h2><div class=runs>")
    for label, r in runs.items():
        parts.append(f"<div><h3>{html.escape(label)}</h3>{_summary_rows(r)}</div>")
    parts.append("</div>")
    out.write_text("\n".join(parts), encoding="utf-8")
    return out
