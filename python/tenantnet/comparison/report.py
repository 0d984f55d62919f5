"""The report of ``tenantnet compare``: the verdict table first (a row per scheme, a
column per property: ✔, ✘ or ≈ inconclusive with the mean over seeds and its 95 %
interval), what would make a verdict less firm, how each property is judged, what
the presets chose, then per-tenant rate against entitlement, the bottleneck links'
utilisation over time, slowdown CDFs by scheme, and every table."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..jobs import progress
from ..measure import metrics, stats, verdicts
from ..report.page import CSS, img, table_html
from ..report.plotting import from_zero, legend_outside, plain_log_ticks, style
from .tables import Judged, mean_over_seeds

VERDICT_CSS = """
.verdict td.yes{background:#e3f4e3} .verdict td.no{background:#fbe3e3}
.verdict td.maybe{background:#fdf3d6} .verdict td.na{color:#888}
.verdict td{white-space:nowrap} .verdict .ci{color:#555;font-size:.9em}
.verdict td.note{white-space:normal;color:#666}
"""


def _cell(text: str) -> str:
    """A verdict cell: the verdict and mean, its interval on a line of its own (so
    that the table fits a laptop's screen)."""
    cls = {"✔": "yes", "✘": "no", "≈": "maybe"}.get(verdicts.symbol(text), "na")
    head, bracket, rest = (text or "not judged").partition(" [")
    ci = f"<br><span class=ci>[{html.escape(rest)}</span>" if bracket else ""
    return f"<td class={cls}>{html.escape(head)}{ci}</td>"


def verdict_html(v: pd.DataFrame, label: str = "scheme") -> str:
    """The verdict table: ✔ green, ✘ red, ≈ yellow; a row that is not judged says
    why across its cells; a property no row could be judged on is left out."""
    props = [p for p in verdicts.NAMES if any(verdicts.symbol(x) for x in v[p])]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in [label, *props])
    rows = []
    for _, r in v.iterrows():
        if r["note"]:
            cells = f"<td class=note colspan={len(props)}>{html.escape(str(r['note']))}</td>"
        else:
            cells = "".join(_cell(str(r[p])) for p in props)
        rows.append(f"<tr><th>{html.escape(str(r['scheme']))}</th>{cells}</tr>")
    return f"<div class=scroll><table class=verdict><tr>{head}</tr>{''.join(rows)}</table></div>"


def _did(c: Judged) -> str:
    """What each scheme did, seed by seed where it differed."""
    r = c.runs
    items = []
    for s in c.schemes:
        g = r[r["scheme"] == s]
        texts = list(dict.fromkeys(str(x) for x in g["engagement"] if x))
        acted = int((g["acted"] == "yes").sum())
        head = (f"acted in {acted} of {len(g)} runs" if (g["acted"] != "baseline").any()
                else "baseline")
        items.append(f"<li><b>{html.escape(s)}</b> ({head}): "
                     f"{html.escape(texts[0] if texts else str(g['error'].iloc[0]))}"
                     f"{' (first seed; others alike)' if len(texts) > 1 else ''}</li>")
    return f"<h2>What each scheme did</h2><ul>{''.join(items)}</ul>" if items else ""


def _judged(c: Judged, df: pd.DataFrame) -> pd.DataFrame:
    """The rows of `df` from runs that are judged (their scheme acted, or is a
    baseline)."""
    r = c.runs
    ok = set(zip(r.loc[r["status"] == "ok", "scheme"], r.loc[r["status"] == "ok", "seed"],
                 strict=True))
    keep = [(s, k) in ok for s, k in zip(df["scheme"], df["seed"], strict=True)]
    return df[keep]


def tenant_figure(c: Judged) -> Figure | None:
    """Per tenant, each judged scheme's bar: the tenant's data rate while it had
    demand (mean over seeds, with its 95 % interval); the black tick: what it was
    entitled to (its guarantee, hose-split)."""
    if "rate_with_demand_gbps" not in c.tenants:  # no tenant had demand in any run
        return None
    t = _judged(c, c.tenants).dropna(subset=["rate_with_demand_gbps"])
    if not len(t):
        return None
    rate = mean_over_seeds(t, ["scheme", "tenant"], "rate_with_demand_gbps")
    ent = mean_over_seeds(t, ["scheme", "tenant"], "entitled_gbps")
    names = list(dict.fromkeys(t["tenant"]))
    runs = list(dict.fromkeys(t["scheme"]))
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(names) * max(1, len(runs) / 4)),
                                    3.6))
    for i, scheme in enumerate(runs):
        s = rate[rate["scheme"] == scheme].set_index("tenant").reindex(names)
        e = ent[ent["scheme"] == scheme].set_index("tenant").reindex(names)
        x = np.arange(len(names)) + (i - (len(runs) - 1) / 2) * width
        err = np.vstack([s["mean"] - s["lo"], s["hi"] - s["mean"]])
        ax.bar(x, s["mean"], width, label=scheme, color=f"C{i % 10}",
               hatch=["", "//", "..", "xx"][(i // 10) % 4], edgecolor="white",
               yerr=err, ecolor="#444", error_kw={"lw": 0.8, "capsize": 1.5})
        ax.scatter(x, e["mean"], marker="_", s=200 * width * 4, color="black",
                   zorder=3, label="entitled (guarantee)" if i == 0 else None)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_xlabel("tenant")
    ax.set_ylabel("data rate while it had demand (Gb/s)")
    ax.grid(alpha=0.3, axis="y")
    legend_outside(ax, title="scheme")
    from_zero([ax])
    return fig


def utilisation_figure(c: Judged) -> Figure | None:
    """Each judged scheme's utilisation of the bottleneck links over time, the mean
    over seeds."""
    iv = _judged(c, c.intervals).dropna(subset=["bottleneck_utilisation"])
    if not len(iv):
        return None
    m = mean_over_seeds(iv, ["scheme", "to_s"], "bottleneck_utilisation")
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for i, (scheme, g) in enumerate(m.groupby("scheme", sort=False)):
        ax.plot(g["to_s"], g["mean"] * 100, label=scheme, drawstyle="steps-pre",
                **style(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck links busy (%,\nmean over seeds)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    legend_outside(ax, title="scheme")
    return fig


def slowdown_figure(c: Judged, short: bool) -> Figure | None:
    """CDF of the slowdown of finished sized flows (short ones only if `short`),
    every judged run of a scheme pooled, one line per scheme."""
    data = {}
    judged = set(zip(c.runs["scheme"][c.runs["status"] == "ok"],
                     c.runs["seed"][c.runs["status"] == "ok"], strict=True))
    for s in c.schemes:
        parts = [o.measures.slowdowns for o in c.outcomes if o.scheme == s and
                 o.measures is not None and (o.scheme, o.seed) in judged]
        if not parts:
            continue
        d = pd.concat(parts)
        if short:
            d = d[d["size_bytes"] < metrics.SHORT_BYTES]
        if len(d):
            data[s] = np.sort(d["slowdown"].to_numpy(dtype=float))
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
    ax.set_ylabel("fraction of flows\n(every seed)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    legend_outside(ax, title="scheme")
    return fig


def _definitions(c: Judged) -> str:
    rules = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>"
                    for k, v in verdicts.describe())
    seeds = ", ".join(str(s) for s in c.seeds)
    return (f"<ul>{rules}</ul><p>Each scheme ran under {len(c.seeds)} seed"
            f"{'s' if len(c.seeds) != 1 else ''} ({seeds}). A cell gives the figure's mean "
            f"over seeds and its {stats.INTERVAL} (Student's t, n - 1 degrees of "
            "freedom): ✔ when the whole interval holds, ✘ when none of it does, ≈ "
            "inconclusive when it straddles the threshold; the numbers carry the "
            "decimals that show which side of the threshold they are on. Settled: demand "
            f"without a break for {c.settle:g} s before the interval. A scheme is judged "
            "only on the runs in which it acted (its token buckets limited, its controller "
            "decided, it evicted or marked, it exchanged feedback); its row says when it "
            "never did.</p><p class=note>Rates are the data a tenant's VMs send (their "
            "ACKs left out), summed over its VMs with demand; a tenant's VMs on one host "
            "are measured as one; a flow running through a whole sampling interval means "
            "demand in it; entitlement is the hose model split equally among the pairs "
            "with demand. Details: <code>tenantnet.measure.metrics</code>, "
            "<code>tenantnet.measure.verdicts</code>.</p>")


def _figure(fig: Figure | None, alt: str, none: str) -> str:
    return img(fig, alt) if fig is not None else f"<p class=note>{html.escape(none)}</p>"


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
    "rate_with_demand_gbps": "data rate with demand (Gb/s)",
    "entitled_gbps": "entitled (Gb/s)", "throughput_gbps": "goodput, whole run (Gb/s)",
    "intervals_with_demand": "intervals with demand",
    "satisfied_pct": "guarantee met (% of them)", "settled_intervals": "settled intervals",
    "settled_satisfied_pct": "met when settled (%)",
    "worst_shortfall_gbps": "worst shortfall (Gb/s)",
    "worst_shortfall_pct": "worst shortfall (% of entitled)",
    "spare_gbps": "spare used, mean over the run (Gb/s)",
    "spare_share_pct": "share of all spare used (%)"}
"""The tenant table's columns as the report names them (with units)."""


def _tenant_means(c: Judged) -> pd.DataFrame:
    t = _judged(c, c.tenants)
    if not len(t):
        return pd.DataFrame()
    cols = [k for k in TENANT_COLUMNS if k in t]
    m = t.groupby(["scheme", "tenant"], sort=False)[cols].mean().reset_index()
    rate = mean_over_seeds(t, ["scheme", "tenant"], "rate_with_demand_gbps")
    m.insert(list(m.columns).index("rate_with_demand_gbps") + 1, "95 % interval (Gb/s)", [
        f"[{lo:.3g}, {hi:.3g}]" if n >= 2 else "" for lo, hi, n in
        zip(rate["lo"], rate["hi"], rate["n"], strict=True)])
    return m.rename(columns=TENANT_COLUMNS)


def _latency_means(c: Judged) -> pd.DataFrame:
    lat = _judged(c, c.latency)
    if not len(lat):
        return pd.DataFrame()
    g = lat.groupby(["scheme", "size"], sort=False)
    out = g.agg(finished=("finished", "sum"), fewest=("finished", "min"),
                unfinished=("unfinished", "sum"), p50=("p50", "mean"), p99=("p99", "mean"),
                mean=("mean", "mean")).reset_index()
    return out.rename(columns={"finished": "finished (all seeds)",
                               "fewest": "finished (fewest in a seed)",
                               "p50": "p50 slowdown (mean over seeds)",
                               "p99": "p99 slowdown (mean over seeds)",
                               "mean": "mean slowdown"})


def _list(title: str, items: list[str]) -> str:
    if not items:
        return ""
    li = "".join(f"<li>{html.escape(x)}</li>" for x in items)
    return f"<h2>{html.escape(title)}</h2><ul>{li}</ul>"


def write_report(c: Judged, out: Path) -> Path:
    """Writes ``out/report.html``."""
    data = c.scenario.data()
    name = str(data.get("name", c.scenario.source))
    title = f"tenantnet compare: {name}"
    v = c.verdicts
    progress.step("writing the comparison report")
    choices = [x for s in c.schemes for x in c.choices.get(s, [])]
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>",
             f"<style>{CSS}{VERDICT_CSS}</style><h1>{html.escape(title)}</h1>",
             f"<p>{html.escape(str(data.get('description', '')).rstrip('.'))}. The scenario "
             f"<code>{html.escape(c.scenario.source)}</code> " + (html.escape(c.runs_note) if
                                                                   c.runs_note else
             f"ran under each scheme and {len(c.seeds)} seeds; each run's results are in "
             "<code>&lt;scheme&gt;/seed-&lt;N&gt;/</code>") + ".</p>",
             verdict_html(v),
             f"<p>{html.escape(c.trust)}</p>" if c.trust else "",
             _list("What makes a verdict less firm", c.warnings()),
             _did(c),
             "<h2>How each property is judged</h2>", _definitions(c),
             _list("What the presets chose for this scenario", choices),
             "<h2>Each tenant's rate against its guarantee</h2>",
             _figure(tenant_figure(c), "rate per tenant", "no tenant with VMs had demand"),
             "<h2>Work conservation: bottleneck links over time</h2>",
             _figure(utilisation_figure(c), "utilisation",
                     "demand exceeded no link's capacity"),
             "<h2>Latency: slowdown of sized flows</h2>",
             _figure(slowdown_figure(c, short=True), "short-flow slowdown",
                     "no flow under 100 KB finished"),
             _figure(slowdown_figure(c, short=False), "slowdown", ""),
             "<h3>Slowdown by flow size</h3>",
             table_html(_latency_means(c), "no sized flow"),
             "<h2>Per tenant</h2><p>Means over the seeds in which the scheme was judged; "
             "rates are the data each tenant's VMs sent, averaged over the intervals in "
             "which one of them had demand.</p>",
             table_html(_tenant_means(c), "no tenants"),
             "<h2>Counters</h2><p>Means over seeds.</p>", table_html(_counters(v),
                                                                    "no scheme ran")]
    path = out / "report.html"
    path.write_text("\n".join(p for p in parts if p), encoding="utf-8")
    return path
