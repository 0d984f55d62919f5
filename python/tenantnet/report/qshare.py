"""The QShare section of a report: which tenants held a dedicated queue at each
control interval, the weights the controller pushed over time, and a table per
tenant (the `qshare_tenants` and `qshare_queues` results)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ..sim.results import Results
from .plotting import legend_outside, style

if TYPE_CHECKING:
    from .page import TimeAxis


def _runs(runs: Mapping[str, Results]) -> dict[str, Results]:
    return {k: r for k, r in runs.items() if r.qshare_tenants is not None
            and len(r.qshare_tenants)}


def binding_figure(runs: Mapping[str, Results], t: TimeAxis) -> Figure | None:
    """A row per tenant, filled while it held a dedicated queue, one panel per run;
    ``None`` if no run had a controller."""

    q = _runs(runs)
    if not q:
        return None
    rows = max(len(set(r.qshare_tenants["tenant"])) for r in q.values()
               if r.qshare_tenants is not None)
    fig, axes = plt.subplots(len(q), 1, figsize=(11, (0.9 + 0.32 * rows) * len(q)),
                             squeeze=False)
    for ax, (label, r) in zip(axes[:, 0], q.items(), strict=True):
        b = r.qshare_tenants
        assert b is not None
        end = float(r.summary.get("simulated_s", b["time_s"].max()))
        tenants = list(dict.fromkeys(b["tenant"]))
        times = sorted(b["time_s"].unique())
        nxt = dict(zip(times, [*times[1:], end], strict=True))
        for y, name in enumerate(tenants):
            mine = b[b["tenant"] == name]
            for color, d in (("0.85", mine), ("C0", mine[mine["dedicated"] == 1])):
                spans = [(t(s), t(nxt[s] - s)) for s in d["time_s"]]
                ax.broken_barh(spans, (y - 0.35, 0.7), color=color)
        ax.set_yticks(range(len(tenants)), tenants, fontsize=7)
        ax.set_ylim(len(tenants) - 0.5, -0.5)
        ax.set_xlim(0, t(end))
        ax.set_xlabel(t.label())
        ax.set_title(f"{label}: blue while dedicated, grey while in the shared queue, "
                     f"blank while absent ({len(times)} updates)", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def busiest_port(pushes: pd.DataFrame) -> str:
    """The port whose pushes name the most tenants, switch-to-switch ports first (the
    fabric's shared links)."""
    n = pushes.assign(k=pushes["tenants"].str.split().str.len()).groupby("port")["k"].max()
    core = [p for p in n.index if str(p).startswith("switch") and "->switch" in str(p)]
    pick = n[core] if core else n
    return str(pick.sort_values(ascending=False, kind="stable").index[0])


def tenant_weights(pushes: pd.DataFrame, port: str) -> pd.DataFrame:
    """The weight of each tenant's queue on `port` after every push there: time_s,
    tenant, queue, weight."""
    rows = []
    for row in pushes[pushes["port"] == port].itertuples(index=False):
        for t in str(row.tenants).split():
            rows.append({"time_s": row.time_s, "tenant": t, "queue": row.queue,
                         "weight": row.weight})
    return pd.DataFrame(rows, columns=["time_s", "tenant", "queue", "weight"])


def weights_figure(runs: Mapping[str, Results], t: TimeAxis) -> Figure | None:
    """The weight of each tenant's queue on each run's busiest port over time."""

    q = {k: r for k, r in _runs(runs).items() if r.qshare_queues is not None
         and len(r.qshare_queues)}
    if not q:
        return None
    fig, axes = plt.subplots(1, len(q), figsize=(6.6 * len(q), 3.4), squeeze=False)
    for ax, (label, r) in zip(axes[0], q.items(), strict=True):
        assert r.qshare_queues is not None
        port = busiest_port(r.qshare_queues)
        w = tenant_weights(r.qshare_queues, port)
        end = float(r.summary.get("simulated_s", w["time_s"].max()))
        # every push on the port, a gap where a tenant is not on it (it departed)
        grid = w.pivot_table(index="time_s", columns="tenant", values="weight", sort=False)
        grid = grid.reindex(sorted(w["time_s"].unique()))
        for i, name in enumerate(dict.fromkeys(w["tenant"])):
            ys = grid[name].to_list()
            xs = [*t(grid.index), t(end)]
            ax.plot(xs, [*ys, ys[-1]], drawstyle="steps-post", label=str(name),
                    **{**style(i), "ms": 3})
        ax.set_title(f"{label}: {port}", fontsize=9)
        ax.set_xlabel(t.label())
        ax.set_ylabel("weight of the tenant's queue")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        legend_outside(ax, below=True, title="tenant", ncol=6)
    return fig


def tenant_summary(r: Results) -> pd.DataFrame:
    """Per tenant: when it was first and last bound, the share of the updates it was
    dedicated at, its mean U-factor and its state at its last update (``departed``
    if it left before the run's last one)."""
    b = r.qshare_tenants
    if b is None or not len(b):
        return pd.DataFrame()
    end = b["time_s"].max()
    g = b.groupby("tenant", sort=False, observed=True)
    last = g.last()

    def state(t: str) -> str:
        if last.loc[t, "time_s"] < end:
            return "departed"
        return "dedicated" if last.loc[t, "dedicated"] else "shared"

    return pd.DataFrame({
        "tenant": list(g.groups),
        "bound from (s)": g["time_s"].min().to_numpy(),
        "dedicated (% of updates)": (g["dedicated"].mean() * 100).to_numpy(),
        "mean U-factor": g["u_factor"].mean().to_numpy(),
        "at the end": [state(t) for t in g.groups],
        "DSCP at the end": [int(last.loc[t, "dscp"]) for t in g.groups],
    })
