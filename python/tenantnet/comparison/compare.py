"""``tenantnet compare`` and :func:`tenantnet.compare`: one scenario under every
scheme that applies (or those asked for), each under several seeds, run in parallel
over the machine's cores, measured by one yardstick (:mod:`tenantnet.measure.metrics`) and
judged with statistics (:mod:`tenantnet.measure.verdicts`).

A scheme is judged only where it acted (:mod:`tenantnet.measure.engagement`): one that never
engaged in a run is the scenario without it, and its row says so. Each run's full
results go to ``OUT/<scheme>/seed-<N>/``; beside them ``verdicts``, ``runs`` (a row
per scheme and seed), ``tenants``, ``intervals`` and ``latency`` as Parquet and CSV,
and ``report.html``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SEED_MAX, ScenarioError
from ..jobs import progress
from ..jobs.outdir import write_parquet
from ..jobs.pool import pool_map, workers
from ..measure import metrics, stats
from ..measure.defaults import DEFAULT_SEEDS as DEFAULT_SEEDS
from ..measure.engagement import engagement
from ..report.plotting import save_csv
from ..sim import schemes
from ..sim.api import run
from ..sim.eta import OVERHEAD, Eta, trial
from ..sim.scenario import MemoryBudget, Scenario
from .outcome import Outcome
from .report import write_report
from .tables import Judged

SCOPES = ("tenant", "link", "vm", metrics.RATE_SCOPE)
"""Throughput samples every measure needs; added to the scenario's own."""


