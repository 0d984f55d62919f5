"""The report of ``tenantnet compare``: a verdict table first (a row per scheme, a
column per property, ✔/✘ with the figure), then per-tenant rate against
entitlement, the bottleneck links' utilisation over time, slowdown CDFs by scheme,
and every table."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import metrics, progress
from .plotting import from_zero, legend_outside, plain_log_ticks, style
from .report import CSS, _df_html, _img
from .scenario import Scenario

if TYPE_CHECKING:
    from .compare import Outcome

VERDICT_CSS = """
.verdict td.yes{background:#e3f4e3} .verdict td.no{background:#fbe3e3}
.verdict td.na{color:#888} .verdict td{white-space:nowrap}
.verdict td.note{white-space:normal;color:#666;font-size:.9em}
"""


def _cell(text: str) -> str:
    cls = "yes" if text.startswith("✔") else "no" if text.startswith("✘") else "na"
    return f'<td class={cls}>{html.escape(text or "n/a")}</td>'


def verdict_html(v: pd.DataFrame) -> str:
    """The verdict table: ✔ green, ✘ red, nothing to judge grey."""
    props = list(metrics.VERDICTS)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["scheme", *props, "note"])
    rows = []
    for _, r in v.iterrows():
        cells = "".join(_cell(str(r[p])) for p in props)
        rows.append(f"<tr><th>{html.escape(str(r['scheme']))}</th>{cells}"
                    f"<td class=note>{html.escape(str(r['note']))}</td></tr>")
    return f"<table class=verdict><tr>{head}</tr>{''.join(rows)}</table>"


def tenant_figure(tenants: pd.DataFrame) -> Figure | None:
    """Per tenant, each scheme's bar: the tenant's rate while it had demand; the
    black tick on it: what it was entitled to (its guarantee, hose-split)."""
    t = tenants.dropna(subset=["rate_with_demand_gbps"])
    if not len(t):
        return None
    names = list(dict.fromkeys(t["tenant"]))
    runs = list(dict.fromkeys(t["scheme"]))
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(names) * max(1, len(runs) / 4)),
                                    3.6))
    for i, scheme in enumerate(runs):
        s = t[t["scheme"] == scheme].set_index("tenant").reindex(names)
        x = np.arange(len(names)) + (i - (len(runs) - 1) / 2) * width
        ax.bar(x, s["rate_with_demand_gbps"], width, label=scheme, color=f"C{i % 10}",
               hatch=["", "//", "..", "xx"][(i // 10) % 4], edgecolor="white")
        ax.scatter(x, s["entitled_gbps"], marker="_", s=200 * width * 4, color="black",
                   zorder=3, label="entitled (guarantee)" if i == 0 else None)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_xlabel("tenant")
    ax.set_ylabel("rate while it had demand (Gb/s)")
    ax.grid(alpha=0.3, axis="y")
    legend_outside(ax, title="scheme")
    from_zero([ax])
    return fig


def utilisation_figure(intervals: pd.DataFrame) -> Figure | None:
    """Each scheme's mean utilisation of the bottleneck links over time."""
    iv = intervals.dropna(subset=["bottleneck_utilisation"])
    if not len(iv):
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for i, (scheme, g) in enumerate(iv.groupby("scheme", sort=False)):
        ax.plot(g["to_s"], g["bottleneck_utilisation"] * 100, label=scheme,
                drawstyle="steps-pre", **style(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck links busy (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    legend_outside(ax, title="scheme")
    return fig


def slowdown_figure(outcomes: Sequence[Outcome], short: bool) -> Figure | None:
    """CDF of the slowdown of finished sized flows (short ones only if `short`),
    one line per scheme."""
    data = {}
    for o in outcomes:
        if o.measures is None:
            continue
        s = o.measures.slowdowns
        if short:
            s = s[s["size_bytes"] < metrics.SHORT_BYTES]
        if len(s):
            data[o.scheme] = np.sort(s["slowdown"].to_numpy(dtype=float))
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for i, (scheme, x) in enumerate(data.items()):
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post",
                label=f"{scheme} ({len(x)} flows)", **style(i))
    lo = min(float(x[0]) for x in data.values())
    hi = max(float(x[-1]) for x in data.values())
    what = "flows < 100 KB" if short else "all sized flows"
    if hi >= 10 * lo:
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_xlabel(f"slowdown of {what}: FCT / ideal FCT (log scale)")
    else:
        ax.set_xlabel(f"slowdown of {what}: FCT / ideal FCT")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    legend_outside(ax, title="scheme")
    return fig


def _definitions(settle: float) -> str:
    m = metrics
    items = [
        ("guarantees", f"✔ when at least {m.GUARANTEED:.0%} of the settled intervals of "
         f"tenants' VMs with demand gave them at least {m.SATISFIED:.0%} of their "
         f"entitlement; settled: demand without a break for {settle:g} s before. The "
         f"tenant table also counts every interval and gives the worst shortfall."),
        ("work conservation", f"✔ when the links that demand exceeds (host links "
         f"saturated in the max-min fair allocation of the flows with demand) are at "
         f"least {m.WORK_CONSERVING:.0%} busy on average."),
        ("short-flow latency", f"✔ when the p99 slowdown (FCT over ideal FCT) of flows "
         f"under 100 KB is within {m.SHORT_P99:g}× of the best scheme's here."),
        ("fairness", f"✔ when Jain's index over tenants with settled demand of rate / "
         f"guarantee averages at least {m.FAIR:g}."),
    ]
    li = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in items)
    return (f"<ul>{li}</ul><p class=note>A tenant's VMs on one host are measured as "
            "one; a flow running through a whole sampling interval means demand in it; "
            "entitlement is the hose model split equally among the pairs with demand. "
            "Details: <code>tenantnet.metrics</code>.</p>")


def _figure(fig: Figure | None, alt: str, none: str) -> str:
    return _img(fig, alt) if fig is not None else f"<p class=note>{html.escape(none)}</p>"


def _counters(v: pd.DataFrame) -> pd.DataFrame:
    cols = ["scheme", "goodput_gbps", "guarantees_all_pct", "drops", "evictions",
            "ecn_marks", "control_packets", "qct_p50_ms", "qct_p99_ms", "cpu_cycles",
            "wall_s"]
    names = {"goodput_gbps": "goodput (Gb/s)", "guarantees_all_pct":
             "guarantees met, every interval (%)", "ecn_marks": "ECN marks",
             "control_packets": "ACK and control packets", "qct_p50_ms": "QCT p50 (ms)",
             "qct_p99_ms": "QCT p99 (ms)", "cpu_cycles": "vswitch CPU cycles",
             "wall_s": "run wall time (s)"}
    ran = v[v["note"] == ""]
    return ran[[c for c in cols if c in ran]].rename(columns=names)


TENANT_COLUMNS = {
    "guarantee_gbps": "guarantee, all its VMs (Gb/s)",
    "rate_with_demand_gbps": "rate with demand (Gb/s)",
    "entitled_gbps": "entitled (Gb/s)", "throughput_gbps": "goodput, whole run (Gb/s)",
    "intervals_with_demand": "intervals with demand",
    "satisfied_pct": "guarantee met (% of them)", "settled_intervals": "settled intervals",
    "settled_satisfied_pct": "met when settled (%)",
    "worst_shortfall_gbps": "worst shortfall (Gb/s)",
    "worst_shortfall_pct": "worst shortfall (% of entitled)",
    "spare_gbps": "spare used, mean over the run (Gb/s)",
    "spare_share_pct": "share of all spare used (%)"}
"""The tenant table's columns as the report names them (with units)."""


def write_report(tables: Mapping[str, pd.DataFrame], outcomes: Sequence[Outcome],
                 out: Path, scenario: Scenario, settle: float) -> Path:
    """Writes ``out/report.html``."""
    data = scenario.data()
    name = str(data.get("name", scenario.source))
    title = f"tenantnet compare: {name}"
    v = tables["verdicts"]
    progress.step("writing the comparison report")
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>",
             f"<style>{CSS}{VERDICT_CSS}</style><h1>{html.escape(title)}</h1>",
             f"<p>{html.escape(str(data.get('description', '')).rstrip('.'))}. The scenario "
             f"<code>{html.escape(scenario.source)}</code> ran once per scheme; each "
             "run's results are in the folder named after it.</p>",
             verdict_html(v), "<h2>How each property is judged</h2>", _definitions(settle),
             "<h2>Each tenant's rate against its guarantee</h2>",
             _figure(tenant_figure(tables["tenants"]), "rate per tenant",
                     "no tenant with VMs had demand"),
             "<h2>Work conservation: bottleneck links over time</h2>",
             _figure(utilisation_figure(tables["intervals"]), "utilisation",
                     "demand exceeded no link's capacity"),
             "<h2>Latency: slowdown of sized flows</h2>",
             _figure(slowdown_figure(outcomes, short=True), "short-flow slowdown",
                     "no flow under 100 KB finished"),
             _figure(slowdown_figure(outcomes, short=False), "slowdown", ""),
             "<h3>Slowdown by flow size</h3>",
             _df_html(tables["latency"], "no sized flow"),
             "<h2>Per tenant</h2><p>Rates are of each tenant's VMs together, averaged "
             "over the intervals in which one of them had demand.</p>",
             _df_html(tables["tenants"].rename(columns=TENANT_COLUMNS), "no tenants"),
             "<h2>Counters</h2>", _df_html(_counters(v), "no scheme ran")]
    path = out / "report.html"
    path.write_text("\n".join(p for p in parts if p), encoding="utf-8")
    return path
