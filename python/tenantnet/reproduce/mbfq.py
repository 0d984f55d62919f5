"""MBFQ (To, Padhye, Varghese, Firestone, HotMiddlebox 2016), §5.2 and Fig. 6.

Set-up (§5.2): one host with a 10 Gb/s NIC shares 9.5 Gb/s among four VMs with
guarantees VM1 100 Mb/s, VM2 100 Mb/s, VM3 1 Gb/s, VM4 3 Gb/s (weights 1:1:10:30);
every VM sends backlogged TCP to an external host. Phases: (1) VM1 and VM2;
(2) VM3 joins; (3) VM4 joins; (4) VM1's guarantee becomes 1 Gb/s; (5) only VM2
sends. The paper's phases last 50-70 s; MBFQ settles within a second, so phases
here last `phase_s` (2 s by default) and the steady state is the mean over the
second half of each phase.

Where the paper is silent: the link delay (5 µs per link here), the number of TCP
connections per VM (one), the TCP flavour (NewReno with Windows' 200 ms minimum
RTO) and the vswitch queue and bucket sizes (the `[vswitch]` defaults). The
throughput shown is each VM's transmit rate past its vswitch, as in Fig. 6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from ..jobs import progress
from ..measure.analysis import by_scope, window
from ..report.plotting import legend_outside, mark_times, plain_log_ticks, save_csv, save_png, style
from ..sim.api import run
from .claims import claim, frame

VMS = ("VM1", "VM2", "VM3", "VM4")
GUARANTEE_GBPS = {"VM1": 0.1, "VM2": 0.1, "VM3": 1.0, "VM4": 3.0}
CAPACITY_GBPS = 9.5
PHASE4_VM1_GBPS = 1.0

PAPER: dict[int, dict[str, float]] = {
    1: {"VM1": 4.75, "VM2": 4.75},
    2: {"VM1": 0.792, "VM2": 0.792, "VM3": 7.92},
    3: {"VM1": 0.226, "VM2": 0.226, "VM3": 2.26, "VM4": 6.79},
}
"""Steady-state throughput per VM (Gb/s) that §5.2 reports for phases 1-3."""

ACTIVE = {1: ("VM1", "VM2"), 2: ("VM1", "VM2", "VM3"), 3: VMS, 4: VMS, 5: ("VM2",)}


def _t(s: float) -> str:
    return f"{round(s * 1e6)}us"


def fig6_scenario(policy: str = "mbfq", phase_s: float = 2.0,
                  stops: dict[str, float] | None = None,
                  starts: dict[str, float] | None = None,
                  phases: int = 5) -> dict[str, Any]:
    """The §5.2 experiment as a scenario dictionary. `starts`/`stops` (seconds)
    replace the phase schedule for the VMs they name."""
    p = phase_s
    start = {"VM1": 0.0, "VM2": 0.0, "VM3": p, "VM4": 2 * p} | (starts or {})
    stop = {"VM1": 4 * p, "VM3": 4 * p, "VM4": 4 * p} | (stops or {})
    tenants = []
    workloads: list[dict[str, Any]] = []
    for vm in VMS:
        spec: dict[str, Any] = {"name": vm, "host": "h0",
                                "guarantee": f"{round(GUARANTEE_GBPS[vm] * 1e3)}Mbps"}
        if vm == "VM1" and phases >= 4:
            new = f"{round(PHASE4_VM1_GBPS * 1e3)}Mbps"
            spec["changes"] = [{"at": _t(3 * p), "guarantee": new}]
        tenants.append({"name": vm, "vms": [spec]})
        w: dict[str, Any] = {"kind": "long_lived", "tenant": vm, "src": vm, "dst": "h1",
                             "start": _t(start[vm])}
        if vm in stop and stop[vm] < phases * p:
            w["stop"] = _t(stop[vm])
        workloads.append(w)
    return {
        "name": f"mbfq-fig6-{policy}",
        "simulation": {"duration": _t(phases * p), "seed": 1},
        "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "5us"},
        "network": {"buffer": "1MB"},
        "transport": {"protocol": "tcp", "min_rto": "200ms", "initial_rto": "200ms"},
        "vswitch": {"policy": policy, "capacity": f"{CAPACITY_GBPS}Gbps"},
        "tenants": tenants,
        "workloads": workloads,
        "output": {"sample_interval": "100ms", "throughput": ["vm"], "queues": False},
    }


def vm_series(r: Any) -> pd.DataFrame:
    """Per-VM transmit rate (Gb/s) per 100 ms sample, one column per VM, plus total."""
    s = by_scope(r.throughput, "vm", only=VMS)
    s = s.fillna(0.0)
    s["total"] = s.sum(axis=1)
    s.columns.name = None
    return s.reset_index()


def steady_state(series: pd.DataFrame, phase_s: float, phases: int = 5) -> pd.DataFrame:
    """Mean rate per VM over the second half of each phase."""
    rows = []
    for k in range(1, phases + 1):
        lo, hi = (k - 0.5) * phase_s, k * phase_s
        win = window(series, lo, hi)
        rows.append({"phase": k, **{vm: float(win[vm].mean()) for vm in (*VMS, "total")}})
    return pd.DataFrame(rows)


def compare(steady: pd.DataFrame) -> pd.DataFrame:
    """Each published steady-state number (§5, Fig. 6) next to ours, and the phase 4 and
    5 claims, whose bounds are ours."""
    rows = []
    st = steady.set_index("phase")
    for phase, vals in PAPER.items():
        for vm, paper in vals.items():
            ours = float(st.loc[phase, vm])
            rows.append(claim(f"{vm}, Gb/s", round(ours, 6), paper=f"{paper:g}",
                              expected="the paper's ± 5 %", ok=abs(ours / paper - 1) <= 0.05,
                              note=f"error {(ours / paper - 1) * 100:+.2f} %", phase=phase))
    v1, v3 = float(st.loc[4, "VM1"]), float(st.loc[4, "VM3"])
    rows.append(claim("VM1 = VM3 (both guaranteed 1 Gb/s), VM1's Gb/s", round(v1, 6),
                      expected=f"VM3's {v3:.4g} ± 5 %", ok=abs(v1 / v3 - 1) <= 0.05,
                      note=f"VM1 {(v1 / v3 - 1) * 100:+.2f} % off VM3", phase=4))
    v2 = float(st.loc[5, "VM2"])
    rows.append(claim("VM2 alone takes the link, Gb/s", round(v2, 6),
                      expected=f">= 90 % of {CAPACITY_GBPS:g}", ok=v2 >= 0.9 * CAPACITY_GBPS,
                      note=f"{(v2 / CAPACITY_GBPS - 1) * 100:+.2f} % off {CAPACITY_GBPS:g}",
                      phase=5))
    return frame(rows)


def fig6(policy: str = "mbfq", phase_s: float = 2.0) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """Runs Fig. 6 under `policy`: the rate series, the per-phase steady state, and
    the results (for `vm_rates`)."""
    r = run(fig6_scenario(policy, phase_s))
    series = vm_series(r)
    return series, steady_state(series, phase_s), r


def with_units(df: pd.DataFrame) -> pd.DataFrame:
    """Per-VM rate columns named with their unit, for the CSV files."""
    return df.rename(columns={c: f"{c}_gbps" for c in (*VMS, "total") if c in df.columns})


def reproduce_fig6(out: Path, phase_s: float = 2.0) -> list[Path]:
    """Writes mbfq_fig6.png, the rate series and allocations (CSV) for MBFQ and
    static reservation, and the comparison with the paper."""

    out.mkdir(parents=True, exist_ok=True)
    runs = {name: fig6(name, phase_s)
            for name in progress.steps(["mbfq", "static"], lambda n: f"Fig. 6: {n}")}
    series = pd.concat([s.assign(policy=n) for n, (s, _, _) in runs.items()])
    steady = pd.concat([st.assign(policy=n) for n, (_, st, _) in runs.items()])
    rates = runs["mbfq"][2].vm_rates
    check = compare(runs["mbfq"][1])
    written = [save_csv(df, out / name) for name, df in (
        ("mbfq_fig6_series.csv", with_units(series)), ("mbfq_fig6_phases.csv",
                                                        with_units(steady)),
        ("mbfq_fig6_allocations.csv", rates), ("mbfq_fig6_vs_paper.csv", check))]
    fig, axes = plt.subplots(3, 1, figsize=(9, 9.5), sharex=True)
    titles = {"mbfq": "MBFQ: transmit rate per VM", "static": "static reservation"}
    for ax, (name, (s, _, _)) in zip(axes[:2], runs.items(), strict=True):
        for i, vm in enumerate(VMS):
            ax.plot(s["time_s"], s[vm], label=f"{vm} ({GUARANTEE_GBPS[vm]:g} Gb/s)",
                    drawstyle="steps-pre", **style(i))
        ax.plot(s["time_s"], s["total"], "k--", lw=1, label="total", drawstyle="steps-pre")
        ax.set_title(titles[name])
        ax.set_ylabel("transmit rate (Gb/s)")
        ax.set_ylim(bottom=0)
    for i, (vm, g) in enumerate(rates.groupby("vm", sort=True)):
        axes[2].plot(g["time_s"], g["allocated_gbps"].astype(float), label=str(vm),
                     drawstyle="steps-post", **style(i))
    axes[2].set_yscale("log")
    plain_log_ticks(axes[2].yaxis)
    axes[2].set_title("MBFQ allocated rate AR per macroscheduler interval "
                      "(gaps: microschedulers off)")
    axes[2].set_ylabel("allocated rate (Gb/s, log scale)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        mark_times(ax, [k * phase_s for k in range(1, 5)], "phase boundary")
        ax.grid(alpha=0.3)
        legend_outside(ax, title="VM (its first guarantee)" if ax is axes[0] else None)
    written.append(save_png(fig, out / "mbfq_fig6.png"))
    return written
