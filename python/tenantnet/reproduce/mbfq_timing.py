"""MBFQ's timing questions (To et al., HotMiddlebox 2016): §5.1's interval T against
the spread of the measured send rate (Fig. 5), and §5.3's ramp-up of a VM alone and
beside a full link (Fig. 7).

**Fig. 5** (§5.1): one VM sends over 32 TCP connections, its application generating
7.2 Gb/s; only MBFQ's measurement runs. The send rate SR is logged over 100 intervals
for T from 15 to 1000 ms and its standard deviation plotted against T; the paper finds
60-100 ms brings it to 5 %. tenantnet has no application-paced TCP source, so the
application's 7.2 Gb/s is a token bucket at the VM (static reservation at 7.2 Gb/s,
the vswitch default's bucket): the 32 connections are backlogged behind it. SR is the
VM's transmit rate past its vswitch, what MBFQ measures, sampled every 5 ms in one run
and averaged over windows of T after the first second. The run lasts 21 s: 100
intervals for T up to 200 ms, fewer for longer T (the table gives the count).

**Fig. 7** (§5.3): VM3 (1 Gb/s, weight 10) starts on an idle link (standalone) or
beside VM1 and VM2 (100 Mb/s each, weight 1), which already fill the 9.5 Gb/s
(sharing), with MBFQ at T = 100 ms. The paper finds VM3 reaches most of its bandwidth
(7 Gb/s) in about the same time in both, and its steady state about 15 s later when
sharing. Fig. 6's set-up otherwise (`mbfq.fig6_scenario`), 10 ms samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..jobs import progress
from ..measure.analysis import window
from ..report.plotting import finish, mark_times, save_csv, save_png, style
from ..sim.api import run
from .claims import claim, frame
from .mbfq import fig6_scenario, vm_series

FIG5_T_MS = (15, 30, 60, 100, 200, 500, 1000)
FIG5_DURATION_S = 21.0
FIG5_SAMPLE_MS = 5
FIG5_APP_GBPS = 7.2
FIG5_CONNECTIONS = 32

FIG7_START_S = 1.0
FIG7_DURATION_S = 4.0
FIG7_SAMPLE_S = 0.01
FIG7_MOST_GBPS = 7.0
""""Most of its bandwidth (up to 7Gbps)" (§5.3)."""


def fig5_scenario(duration_s: float = FIG5_DURATION_S) -> dict[str, Any]:
    """One VM, 32 backlogged TCP connections paced to 7.2 Gb/s at the VM."""
    return {
        "name": "mbfq-fig5",
        "simulation": {"duration": f"{duration_s:g}s", "seed": 1},
        "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "5us"},
        "network": {"buffer": "1MB"},
        "transport": {"protocol": "tcp", "min_rto": "200ms", "initial_rto": "200ms"},
        "vswitch": {"policy": "static"},
        "tenants": [{"name": "T", "vms": [{"name": "VM", "host": "h0",
                                           "guarantee": f"{FIG5_APP_GBPS:g}Gbps"}]}],
        "workloads": [{"kind": "long_lived", "tenant": "T", "src": "VM", "dst": "h1",
                       "flows_per_pair": FIG5_CONNECTIONS}],
        "output": {"sample_interval": f"{FIG5_SAMPLE_MS}ms", "throughput": ["vm"],
                   "queues": False},
    }


def spread(rate: pd.Series, sample_ms: int, t_ms: tuple[int, ...] = FIG5_T_MS,
           intervals: int = 100) -> pd.DataFrame:
    """SR over windows of T (ms) from the `sample_ms` samples of `rate` (Gb/s, the first
    second left out: slow start), at most `intervals` windows each: mean, standard
    deviation and the deviation as a percentage of the mean."""
    r = rate.to_numpy()[round(1000 / sample_ms):]
    rows = []
    for t in t_ms:
        k = t // sample_ms
        n = min(intervals, len(r) // k)
        sr = r[: n * k].reshape(n, k).mean(axis=1)
        rows.append({"t_ms": t, "intervals": n, "mean_gbps": float(sr.mean()),
                     "std_gbps": float(sr.std()),
                     "std_pct": float(sr.std() / sr.mean() * 100)})
    return pd.DataFrame(rows)


def fig5_points(duration_s: float = FIG5_DURATION_S) -> pd.DataFrame:
    """The spread of SR against T."""
    for _ in progress.steps(["run"], lambda _: f"Fig. 5: one VM, {duration_s:g} s"):
        r = run(fig5_scenario(duration_s))
    tp = r.throughput[r.throughput["scope"] == "vm"].sort_values("time_s")
    return spread(tp["gbps"].reset_index(drop=True), FIG5_SAMPLE_MS)


def fig5_compare(pts: pd.DataFrame) -> pd.DataFrame:
    """§5.1's finding beside ours."""
    p = pts.set_index("t_ms")["std_pct"]
    at = float(p[[60, 100]].max())
    return frame([
        claim("standard deviation of SR at T = 60-100 ms, % of its mean", round(at, 3),
              paper='"A value of T between 60 - 100ms reduces standard deviation of SR '
              'to 5%"', expected="<= 5 %", ok=at <= 5),
        claim("standard deviation of SR at T = 15 ms, % of its mean", round(float(p[15]), 3),
              paper="", expected="> 5 % (what makes a short T inaccurate)",
              ok=bool(p[15] > 5),
              differs="a simulated host sends as its window and bucket allow, without a "
              "real host's scheduling and NIC burstiness (Fig. 2's); TCP's own burstiness "
              "behind a token bucket leaves SR nearly constant at any T"),
    ])


