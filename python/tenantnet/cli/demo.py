"""``tenantnet demo``: the built-in two-tenant scenario under three vswitch
policies (no enforcement, static reservation, MBFQ), judged as ``tenantnet compare``
judges (:mod:`tenantnet.measure.verdicts`) over whole phases, with the time each tenant
takes to get what it is due after a change, in one report and on the terminal."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..comparison.compare import Comparison, run_scheme
from ..comparison.report import VERDICT_CSS, verdict_html
from ..jobs.pool import pool_map, workers
from ..measure.analysis import by_scope, window
from ..measure.metrics import SATISFIED
from ..measure.verdicts import WORK_CONSERVING
from ..report.runs import write_report
from ..sim.results import Results
from ..sim.scenario import Scenario
from .compare import print_verdicts

POLICIES = {"none": "no enforcement", "static": "static reservation", "mbfq": "MBFQ"}

PHASES = {"web idle (0-1 s)": (0.0, 1.0), "web active (1-2 s)": (1.0, 2.0),
          "web idle again (2-3 s)": (2.0, 3.0)}
"""The phases, judged whole: web's flows run from 1 s to 2 s. A scheme that needs
time to react (MBFQ's 100 ms macroscheduler) pays for it in its verdicts, and the
convergence table says how long it took."""

NIC_GBPS = 10.0

INTRO = (
    "Two tenants' VMs share the 10 Gb/s NICs of two hosts (h0, h1), sending to h2 and "
    "h3 with DCTCP. <b>analytics</b> (guarantee 3 Gb/s per VM) runs 8 bulk flows per VM "
    "all the time; <b>web</b> (guarantee 6 Gb/s per VM) sends one bulk flow per VM from "
    "1 s to 2 s. The same scenario runs three times with a different policy in every "
    "host's virtual switch: <b>no enforcement</b>, <b>static reservation</b> (each VM "
    "capped at its guarantee) and <b>MBFQ</b> (a macroscheduler resets each VM's token "
    "bucket every 100 ms from its measured send rate). What each tenant should see: "
    "its guarantee whenever it wants it, and the whole NIC when the other is idle. "
    "Every property is judged over every sampling interval of every phase, the first "
    "ones after a change included. Each run's result files are in the folder named "
    "after its policy."
)


def data_rates(r: Results, tenant: str) -> pd.DataFrame:
    """Each of the tenant's VMs' data rate (Gb/s) per sample: time_s × VM."""
    return by_scope(r.throughput, "vm_data", agg="sum", tenant=tenant)


def convergence(rates: pd.DataFrame, lo: float, hi: float, target: float) -> float:
    """Seconds from `lo` until every VM's data rate is at least `target` (Gb/s) and
    stays so up to `hi`: the end of the last sample in (lo, hi] that falls short
    (0 if none does; NaN if the last one does: it never got there)."""
    w = window(rates, lo, hi, col=None)
    short = w.index[(w < target).any(axis=1)]
    if not len(short):
        return 0.0
    if short[-1] >= w.index[-1] - 1e-9:
        return math.nan
    return round(float(short[-1]) - lo, 9)


CONVERGENCE = [("web", "1-2 s", "guarantee"), ("analytics", "0-1 s", "nic"),
               ("analytics", "2-3 s", "nic")]
"""(tenant, phase, what it is due): its guarantee, or the NIC's capacity while the
other tenant is idle (work conservation)."""

CONVERGED = " (s to converge)"
"""The suffix of the comparison's convergence columns."""


def _due(kind: str, guarantee: float) -> tuple[float, str]:
    if kind == "nic":
        return WORK_CONSERVING * NIC_GBPS, f"{WORK_CONSERVING:.0%} of the NIC"
    return SATISFIED * guarantee, f"{SATISFIED:.0%} of its {guarantee:g} Gb/s"


def comparison(runs: dict[str, Results], c: Comparison) -> pd.DataFrame:
    """One row per policy: the verdicts, each tenant's data rate per VM in each phase,
    and how long each tenant took to get what it was due."""
    v = c.verdicts.set_index("scheme")
    rows = []
    for policy, label in POLICIES.items():
        r = runs[label]
        row: dict[str, object] = {"policy": label}
        for p in ("guarantees", "work conservation", "fairness"):
            row[p] = v.loc[policy, p]
        g = r.vms.groupby("tenant")["guarantee_gbps"].first()
        for tenant in ("analytics", "web"):
            rates = data_rates(r, tenant)
            for name, (lo, hi) in PHASES.items():
                if tenant == "web" and name != "web active (1-2 s)":
                    continue
                w = window(rates, lo, hi, col=None)
                row[f"{tenant}, {name} (Gb/s per VM)"] = round(float(w.mean().mean()), 3)
        for tenant, span, kind in CONVERGENCE:
            target, what = _due(kind, float(g[tenant]))
            lo, hi = next(v for k, v in PHASES.items() if span in k)
            t = convergence(data_rates(r, tenant), lo, hi, target)
            row[f"{tenant}: {what}, {span}{CONVERGED}"] = t
        rows.append(row)
    return pd.DataFrame(rows)


def print_demo(table: pd.DataFrame) -> None:
    """The verdict table and the convergence times, as ``compare`` prints them."""
    v = table.rename(columns={"policy": "scheme"}).assign(note="", warning="",
                                                        **{"short-flow latency": ""})
    print_verdicts(v, "policy")
    print("judged over every interval of each whole phase, one run per policy\n")
    conv = [c for c in table.columns if c.endswith(CONVERGED)]
    names = [c.removesuffix(CONVERGED) for c in conv]
    first = max(len(n) for n in names)
    widths = [max(len(p), 6) for p in table["policy"]]
    print("time from the phase's start until the tenant has what it is due, for good:")
    print((" " * first + "  " + "  ".join(
        f"{p:<{w}}" for p, w in zip(table["policy"], widths, strict=True))).rstrip())
    for c, n in zip(conv, names, strict=True):
        print(f"{n:<{first}}  " + "  ".join(
            f"{_seconds(t):<{w}}" for t, w in zip(table[c], widths, strict=True)).rstrip())


def _seconds(t: float) -> str:
    return "never" if math.isnan(t) else f"{t:.2f} s"


def run_demo(out: Path) -> pd.DataFrame:
    """Runs the demo scenario under each policy (in parallel), writes each run's
    results into ``out/<policy>/``, the comparison into ``out/comparison.csv`` and
    the report into ``out/report.html``; the comparison table."""
    base = Scenario.builtin("demo")
    data = base.data()
    tasks = [(data, policy, None, 0.0, out / policy, None, base.source, ".")
             for policy in POLICIES]

    def label(done: int, total: int, now: list[str]) -> str:
        return f"demo: {done}/{total} runs done; running {', '.join(now)}"

    outcomes = pool_map(run_scheme, tasks, workers(None, len(tasks)), label,
                        list(POLICIES.values()))
    c = Comparison(base, [int(data["simulation"]["seed"])], outcomes, settle=0.0)
    runs = {label: Results.read(out / policy) for policy, label in POLICIES.items()}
    table = comparison(runs, c)
    table.to_csv(out / "comparison.csv", index=False)
    extra = (f"<style>{VERDICT_CSS}</style><h2>Verdicts</h2>" + verdict_html(c.verdicts.replace(
        {"scheme": POLICIES}), "policy") + "<p class=note>As <code>tenantnet compare</code> judges "
             "them, over every sampling interval of each whole phase (no settling time), "
             "one run per policy.</p><h2>Side by side</h2><p>Data rate per VM (Gb/s, "
             "mean over each phase) and the time each tenant took, from the phase's "
             "start, to get what it was due and keep it (never: not by the phase's "
             "end).</p>"
             + str(table.to_html(index=False, float_format=lambda v: f"{v:.2f}", border=0,
                                 classes="data", na_rep="never")))
    write_report(runs, out / "report.html",
                 "tenantnet demo: two tenants, three vswitch policies", INTRO, extra=extra)
    return table
