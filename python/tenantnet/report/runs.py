"""HTML reports with plots: VM rates, tenant goodput, flow completion (slowdown and
FCT), queues, and what each link dropped and marked.

A report is one self-contained HTML file (plots embedded as PNG) describing one or
more runs side by side. Every chart of a report shares one time unit; series are told
apart by colour, line style and marker, legends sit beside the axes, rate and
occupancy axes start at 0, and the times at which workloads start and stop are marked
with dotted vertical lines.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..jobs import progress
from ..measure.tables import (
    fct_table,
    links_table,
    slowdown_table,
    tenant_table,
    vm_phase_table,
)
from ..sim.results import Results
from . import qshare as report_qshare
from .page import CSS, TimeAxis, finish, img, panels, table_html
from .plotting import from_zero, plain_log_ticks, style


def tenant_throughput_figure(runs: Mapping[str, Results]) -> Figure:
    """Goodput of each tenant over time, one panel per run."""
    t = TimeAxis(runs)
    fig, axes = panels(len(runs))
    for ax, (label, r) in zip(axes, runs.items(), strict=True):
        tp = r.throughput[r.throughput["scope"] == "tenant"]
        for i, (tenant, g) in enumerate(tp.groupby("id", sort=True)):
            ax.plot(t(g["time_s"]), g["gbps"], label=str(tenant), drawstyle="steps-pre",
                    **style(i))
        ax.set_title(label)
        finish(ax, t, r, below=True, legend_title="tenant")
    axes[0].set_ylabel("goodput (Gb/s)")
    from_zero(axes)
    return fig


def fct_figure(runs: Mapping[str, Results]) -> Figure | None:
    """CDF of the slowdown of finished flows, per run and tenant; ``None`` if no flow
    finished."""
    done = {k: r.flows.dropna(subset=["slowdown"]) for k, r in runs.items()}
    if not any(len(d) for d in done.values()):
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    i = 0
    for label, d in done.items():
        for tenant, g in d.groupby("tenant", sort=True):
            x = np.sort(g["slowdown"].to_numpy(dtype=float))
            y = np.arange(1, len(x) + 1) / len(x)
            name = f"{label} / {tenant}" if len(runs) > 1 else str(tenant)
            ax.step(x, y, where="post", label=f"{name} ({len(x)} flows)", **style(i))
            i += 1
    all_x = pd.concat([d["slowdown"] for d in done.values()]).astype(float)
    if all_x.max() >= 10 * all_x.min():
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_xlabel("slowdown: FCT / ideal FCT on an idle path (log scale)")
    else:
        ax.set_xlabel("slowdown: FCT / ideal FCT on an idle path")
    ax.set_ylabel("fraction of flows")
    finish(ax, None)
    ax.set_ylim(0, 1.02)
    return fig


def _queue_keys(q: pd.DataFrame) -> pd.Series:
    """Each queue sample's series: its port (``switch→peer``), and its queue where the
    port has several."""
    multi = q.groupby(["switch", "peer"])["queue"].transform("nunique") > 1
    return q["switch"] + "→" + q["peer"] + np.where(multi, ":q" + q["queue"].astype(str),
                                                    "")


def busiest_queues(r: Results, top: int = 6) -> list[str]:
    """The `top` queues of run `r` with the highest mean occupancy (those ever
    occupied), busiest first."""
    q = r.queues
    if not len(q):
        return []
    busiest = q.assign(key=_queue_keys(q)).groupby("key")["bytes"].mean().nlargest(top)
    return [str(k) for k in busiest[busiest > 0].index]


def queue_figure(r: Results, t: TimeAxis, top: int = 6, title: str = "",
                 order: Sequence[str] | None = None) -> Figure | None:
    """Occupancy over time of the busiest recorded queues (one series per queue of a
    multi-queue port); ``None`` if no queue was recorded. `order` gives each queue its
    style, so that a port has one colour in every run's figure."""
    q = r.queues
    if not len(q):
        return None
    key = _queue_keys(q)
    busiest = busiest_queues(r, top)
    order = list(order) if order is not None else busiest
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    # in the shared order: each run's legend lists its ports in the same order
    for k in sorted(busiest, key=lambda k: order.index(k) if k in order else len(order)):
        g = q[key == k]
        ax.plot(t(g["time_s"]), g["bytes"] / 1e3, label=k, drawstyle="steps-post",
                **style(order.index(k) if k in order else len(order)))
    if not busiest:
        ax.text(0.5, 0.5, "no queue held a packet at any sample", ha="center",
                transform=ax.transAxes, color="grey")
    ax.set_ylabel("occupancy (KB)")
    ax.set_title(title or "busiest queues")
    finish(ax, t, r)
    from_zero([ax])
    return fig