def instrumented(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` recording what the measures need: tenant, link, VM and VM data
    throughput."""
    d = dict(data)
    out = dict(d.get("output", {}))
    have = list(out.get("throughput", []))
    out["throughput"] = have + [s for s in SCOPES if s not in have]
    d["output"] = out
    return d


def run_scheme(data: Mapping[str, Any], spec: str, seed: int | None = None,
               settle: float = metrics.SETTLE_S, out: Path | None = None,
               memory_budget: MemoryBudget = None, source: str = "<scenario>",
               base_dir: str = ".") -> Outcome:
    """Runs `data` under the scheme `spec` and measures it; writes the run's results
    into `out` when given. A scheme that does not apply, or a run that fails (a scenario
    error, or any other, which is a bug), gives an :class:`Outcome` saying why: the
    comparison goes on, as a sweep records a failed point and goes on."""
    try:
        applied = schemes.apply(instrumented(data), spec, base_dir)
    except ScenarioError as e:  # "scheme X does not apply: why"
        return Outcome(spec, seed, error=str(e))
    try:
        return measured_run(applied, spec, seed, settle, out, memory_budget, source,
                             base_dir)
    except ScenarioError as e:
        return Outcome(spec, seed, error=f"failed: {e}")
    except Exception as e:  # one run's failure is its row, not the comparison's end
        return Outcome(spec, seed, error=f"failed: internal error ({type(e).__name__}: "
                                         f"{e}); this is a bug in tenantnet, please report it")


def measured_run(applied: dict[str, Any], spec: str, seed: int | None, settle: float,
                  out: Path | None, memory_budget: MemoryBudget, source: str,
                  base_dir: str) -> Outcome:
    start = time.monotonic()
    res = run(Scenario.from_dict(applied, source, base_dir), seed=seed,
              memory_budget=memory_budget)
    wall = time.monotonic() - start
    start = time.monotonic()
    if out is not None:
        res.write(out)
    written = time.monotonic() - start
    start = time.monotonic()
    m = metrics.measure(res, applied.get("workloads", []), settle)
    eng = engagement(spec, res, applied)
    return Outcome(spec, int(res.summary["seed"]), m, engagement=eng, wall_s=wall,
                   write_s=written, analysis_s=time.monotonic() - start)


def applicable(data: Mapping[str, Any], base_dir: str = ".") -> tuple[list[str], dict[str, str]]:
    """The schemes that apply to `data`, and why each other one does not."""
    ok, why = [], {}
    for name, s in schemes.SCHEMES.items():
        reason = schemes.why_not(s, data, base_dir)
        if reason:
            why[name] = reason
        else:
            ok.append(name)
    return ok, why


def seed_list(scenario: Scenario, seeds: int | Sequence[int], first: int | None) -> list[int]:
    """The seeds to run: `seeds` itself if a list, else that many consecutive ones
    from `first` (default the scenario's own seed)."""
    if not isinstance(seeds, int):
        return [int(s) for s in seeds]
    start = first if first is not None else int(scenario.data().get("simulation", {})
                                                 .get("seed", 1))
    return [(start + i) % (SEED_MAX + 1) for i in range(seeds)]


@dataclass
class Comparison(Judged):
    """What :func:`compare` returns: every run's outcome and the tables built from
    them (``verdicts`` first), which it writes with the report."""

    def write(self, out: str | Path) -> Path:
        """Writes the tables (Parquet and CSV) and ``report.html`` into `out` (which
        the runs' folders may already be in); the report's path."""
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        for name in ("verdicts", "runs", "tenants", "intervals", "latency"):
            df = self._table(name)
            write_parquet(df, d / f"{name}.parquet")
            save_csv(df, d / f"{name}.csv")
        return write_report(self, d)


def compare(scenario: Scenario, specs: Sequence[str] | None = None,
            out: Path | None = None, jobs: int | None = None,
            seeds: int | Sequence[int] = DEFAULT_SEEDS, seed: int | None = None,
            settle: float = metrics.SETTLE_S,
            memory_budget: MemoryBudget = None) -> Comparison:
    """Runs `scenario` under each scheme of `specs` (default: every one that
    applies; those that do not are listed with the reason) and each seed, `jobs`
    runs at a time; each run's results go to ``out/<scheme>/seed-<N>/`` when `out`
    is given."""
    data = scenario.data()
    base = str(scenario.base_dir)
    if not data.get("workloads"):
        raise ScenarioError(f"{scenario.source}: no [[workloads]]: compare judges how each "
                            "scheme shares the tenants' traffic, and this scenario has "
                            "none (see the Scenarios guide: Workloads)")
    if specs is None:
        specs, why = applicable(data, base)
    else:
        why = {}
        for spec in specs:  # fail before any run: an unknown, conflicting or inapplicable one
            schemes.apply(instrumented(data), spec, base)
    seeds_run = seed_list(scenario, seeds, seed)
    source = scenario.source
    jobs_list = [(s, k) for s in specs for k in seeds_run]
    tasks = [(data, s, k, settle, out / s / f"seed-{k}" if out else None, memory_budget,
              source, base) for s, k in jobs_list]

    names = [f"{s} (seed {k})" for s, k in jobs_list]
    n = workers(jobs, len(tasks))
    eta = timed(data, specs, jobs_list, n, source, base)
    outcomes = pool_map(run_scheme, tasks, n, eta.label("compare") if eta else _label, names,
                        eta.finished if eta else None)
    return Comparison(scenario, seeds_run, outcomes, why, settle,
                      {s: schemes.choices(data, s) for s in specs})


def _label(done: int, total: int, now: list[str]) -> str:
    return f"compare: {done}/{total} runs done; running {', '.join(now)}"


def timed(data: Mapping[str, Any], specs: Sequence[str], jobs: Sequence[tuple[str, int]],
          n: int, source: str, base: str) -> Eta | None:
    """Where a command shows its progress: a trial of each scheme (:mod:`tenantnet.sim.eta`),
    the runs' estimate said up front, and the ETA to follow them; None otherwise."""
    if not progress.active() or not jobs:
        return None
    per: dict[str, float] = {}
    start = time.monotonic()
    for i, s in enumerate(specs, start=1):
        progress.step(f"compare: timing the start of each scheme's run ({i}/{len(specs)}): {s}")
        applied = schemes.apply(instrumented(data), s, base)
        speed, events = trial(applied, source, base, jobs[0][1])
        per[s] = speed * events * (1 + OVERHEAD)
    eta = Eta([f"{s} (seed {k})" for s, k in jobs], [per[s] for s, _ in jobs], n)
    seeds = len({k for _, k in jobs})
    progress.note(f"compare: {len(specs)} scheme{'s' if len(specs) != 1 else ''} x {seeds} "
                  f"seed{'s' if seeds != 1 else ''}: " + eta.up_front(
                      f"timed by a {time.monotonic() - start:.1f} s trial of the start of "
                      "each scheme's run"))
    return eta


def estimates(values: Mapping[str, Sequence[float]], reasons: Mapping[str, Sequence[str]],
              bounds: tuple[float, float]) -> dict[str, stats.Estimate]:
    """Each scheme's :class:`stats.Estimate` of its values over seeds."""
    return {s: stats.estimate(v, reasons[s], bounds) for s, v in values.items()}


def nan_if_missing(v: Any) -> float:
    return float(v) if v is not None and not (isinstance(v, float) and np.isnan(v)) \
        else np.nan


def bench(repeat: int, jobs: int = 2, seeds: int = DEFAULT_SEEDS) -> None:
    """``tenantnet bench compare``: the leaf-spine example under every scheme and
    `seeds` seeds on `jobs` workers, into a temporary folder, `repeat` times; one
    JSON line each. The runs' own timings split the workers' time into simulation,
    writing the runs' files and measuring them; the tables and the report are written
    after the last run, in this process."""
    example = Path(__file__).resolve().parents[3] / "examples" / "compare-leaf-spine.toml"
    if not example.is_file():
        raise ScenarioError(f"{example}: not found; the compare benchmark runs the "
                            "repository's example (run it from a clone)")
    sc = Scenario.from_file(example)
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            c = compare(sc, None, Path(tmp), jobs, seeds)
            runs = time.monotonic() - start
            c.write(Path(tmp))
            total = time.monotonic() - start
        ran = [o for o in c.outcomes if o.measures is not None]
        sim = sum(o.wall_s for o in ran)
        written = sum(o.write_s for o in ran)
        measured = sum(o.analysis_s for o in ran)
        busy = sim + written + measured
        # the workers' busy time shares the runs' wall time; the report's is its own
        analysis_wall = runs * measured / busy + (total - runs)
        print(json.dumps({
            "benchmark": "compare", "runs": len(c.outcomes), "workers": jobs,
            "wall_s": round(total, 3), "runs_wall_s": round(runs, 3),
            "report_wall_s": round(total - runs, 3), "simulation_s": round(sim, 3),
            "write_s": round(written, 3), "measure_s": round(measured, 3),
            "analysis_share": round(analysis_wall / total, 4)}), flush=True)
