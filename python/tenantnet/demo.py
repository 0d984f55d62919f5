"""``tenantnet demo``: the built-in two-tenant scenario under three vswitch
policies (no enforcement, static reservation, MBFQ), compared in one report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import progress
from .api import run
from .report import write_report
from .results import Results
from .scenario import Scenario
from .tables import vm_means

POLICIES = {"none": "no enforcement", "static": "static reservation", "mbfq": "MBFQ"}

WINDOWS = {"web idle (0.5-1 s)": (0.5, 1.0), "web active (1.5-2 s)": (1.5, 2.0),
           "web idle again (2.5-3 s)": (2.5, 3.0)}
"""Steady-state windows: web's flows run from 1 s to 2 s; MBFQ needs a few 100 ms
intervals to settle after each change, so each window is the second half of a phase."""

INTRO = (
    "Two tenants' VMs share the 10 Gb/s NICs of two hosts (h0, h1), sending to h2 and "
    "h3 with DCTCP. <b>analytics</b> (guarantee 3 Gb/s per VM) runs 8 bulk flows per VM "
    "all the time; <b>web</b> (guarantee 6 Gb/s per VM) sends one bulk flow per VM from "
    "1 s to 2 s. The same scenario runs three times with a different policy in every "
    "host's virtual switch: <b>no enforcement</b>, <b>static reservation</b> (each VM "
    "capped at its guarantee) and <b>MBFQ</b> (a macroscheduler resets each VM's token "
    "bucket every 100 ms from its measured send rate). What each tenant should see: "
    "its guarantee whenever it wants it, and the whole NIC when the other is idle. "
    "Each run's result files are in the folder named after its policy."
)


def vm_rates_by_window(r: Results) -> pd.DataFrame:
    """Mean transmit rate per VM of each tenant (Gb/s) in each window."""
    tenant = r.vms.set_index("vm")["tenant"]
    return pd.DataFrame({name: vm_means(r, lo, hi).groupby(tenant).mean()
                         for name, (lo, hi) in WINDOWS.items()})


def comparison(runs: dict[str, Results]) -> pd.DataFrame:
    """One row per policy: each tenant's rate per VM in each window, and verdicts on
    guarantees and work conservation."""
    rows = []
    for label, r in runs.items():
        w = vm_rates_by_window(r)
        g = r.vms.groupby("tenant")["guarantee_gbps"].first()
        active = list(WINDOWS)[1]
        idle = [k for k in WINDOWS if k != active]
        row: dict[str, object] = {"policy": label}
        for k in WINDOWS:
            row[f"analytics, {k} (Gb/s per VM)"] = round(float(w.loc["analytics", k]), 3)
        row[f"web, {active} (Gb/s per VM)"] = round(float(w.loc["web", active]), 3)
        row["guarantees met"] = bool(
            (w[active] >= 0.95 * g.reindex(w.index)).all())
        nic = 10.0
        row["work-conserving"] = bool(all(w.loc["analytics", k] >= 0.9 * nic for k in idle))
        rows.append(row)
    return pd.DataFrame(rows)


def run_demo(out: Path) -> Path:
    """Runs the demo scenario under each policy, writes each run's results into
    ``out/<policy>/`` and the comparison report into ``out/report.html``."""
    base = Scenario.builtin("demo")
    runs: dict[str, Results] = {}
    for policy, label in progress.steps(list(POLICIES.items()), lambda x: f"demo: {x[1]}"):
        res = run(base.with_overrides(vswitch={"policy": policy}))
        res.write(out / policy)
        runs[label] = res
    table = comparison(runs)
    table.to_csv(out / "comparison.csv", index=False)
    extra = ("<h2>Side by side</h2><p>Transmit rate per VM (Gb/s, mean over each window) "
             "and whether each policy delivers the guarantees while web is active and "
             "gives analytics the NIC (at least 9 Gb/s per VM) while web is idle.</p>"
             + str(table.to_html(index=False, float_format=lambda v: f"{v:.2f}", border=0,
                                 classes="data")))
    return write_report(runs, out / "report.html",
                        "tenantnet demo: two tenants, three vswitch policies",
                        INTRO, extra=extra)
