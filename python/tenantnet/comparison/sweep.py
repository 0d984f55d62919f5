"""``tenantnet sweep``: a scenario over the cartesian product of parameter values,
seeds and schemes, on a local process pool or a Ray cluster, measured
as ``tenantnet compare`` measures (:mod:`tenantnet.measure.metrics`).

A grid is a TOML file::

    seeds = [1, 2, 3]                    # optional: the scenario's own seed
    schemes = ["none", "mbfq"]           # optional: every scheme that applies
    [parameters]                         # any scenario key by its dotted path
    "network.buffer" = ["200KB", "400KB"]
    "workloads[2].load" = [0.04, 0.08]

Each finished point is written at once to ``OUT/points/<key>.parquet`` (key: a
digest of the scenario, the point's values, seed, scheme and ``settle``), so a sweep
that is interrupted and run again computes only the missing points; a point that fails is
a row with ``status = "failed"`` and its error, and is tried again on a rerun. A point
whose scheme never acted (:mod:`tenantnet.measure.engagement`) has ``status = "did not act"``:
its figures are kept but not averaged. At the end ``OUT/sweep.parquet`` (and
``.csv``) holds every point in grid order: a column per parameter, then seed, scheme,
status, error, whether and how the scheme acted, the measures and why any of the
verdicts' figures is missing; ``OUT/summary.parquet`` (and ``.csv``) holds, per
value of the parameters and scheme, each figure's mean over seeds with its 95 %
t-interval, how many points it rests on and why the others could not be counted;
``sweep.png`` plots them. Points of another grid or scenario left in ``OUT/points``
are removed, so the folder holds this sweep only.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import tempfile
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import _core
from ..errors import SEED_MAX, ScenarioError, check_type, is_whole
from ..jobs import progress
from ..jobs.outdir import OutputError, check_out, manifest, write_manifest, write_parquet
from ..jobs.pool import pool_map, workers
from ..jobs.raypool import ray_map, session
from ..measure import metrics, stats
from ..measure.engagement import engagement
from ..report.plotting import legend_outside, save_png, style
from ..sim import schemes
from ..sim.api import as_scenario, run
from ..sim.eta import OVERHEAD, Eta, trial
from ..sim.scenario import MemoryBudget, Scenario, memory_budget_bytes
from .compare import applicable, instrumented

DEFAULT_MAX_EVENTS = 1e12
"""The default limit on a sweep's events, all runs together (about two days)."""

GRID_KEYS = ("parameters", "seeds", "schemes")
_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")


@dataclass(frozen=True)
class Grid:
    """What a sweep runs: values per dotted key, seeds (None: the scenario's own)
    and schemes (None: every one that applies)."""
    parameters: dict[str, list[Any]]
    seeds: list[int | None]
    schemes: list[str] | None


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""
    index: int
    values: dict[str, Any]
    seed: int | None
    scheme: str


def _path(dotted: str, where: str) -> list[str | int]:
    """``workloads[2].load`` as ["workloads", 2, "load"]."""
    out: list[str | int] = []
    for part in dotted.split("."):
        m = _SEGMENT.match(part)
        if not m:
            raise ScenarioError(f"{where}: {dotted!r}: expected a dotted scenario key such "
                                "as \"network.buffer\" or \"workloads[2].load\"")
        out.append(m.group(1))
        out += [int(i) for i in re.findall(r"\[(\d+)\]", m.group(2))]
    return out


def set_key(data: dict[str, Any], dotted: str, value: Any, where: str = "grid") -> None:
    """Sets the scenario key `dotted` (tables are created; list entries must exist)."""
    path = _path(dotted, where)
    d: Any = data
    for i, k in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(k, int):
            if not isinstance(d, list) or k >= len(d):
                have = len(d) if isinstance(d, list) else 0
                raise ScenarioError(f"{where}: {dotted!r}: the scenario has {have} entries "
                                    f"there; expected an index below {have}")
            d = d[k]
        else:
            if not isinstance(d, dict):
                raise ScenarioError(f"{where}: {dotted!r}: {k!r} is not in a table")
            d = d.setdefault(k, [] if isinstance(nxt, int) else {})
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(d, list) or last >= len(d):
            raise ScenarioError(f"{where}: {dotted!r}: no entry {last} in the scenario")
        d[last] = copy.deepcopy(value)
    elif isinstance(d, dict):
        d[last] = copy.deepcopy(value)
    else:
        raise ScenarioError(f"{where}: {dotted!r}: {last!r} is not in a table")


