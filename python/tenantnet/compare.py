"""``tenantnet compare``: one scenario under every scheme that applies (or those
asked for), run in parallel over the machine's cores, measured by one yardstick
(:mod:`tenantnet.metrics`) and written as tables and a verdict-first report.

Each run's full results go to ``OUT/<scheme>/``; beside them ``verdicts``,
``tenants``, ``intervals`` and ``latency`` as Parquet and CSV, a row per scheme
(and tenant, interval or size bucket), and ``report.html``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd

from . import metrics, progress, schemes
from .errors import ScenarioError
from .scenario import MemoryBudget, Scenario

SCOPES = ("tenant", "link", "vm")
"""Throughput samples every measure needs; added to the scenario's own."""


@dataclass
class Outcome:
    """One scheme's run: its measures, or why it has none."""
    scheme: str
    measures: metrics.Measures | None = None
    error: str = ""
    """Why the scheme did not run ("does not apply: …") or failed."""
    wall_s: float = 0.0


def instrumented(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` recording what the measures need: tenant, link and VM throughput."""
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
    into `out` when given. A scheme that does not apply, or a run that fails with a
    scenario error, gives an :class:`Outcome` saying why."""
    import time

    from .api import run
    try:
        applied = schemes.apply(instrumented(data), spec, base_dir)
    except ScenarioError as e:  # "scheme X does not apply: why"
        return Outcome(spec, error=str(e))
    start = time.monotonic()
    try:
        res = run(Scenario.from_dict(applied, source, base_dir), seed=seed,
                  memory_budget=memory_budget)
    except ScenarioError as e:
        return Outcome(spec, error=f"failed: {e}")
    wall = time.monotonic() - start
    if out is not None:
        res.write(out)
    return Outcome(spec, metrics.measure(res, applied.get("workloads", []), settle),
                   wall_s=wall)


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


def workers(n: int | None, jobs: int) -> int:
    """How many processes to run `jobs` on: `n`, or one per core, at most `jobs`."""
    return max(1, min(n or os.cpu_count() or 1, jobs))


def pool_map(fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], n: int,
             label: Callable[[int, int, list[str]], str], names: Sequence[str],
             on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
    """``fn(*job)`` for every job, on `n` fresh processes (one at a time in this
    one when `n` is 1), in the jobs' order; reports progress, and calls
    ``on_done(i, result)`` as each job finishes."""
    results: dict[int, Any] = {}

    def done(i: int, result: Any) -> None:
        results[i] = result
        if on_done is not None:
            on_done(i, result)

    if n == 1:
        for i, job in enumerate(jobs):
            progress.step(label(i, len(jobs), [names[i]]))
            done(i, fn(*job))
        return [results[i] for i in range(len(jobs))]
    with ProcessPoolExecutor(n, mp_context=get_context("spawn")) as pool:
        running: dict[Future[Any], int] = {pool.submit(fn, *job): i
                                           for i, job in enumerate(jobs)}
        while running:
            progress.step(label(len(results), len(jobs),
                                sorted(names[i] for i in running.values())[:n]))
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                done(running.pop(fut), fut.result())
    return [results[i] for i in range(len(jobs))]


def compare(scenario: Scenario, specs: Sequence[str] | None = None,
            out: Path | None = None, jobs: int | None = None, seed: int | None = None,
            settle: float = metrics.SETTLE_S,
            memory_budget: MemoryBudget = None) -> list[Outcome]:
    """Runs `scenario` under each scheme of `specs` (default: every one that
    applies; those that do not are listed with the reason), `jobs` at a time."""
    data = scenario.data()
    base = str(scenario.base_dir)
    if specs is None:
        specs, why = applicable(data, base)
    else:
        why = {}
        for spec in specs:  # fail before any run: an unknown, conflicting or inapplicable one
            schemes.apply(instrumented(data), spec, base)
    source = scenario.source
    tasks = [(data, s, seed, settle, out / s if out else None, memory_budget, source, base)
             for s in specs]

    def label(done: int, total: int, now: list[str]) -> str:
        return f"compare: {done}/{total} schemes done; running {', '.join(now)}"

    outcomes = pool_map(run_scheme, tasks, workers(jobs, len(tasks)), label, list(specs))
    return outcomes + [Outcome(name, error=f"does not apply: {r}") for name, r in why.items()]


def verdict_table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """A row per scheme: the four verdicts (✔/✘ with the figure, — where nothing
    was there to judge), then every figure, or why the scheme has none."""
    rows = []
    figures = [o.measures.row for o in outcomes if o.measures is not None]
    for o in outcomes:
        row: dict[str, Any] = {"scheme": o.scheme}
        if o.measures is None:
            row.update({p: "" for p in metrics.VERDICTS})
            row["note"] = o.error
        else:
            row.update({p: metrics.verdict(o.measures.row, p, figures)
                        for p in metrics.VERDICTS})
            row["note"] = ""
            row.update(o.measures.row)
            row["wall_s"] = o.wall_s
        rows.append(row)
    return pd.DataFrame(rows)


def stacked(outcomes: Sequence[Outcome], table: str) -> pd.DataFrame:
    """One measures table of every scheme that ran, a ``scheme`` column first."""
    parts = [getattr(o.measures, table).assign(scheme=o.scheme) for o in outcomes
             if o.measures is not None]
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True)
    return df[["scheme", *[c for c in df.columns if c != "scheme"]]]


def write(outcomes: Sequence[Outcome], out: Path, scenario: Scenario,
          settle: float) -> Path:
    """Writes the tables (Parquet and CSV) and ``report.html`` into `out`."""
    from .plotting import save_csv
    from .report_compare import write_report
    out.mkdir(parents=True, exist_ok=True)
    tables = {"verdicts": verdict_table(outcomes)}
    for name in ("tenants", "intervals", "latency"):
        tables[name] = stacked(outcomes, name)
    for name, df in tables.items():
        df.to_parquet(out / f"{name}.parquet", index=False)
        save_csv(df, out / f"{name}.csv")
    return write_report(tables, outcomes, out, scenario, settle)