def fig7_scenario(sharing: bool) -> dict[str, Any]:
    """VM3 starting at 1 s, alone or beside backlogged VM1 and VM2."""
    far = 10 * FIG7_DURATION_S
    starts = {"VM3": FIG7_START_S, "VM4": far} | ({} if sharing else {"VM1": far, "VM2": far})
    d = fig6_scenario("mbfq", phase_s=FIG7_DURATION_S, starts=starts, phases=1)
    d["name"] = f"mbfq-fig7-{'sharing' if sharing else 'standalone'}"
    d["output"]["sample_interval"] = f"{round(FIG7_SAMPLE_S * 1e3)}ms"
    return d


def first_at(series: pd.DataFrame, level: float) -> float:
    """Seconds from VM3's start to its first sample at or above `level` Gb/s."""
    after = window(series[series["VM3"] >= level], FIG7_START_S)
    return float(after["time_s"].iloc[0] - FIG7_START_S) if len(after) else float("nan")


def fig7_points() -> pd.DataFrame:
    """VM3's rate every 10 ms in both cases."""
    out = []
    for case in progress.steps(["standalone", "sharing"], lambda c: f"Fig. 7: {c}"):
        s = vm_series(run(fig7_scenario(case == "sharing")))
        out.append(s.assign(case=case))
    return pd.concat(out, ignore_index=True)


def fig7_compare(s: pd.DataFrame) -> pd.DataFrame:
    """§5.3's findings beside ours: the time to 7 Gb/s, and to 95 % of the steady
    state (VM3's mean over the last second)."""
    t: dict[str, tuple[float, float]] = {}
    for case, g in s.groupby("case"):
        steady = float(window(g, FIG7_DURATION_S - 1)["VM3"].mean())
        t[str(case)] = (first_at(g, FIG7_MOST_GBPS), first_at(g, 0.95 * steady))
    (most_a, steady_a), (most_s, steady_s) = t["standalone"], t["sharing"]
    ratio = max(most_a, most_s) / max(min(most_a, most_s), FIG7_SAMPLE_S)
    return frame([
        claim("time to 7 Gb/s, sharing over standalone", round(ratio, 2),
              paper='"about the same amount of time in both scenarios"',
              expected="<= 2", ok=bool(np.isfinite(ratio) and ratio <= 2),
              note=f"ours: standalone {most_a:.2f} s, sharing {most_s:.2f} s",
              differs="MBFQ grants VM3 its fair share only after three intervals of "
              "requests (0.3 s), while alone the link is its from the start; the paper's "
              "times are set by the VM's TCP, which here ramps in milliseconds"),
        claim("extra time to the steady state when sharing, s",
              round(steady_s - steady_a, 2), paper='"an additional 15s"',
              expected="> 0", ok=steady_s > steady_a,
              note=f"ours: standalone {steady_a:.2f} s, sharing {steady_s:.2f} s"),
    ])


def reproduce_fig5(out: Path, duration_s: float = FIG5_DURATION_S) -> list[Path]:
    """Writes mbfq_fig5.png, the spread of SR per T (CSV) and the comparison."""

    out.mkdir(parents=True, exist_ok=True)
    pts = fig5_points(duration_s)
    written = [save_csv(pts, out / "mbfq_fig5.csv"),
               save_csv(fig5_compare(pts), out / "mbfq_fig5_vs_paper.csv")]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(pts["t_ms"], pts["std_pct"], label="tenantnet", **(style(0) | {"markevery": 1}))
    ax.axhline(5, color="k", ls=":", lw=1, label="paper: 5 % at T = 60-100 ms")
    ax.set_xscale("log")
    ax.set_xticks(list(FIG5_T_MS), [str(t) for t in FIG5_T_MS])
    ax.set_ylim(-0.3, max(6.0, float(pts["std_pct"].max()) * 1.2))
    ax.text(0.02, 0.5, f"tenantnet: at most {pts['std_pct'].max():.3f} % at any T (a token "
            "bucket paces the VM;\nsimulated hosts have no scheduling or NIC jitter)",
            transform=ax.transAxes, fontsize=8)
    finish(ax, f"MBFQ Fig. 5: one VM, {FIG5_CONNECTIONS} TCP connections at "
           f"{FIG5_APP_GBPS:g} Gb/s", "macroscheduler interval T (ms, log scale)",
           "standard deviation of SR (% of its mean)")
    written.append(save_png(fig, out / "mbfq_fig5.png"))
    return written


def reproduce_fig7(out: Path) -> list[Path]:
    """Writes mbfq_fig7.png, VM3's rate in both cases (CSV) and the comparison."""

    out.mkdir(parents=True, exist_ok=True)
    s = fig7_points()
    written = [save_csv(s.rename(columns={c: f"{c}_gbps" for c in s.columns
                                          if c.startswith("VM") or c == "total"}),
                        out / "mbfq_fig7.csv"),
               save_csv(fig7_compare(s), out / "mbfq_fig7_vs_paper.csv")]
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, (case, g) in enumerate(s.groupby("case", sort=False)):
        ax.plot(g["time_s"] - FIG7_START_S, g["VM3"], label=f"VM3, {case}",
                drawstyle="steps-pre", **style(i))
    ax.axhline(FIG7_MOST_GBPS, color="grey", ls=":", lw=1, label="7 Gb/s")
    mark_times(ax, [0.3], "three intervals")
    ax.set_xlim(-0.2, FIG7_DURATION_S - FIG7_START_S)
    ax.set_ylim(bottom=0)
    finish(ax, "MBFQ Fig. 7: VM3's ramp-up alone and beside a full link (T = 100 ms)",
           "time since VM3 starts (s)", "VM3's transmit rate (Gb/s)")
    written.append(save_png(fig, out / "mbfq_fig7.png"))
    return written