def read_grid(path: Path) -> Grid:
    """A grid file, or an error naming the file, key and value."""
    where = str(path)
    try:
        g = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ScenarioError(f"{where}: cannot read the grid: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{where}: not a text file in UTF-8 (byte {e.start} is "
                            f"0x{e.object[e.start]:02x}): expected a grid in TOML") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{where}: not valid TOML: {e}") from None
    return grid_from(g, where)


def grid_from(g: Mapping[str, Any], where: str = "grid") -> Grid:
    """A :class:`Grid` from a dictionary shaped like the grid file."""
    for k in g:
        if k not in GRID_KEYS:
            raise ScenarioError(f"{where}: {k}: unknown key; expected {', '.join(GRID_KEYS)}")
    params = g.get("parameters", {})
    if not isinstance(params, Mapping):
        raise ScenarioError(f"{where}: parameters: expected a table of dotted keys")
    for k, v in params.items():
        _path(k, where)
        if not isinstance(v, list) or not v:
            raise ScenarioError(f"{where}: parameters.{json.dumps(k)} = {v!r}: expected a "
                                "non-empty list of values")
    seeds = g.get("seeds")
    if seeds is not None and (not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= SEED_MAX for s in seeds)):
        raise ScenarioError(f"{where}: seeds = {seeds!r}: expected a list of whole numbers "
                            "from 0 to 2^63 - 1")
    names = g.get("schemes")
    if names is not None:
        if not isinstance(names, list) or not names or not all(isinstance(s, str)
                                                               for s in names):
            raise ScenarioError(f"{where}: schemes = {names!r}: expected a list of scheme "
                                "names such as [\"none\", \"qshare+barberq\"]")
        for s in names:
            schemes.parse(s)
    return Grid({str(k): list(v) for k, v in params.items()},
                list(seeds) if seeds is not None else [None], names)


def points(grid: Grid, specs: Sequence[str]) -> list[Point]:
    """Every point, parameters varying slowest, then seeds, then schemes."""
    keys = list(grid.parameters)
    combos = itertools.product(*(grid.parameters[k] for k in keys))
    return [Point(i, dict(zip(keys, values, strict=True)), seed, spec)
            for i, (values, seed, spec) in enumerate(
                (v, s, c) for v in combos for s in grid.seeds for c in specs)]