def vm_figure(runs: Mapping[str, Results]) -> Figure | None:
    """Transmit rate of each VM over time (solid) and its guarantee (thin, same colour),
    one panel per run; ``None`` if no run recorded VM samples."""
    if not any((r.throughput["scope"] == "vm").any() for r in runs.values()):
        return None
    t = TimeAxis(runs)
    fig, axes = panels(len(runs))
    for ax, (label, r) in zip(axes, runs.items(), strict=True):
        tp = r.throughput[r.throughput["scope"] == "vm"]
        for i, (vm, g) in enumerate(tp.groupby("id", sort=True)):
            st = style(i)
            ax.plot(t(g["time_s"]), g["gbps"], label=str(vm), drawstyle="steps-pre", **st)
            rates = r.vm_rates[r.vm_rates["vm"] == vm]
            if len(rates):
                ax.plot(t(rates["time_s"]), rates["guarantee_gbps"], lw=0.8, color=st["color"],
                        ls=(0, (1, 2)), drawstyle="steps-post")
        ax.set_title(label)
        finish(ax, t, r, below=True, legend_title="VM (dotted line: its guarantee)")
    axes[0].set_ylabel("transmit rate (Gb/s)")
    from_zero(axes)
    return fig


def enforced_gbps(v: pd.DataFrame) -> pd.Series:
    """The rate each row of `vm_rates` says the VM's enforcement set, Gb/s: its token
    bucket's (``allocated_gbps``), else the sum of R_G + R_W over its Trinity
    channels, else the sum of its ElasticSwitch limiters' R; empty where none is."""
    own = v["allocated_gbps"].astype(float)
    trinity = v["rg_gbps"].astype(float) + v["rw_gbps"].astype(float)
    return own.fillna(trinity).fillna(v["limit_gbps"].astype(float))


def allocation_figure(runs: Mapping[str, Results]) -> Figure | None:
    """The rate each VM's enforcement set over time (see `enforced_gbps`), for the runs
    that throttle; ``None`` if none does."""
    shaped = {k: r for k, r in runs.items() if enforced_gbps(r.vm_rates).notna().any()}
    if not shaped:
        return None
    t = TimeAxis(runs)
    fig, axes = panels(len(shaped), 3.2)
    for ax, (label, r) in zip(axes, shaped.items(), strict=True):
        v = r.vm_rates.assign(enforced=enforced_gbps(r.vm_rates))
        for i, (vm, g) in enumerate(v.groupby("vm", sort=True)):
            if g["enforced"].isna().all():
                continue  # never throttled (and matplotlib cannot mark an empty line)
            ax.plot(t(g["time_s"]), g["enforced"], label=str(vm),
                    drawstyle="steps-post", **style(i))
        ax.set_title(label)
        finish(ax, t, r, below=True, legend_title="VM")
    axes[0].set_ylabel("enforced rate (Gb/s)")
    from_zero(axes)
    return fig


def _summary_rows(r: Results) -> str:
    s = r.summary
    keys = ["topology", "simulated_s", "wall_s", "events", "packets_sent", "packets_delivered",
            "packets_dropped", "packets_evicted", "ecn_marks", "flows", "flows_finite",
            "flows_completed", "seed", "tenantnet_version"]

    def fmt(v: object) -> str:
        return html.escape(f"{v:.4g}" if isinstance(v, float) else str(v))

    cells = "".join(f"<tr><th>{k}</th><td>{fmt(s[k])}</td></tr>" for k in keys if k in s)
    return f"<table class=kv>{cells}</table>"


def _per_run(runs: Mapping[str, Results], table: Callable[[Results], pd.DataFrame],
             empty: str) -> str:
    cells = "".join(f"<div><h3>{html.escape(label)}</h3>{table_html(table(r), empty)}</div>"
                    for label, r in runs.items())
    return f"<div class=runs>{cells}</div>"