def _key(scenario_text: str, p: Point, settle: float, version: str | None = None) -> str:
    """The point's file name: a digest of everything its row depends on, the simulator's
    version included (a sweep resumed after an upgrade runs its points again rather
    than mixing two simulators' results)."""
    blob = json.dumps([scenario_text, sorted(p.values.items()), p.seed, p.scheme, settle,
                       _core.version() if version is None else version],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _cell(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v


def run_point(data: Mapping[str, Any], p: Point, settle: float,
              memory_budget: MemoryBudget, source: str, base_dir: str) -> dict[str, Any]:
    """One point's row: its values, seed and scheme, then its measures, or
    ``status = "failed"`` and why."""
    row: dict[str, Any] = {"point": p.index, **{k: _cell(v) for k, v in p.values.items()},
                           "seed": p.seed, "scheme": p.scheme}
    try:
        d = copy.deepcopy(dict(data))
        for k, v in p.values.items():
            set_key(d, k, v, source)
        applied = schemes.apply(instrumented(d), p.scheme, base_dir)
        res = run(Scenario.from_dict(applied, source, base_dir), seed=p.seed,
                  memory_budget=memory_budget)
        m = metrics.measure(res, applied.get("workloads", []), settle)
        eng = engagement(p.scheme, res, applied)
    except Exception as e:  # one point's failure is its row, not the sweep's end
        return {**row, "status": "failed", "error": f"{type(e).__name__}: {e}"
                if not isinstance(e, ScenarioError) else str(e)}
    row.update({"seed": int(res.summary["seed"]),
                "status": "did not act" if eng.acted is False else "ok", "error": "",
                "acted": {True: "yes", False: "no", None: "baseline"}[eng.acted],
                "engagement": eng.evidence})
    row.update(m.row)
    row["missing"] = "; ".join(f"{k}: {why}" for k, why in metrics.missing(m.row).items())
    for t in m.tenants.itertuples():
        row[f"satisfied_pct[{t.tenant}]"] = t.settled_satisfied_pct
        row[f"throughput_gbps[{t.tenant}]"] = t.throughput_gbps
    return row


def _write_part(folder: Path, key: str, row: Mapping[str, Any]) -> None:
    """One point's row, atomically: a killed sweep leaves no half-written point."""
    tmp = folder / f".{key}.tmp"
    pd.DataFrame([row]).to_parquet(tmp, index=False)
    os.replace(tmp, folder / f"{key}.parquet")


def _done(folder: Path, key: str) -> bool:
    f = folder / f"{key}.parquet"
    return f.is_file() and pd.read_parquet(f, columns=["status"])["status"].iloc[0] != "failed"


NS_PER_EVENT = 150.0
"""Wall time per event for time estimates (as the core's footprint estimate)."""

RUN_OVERHEAD_EVENTS = 7e5
"""What a point costs beyond its simulation, in events (at the footprint's 150 ns
each: about 0.1 s to hand it to a worker, measure it and write its row, measured by
``tenantnet bench compare``)."""


def _grid_limit(n: int, per_run: float, max_events: float, where: str) -> None:
    """Refuses `n` runs of about `per_run` events each when they pass `max_events`."""
    total = n * (per_run + RUN_OVERHEAD_EVENTS)
    if total > max_events:
        hours = total * NS_PER_EVENT * 1e-9 / 3600
        raise ScenarioError(
            f"{where}: {n:,} runs of about {_count(per_run)} events each would process "
            f"about {_count(total)} events (about {hours:,.1f} hours on one core), more than "
            f"the limit of {_count(max_events)} events (raise it with --max-events, or make "
            "the grid smaller)")


def _count(x: float) -> str:
    """A large count as the core's estimates write it: 4.2e13."""
    return f"{x:.2g}".replace("e+0", "e").replace("e+", "e")


def _check(scenario: Scenario, grid: Grid, runs_per_combo: int,
           memory_budget: MemoryBudget, max_events: float) -> list[float]:
    """Every combination of values must make a valid scenario whose run fits the
    budget, and all the runs together the events limit: refused up front, the
    grid's size first (from its first point's estimate), before anything is
    validated further or written. Each combination's estimated events, in order."""
    data = scenario.data()
    keys = list(grid.parameters)
    combos = math.prod(len(grid.parameters[k]) for k in keys)
    where = f"grid ({combos:,} combinations x {runs_per_combo} seeds and schemes)"
    total = 0.0
    events = []
    for i, values in enumerate(itertools.product(*(grid.parameters[k] for k in keys))):
        if i % 20 == 0:
            progress.step(f"sweep: validating grid point {i + 1:,}/{combos:,}")
        d = copy.deepcopy(data)
        for k, v in zip(keys, values, strict=True):
            set_key(d, k, v, scenario.source)
        shown = ", ".join(f"{k} = {json.dumps(v, default=str)}"
                          for k, v in zip(keys, values, strict=True))
        try:
            fp = Scenario.from_dict(d, scenario.source, scenario.base_dir).validate(
                memory_budget=memory_budget)
        except ScenarioError as e:
            raise ScenarioError(f"grid point {shown}: {e}") from None
        if i == 0:
            _grid_limit(combos * runs_per_combo, fp.events, max_events, where)
        total += fp.events * runs_per_combo
        events.append(fp.events)
    _grid_limit(combos * runs_per_combo, total / (combos * runs_per_combo), max_events,
                where)
    return events


def _timed(data: dict[str, Any], todo: list[Point], events: list[float], per_combo: int,
           n: int, source: str, base: str) -> Eta | None:
    """Where a command shows its progress: a trial of each scheme on the scenario
    (:mod:`tenantnet.sim.eta`), each point's estimate (its combination's events at its
    scheme's speed) said up front, and the ETA to follow them; None otherwise."""
    if not progress.active():
        return None
    start = time.monotonic()
    speed: dict[str, float] = {}
    for s in dict.fromkeys(p.scheme for p in todo):
        progress.step(f"sweep: timing the start of a run under {s}")
        speed[s], _ = trial(schemes.apply(instrumented(data), s, base), source, base)
    secs = [speed[p.scheme] * events[p.index // per_combo] * (1 + OVERHEAD) for p in todo]
    eta = Eta([str(p.index) for p in todo], secs, n, "points")
    progress.note("sweep: " + eta.up_front(f"timed by a {time.monotonic() - start:.1f} s "
                                          "trial of the start of each scheme's run"))
    return eta


def _prepare(out: Path, force: bool) -> Path:
    """The points folder of `out`, after refusing a non-empty folder tenantnet did not
    write (unless `force`, which empties it); `out` gets a manifest at once, so an
    interrupted sweep's folder is known as one."""
    try:
        check_out(out, force)
    except OutputError as e:
        raise ScenarioError(str(e)) from None
    if force and out.is_dir() and manifest(out) is None:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    folder = out / "points"
    folder.mkdir(exist_ok=True)
    write_manifest(out, "tenantnet sweep", files=[])
    return folder


def _prune(out: Path, keep: set[str]) -> None:
    """Removes every file of `out` but `keep` (relative paths): points of another grid,
    outputs of an earlier sweep."""
    for f in sorted(out.rglob("*"), reverse=True):
        rel = f.relative_to(out).as_posix()
        if f.is_file() and rel not in keep and rel != "manifest.json":
            f.unlink()
        elif f.is_dir() and not any(f.iterdir()):
            f.rmdir()


def sweep(scenario: Scenario | str | Path, grid: Grid | str | Path | Mapping[str, Any],
          out: str | Path, specs: Sequence[str] | None = None, jobs: int | None = None,
          backend: str = "local", address: str | None = None,
          settle: float = metrics.SETTLE_S, memory_budget: MemoryBudget = None,
          force: bool = False, max_events: float = DEFAULT_MAX_EVENTS) -> pd.DataFrame:
    """Runs every point of `grid` not already in `out` (``local`` process pool of
    `jobs` workers, default one per core, or ``ray`` at `address`) and returns the
    whole dataset as a DataFrame, a row per point (module doc). `force` replaces a
    non-empty `out` that tenantnet did not write. A grid whose runs together would
    process more than `max_events` events (their estimates, plus what each point
    costs beside its simulation) is refused before anything runs or is written."""
    sc = as_scenario(scenario)
    check_type("jobs", jobs, jobs is None or is_whole(jobs, 1, 2**31),
               "a number of runs at a time (1 or more), or None")
    check_type("max_events", max_events, isinstance(max_events, int | float) and not
               isinstance(max_events, bool) and math.isfinite(max_events) and max_events > 0,
               "a positive number of events")
    check_type("settle", settle, isinstance(settle, int | float) and not isinstance(
        settle, bool) and 0 <= settle < 1e6, "seconds (a number from 0)")
    check_type("backend", backend, isinstance(backend, str), "local or ray")
    memory_budget_bytes(memory_budget)
    if not isinstance(grid, Grid | str | Path | Mapping):
        raise TypeError(f"grid = {grid!r}: expected a grid file's path, a dict shaped like "
                        f"one or a Grid, not {type(grid).__name__}")
    if not isinstance(out, str | Path):
        raise TypeError(f"out = {out!r}: expected a folder's path, not {type(out).__name__}")
    g = (grid if isinstance(grid, Grid) else read_grid(Path(grid))
         if isinstance(grid, str | Path) else grid_from(grid))
    if backend not in ("local", "ray"):
        raise ScenarioError(f"backend {backend!r}: expected local or ray")
    data = sc.data()
    base = str(sc.base_dir)
    names = list(specs or g.schemes or applicable(data, base)[0])
    for s in names:
        schemes.parse(s)
    events = _check(sc, g, len(g.seeds) * len(names), memory_budget, max_events)
    out = Path(out)
    folder = _prepare(out, force)
    pts = points(g, names)
    keys = [_key(sc.text, p, settle) for p in pts]
    todo = [p for p, k in zip(pts, keys, strict=True) if not _done(folder, k)]
    progress.step(f"sweep: {len(pts) - len(todo)} of {len(pts)} points already done")
    tasks = [(data, p, settle, memory_budget, sc.source, base) for p in todo]

    def on_done(i: int, row: dict[str, Any]) -> None:
        _write_part(folder, keys[todo[i].index], row)

    if backend == "ray" and tasks:
        with session(address, workers(jobs, len(tasks)), "--backend ray"):
            ray_map(run_point, tasks, on_done,
                    lambda d, t: f"sweep (ray): {d}/{t} points done")
    elif backend == "local" and tasks:
        n = workers(jobs, len(tasks))
        eta = _timed(data, todo, events, len(g.seeds) * len(names), n, sc.source, base)

        def label(done: int, total: int, _: list[str]) -> str:
            left = f", {eta.left()}" if eta else ""
            return (f"sweep: {done}/{total} points done{left} ({len(pts) - total} done "
                    "before)")

        def finished(i: int, row: dict[str, Any]) -> None:
            on_done(i, row)
            if eta:
                eta.finished(i)
        pool_map(run_point, tasks, n, label, [p.scheme for p in todo], finished)
    rows = [pd.read_parquet(folder / f"{k}.parquet") for k in keys]
    df = pd.concat(rows, ignore_index=True).sort_values("point", kind="stable")
    df = df.reset_index(drop=True)
    written = {f"points/{k}.parquet" for k in keys}
    write_parquet(df, out / "sweep.parquet")
    df.to_csv(out / "sweep.csv", index=False, float_format="%.6g")
    summ = summary(df, g)
    write_parquet(summ, out / "summary.parquet")
    summ.to_csv(out / "summary.csv", index=False, float_format="%.6g")
    written |= {"sweep.parquet", "sweep.csv", "summary.parquet", "summary.csv"}
    fig = figure(summ, g, df)
    if fig is not None:
        save_png(fig, out / "sweep.png")
        written.add("sweep.png")
    _prune(out, written)
    write_manifest(out, "tenantnet sweep")
    return df


PANELS = [("guarantees_pct", "guarantees met\n(% of settled intervals)", (0.0, 100.0)),
          ("work_conservation_pct", "bottleneck links busy (%)", (0.0, 100.0)),
          ("short_p99_slowdown", "short flows' p99 slowdown", (1.0, float("inf"))),
          ("jain", "Jain's index by weight", (0.0, 1.0))]
"""The figures ``sweep.png`` plots, how their axes read, and their ranges."""


def _axis(grid: Grid) -> str:
    return next(iter(grid.parameters), "seed")


def summary(df: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """Per value of the grid's first parameter (or seed) and scheme, each plotted
    figure's mean over the other points (seeds, other parameters) with its 95 %
    t-interval, how many points it rests on, of how many, and why the others were
    not counted (failed, did not act, not computable)."""
    x = _axis(grid)
    rows = []
    for (value, scheme), g in df.groupby([x, "scheme"], sort=False, dropna=False):
        row: dict[str, Any] = {x: value, "scheme": scheme, "points": len(g)}
        for col, _, bounds in PANELS:
            vals, why = [], []
            for _, r in g.iterrows():
                v = r.get(col, np.nan)
                ok = r["status"] == "ok" and v is not None and pd.notna(v)
                vals.append(float(v) if ok else np.nan)
                why.append("" if ok else str(r["status"]) if r["status"] != "ok" else
                           metrics.FIGURES[col][0])
            e = stats.estimate(vals, why, bounds)
            row.update({col: e.mean, f"{col}_lo": e.lo, f"{col}_hi": e.hi,
                        f"{col}_n": e.n, f"{col}_missing": e.reasons()})
        rows.append(row)
    return pd.DataFrame(rows)


def figure(summ: pd.DataFrame, grid: Grid, df: pd.DataFrame) -> Any:
    """The four verdicts' figures against the grid's first parameter (or seed), a
    line per scheme: each point the mean over seeds and other parameters with its
    95 % interval as a bar, and the count of points behind it where some could not
    be counted; None when no point ran."""

    if not (df["status"] != "failed").any():
        return None
    x = _axis(grid)
    fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
    fig.subplots_adjust(wspace=0.34)
    numeric = pd.api.types.is_numeric_dtype(df[x])
    order = list(dict.fromkeys(df[x]))
    notes: list[str] = []
    for ax, (col, label, _) in zip(axes, PANELS, strict=True):
        if summ[f"{col}_n"].sum() == 0:
            ax.text(0.5, 0.5, "nothing to judge in these runs", ha="center",
                    transform=ax.transAxes, color="grey")
        for i, (scheme, g) in enumerate(summ.groupby("scheme", sort=False)):
            g = g[g[f"{col}_n"] > 0]
            if not len(g):
                continue
            xs = (g[x].astype(float).to_numpy() if numeric else
                  np.array([order.index(v) for v in g[x]], dtype=float))
            mean = g[col].to_numpy(dtype=float)
            err = np.vstack([mean - g[f"{col}_lo"].to_numpy(dtype=float),
                             g[f"{col}_hi"].to_numpy(dtype=float) - mean])
            st = style(i)
            st.pop("markevery")
            ax.errorbar(xs, mean, yerr=err, label=scheme, capsize=2, lw=1.2, **st)
            for xv, yv, n, tot in zip(xs, mean, g[f"{col}_n"], g["points"], strict=True):
                if n < tot:
                    ax.annotate(f"n={n}/{tot}", (xv, yv), textcoords="offset points",
                                xytext=(3, 3), fontsize=6, color=st["color"])
            for why in g[f"{col}_missing"]:
                if why:
                    notes.append(f"{scheme}, {col}: {why}")
        if not numeric:
            ax.set_xticks(range(len(order)), [str(v) for v in order])
        ax.set_xlabel(x)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    legend_outside(axes[-1], title="scheme")
    seeds = df.groupby([x, "scheme"], dropna=False).size().max()
    text = (f"each point: the mean of up to {seeds} runs; bars: {stats.INTERVAL}; "
            "n = runs counted where fewer than all")
    if notes:
        text += "\nnot counted: " + "; ".join(dict.fromkeys(notes))[:400]
    fig.text(0.01, -0.06, text, fontsize=7, va="top", wrap=True)
    return fig


BENCH_GRID = {"seeds": [1, 2], "schemes": ["none", "static", "mbfq"],
              "parameters": {"tenants[1].guarantee": ["3Gbps", "4Gbps", "5Gbps", "6Gbps"]}}
"""``tenantnet bench sweep``: 24 points of the demo (4 guarantees of web, 2 seeds,
3 schemes)."""


def bench(repeat: int, jobs: int = 2) -> None:
    """Runs the benchmark grid sequentially and on `jobs` workers, interleaved, and
    prints one JSON line per pair of runs: both wall times, their ratio, and
    whether the datasets are identical."""
    sc = Scenario.builtin("demo")
    for _ in range(repeat):
        walls = {}
        frames = {}
        with tempfile.TemporaryDirectory() as tmp:
            for n in (1, jobs):
                start = time.monotonic()
                frames[n] = sweep(sc, BENCH_GRID, Path(tmp) / str(n), jobs=n)
                walls[n] = time.monotonic() - start
        print(json.dumps({"benchmark": "sweep", "points": len(frames[1]),
                          "sequential_s": round(walls[1], 3),
                          f"workers_{jobs}_s": round(walls[jobs], 3),
                          "ratio": round(walls[jobs] / walls[1], 3),
                          "identical": bool(frames[1].equals(frames[jobs])),
                          "cores": os.cpu_count()}), flush=True)