def _sections(runs: Mapping[str, Results]) -> list[tuple[str, Callable[[], str]]]:
    """(title, HTML) of each section, built when asked (the slow part: figures)."""
    t = TimeAxis(runs)

    def vms() -> str:
        fig = vm_figure(runs)
        parts = [img(fig, "VM transmit rate over time") if fig is not None else
                 '<p>VM transmit rates were not recorded (add "vm" to '
                 '<code>output.throughput</code>).</p>']
        alloc = allocation_figure(runs)
        if alloc is not None:
            parts.append("<h3>Rate enforced for each VM</h3><p>Its token bucket's rate; "
                         "under Trinity the sum of R<sub>G</sub> + R<sub>W</sub> over its "
                         "channels, under ElasticSwitch the sum of its pair limiters' "
                         "rates.</p>" + img(alloc, "enforced rate per VM"))
        parts.append("<p>Mean transmit rate per VM (Gb/s) in each phase (between the times "
                     "workloads start and stop), beside its guarantee.</p>")
        parts.append(_per_run(runs, vm_phase_table, "no VMs"))
        return "".join(parts)

    def goodput() -> str:
        return (img(tenant_throughput_figure(runs), "tenant goodput over time")
                + _per_run(runs, tenant_table, "no flows"))

    def fct() -> str:
        if not any(r.flows["size_bytes"].notna().any() for r in runs.values()):
            return ("<p class=note>No flow in these runs has a size (long-lived and UDP "
                    "flows have no completion time).</p>")
        fig = fct_figure(runs)
        head = ("<p>Slowdown is each finished sized flow's completion time divided by its "
                "ideal completion time alone on an idle path (serialization at the "
                "bottleneck rate plus the base round trip): 1 is as fast as the path allows."
                "</p>")
        cdf = img(fig, "slowdown CDF") if fig is not None else ""
        return (head + cdf + "<h3>Slowdown by flow size</h3>"
                + _per_run(runs, slowdown_table, "no sized flow finished")
                + "<h3>Flow-completion time by flow size (ms)</h3>"
                + _per_run(runs, fct_table, "no sized flow finished"))

    def queues() -> str:
        imgs = []
        # one style per queue across the runs' figures
        order = sorted({k for r in runs.values() for k in busiest_queues(r)})
        for label, r in runs.items():
            fig = queue_figure(r, t, title=label, order=order)
            imgs.append(img(fig, f"queues {label}") if fig is not None else
                        f"<p class=note>{html.escape(label)}: no queue recorded "
                        "(output.queues, output.host_queues)</p>")
        return "<div class=runs>" + "".join(imgs) + "</div>"

    def links() -> str:
        return ("<p>Ports that dropped, evicted or marked packets (the busiest first), with "
                "their utilisation over the run.</p>"
                + _per_run(runs, links_table, "no port dropped, evicted or marked a packet"))

    def qshare() -> str:
        parts = ["<p>Each control interval QShare's controller binds the tenants with the "
                 "highest scores to dedicated queues (Algorithm 2) and pushes the ports' "
                 "weights; the rest share queue 0, capped at their guarantees.</p>"]
        for fig, alt in ((report_qshare.binding_figure(runs, t), "binding"),
                         (report_qshare.weights_figure(runs, t), "weights")):
            if fig is not None:
                parts.append(img(fig, f"QShare {alt} over time"))
        parts.append(_per_run(runs, report_qshare.tenant_summary, "no controller"))
        return "".join(parts)

    def summary() -> str:
        cells = "".join(f"<div><h3>{html.escape(label)}</h3>{_summary_rows(r)}</div>"
                        for label, r in runs.items())
        return f"<div class=runs>{cells}</div>"

    out: list[tuple[str, Callable[[], str]]] = []
    if any(len(r.vms) for r in runs.values()):
        out.append(("VMs: transmit rate past the vswitch", vms))
    out += [("Goodput per tenant", goodput), ("Flow completion", fct),
            ("Queue occupancy", queues), ("Drops, evictions and ECN marks per port", links)]
    if any(r.qshare_tenants is not None and len(r.qshare_tenants) for r in runs.values()):
        out.append(("QShare: binding and weights over time", qshare))
    out.append(("Runs", summary))
    return out


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
    sections = _sections(runs)
    for i, (name, build) in enumerate(sections, start=1):
        progress.step(f"writing report: {name.lower()} ({i}/{len(sections)})")
        parts.append(f"<h2>{html.escape(name)}</h2>{build()}")
    out.write_text("\n".join(parts), encoding="utf-8")
    return out
