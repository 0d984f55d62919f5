"""`tenantnet.advise`: which scheme, with which settings, meets a scenario's service
levels. The search (:mod:`.search`) runs on seeds counted from the scenario's; the
configurations it ranks best are then run again on **held-out seeds** it never used
(from the scenario's seed plus ``HELD_OUT_FROM``) and judged there apart: the
recommended configuration is the best-ranked one that meets every level on them.
Every scheme's best configuration is verified the same way, so the answer says for
each other scheme which level it misses and by how much. When none meets the levels,
the answer is the closest configuration and the level that binds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import SEED_MAX, ScenarioError, check_type, is_whole
from ..jobs.pool import Workers, workers
from ..jobs.raypool import session
from ..sim.api import as_scenario
from ..sim.scenario import Scenario
from . import slo as slo_mod
from .answer import Advice
from .budget import EXPECTED
from .budget import seconds as time_budget
from .search import Config, Memo, Space, Trial, local_runner, ray_runner, searched, space

HELD_OUT_FROM = 1000
"""Held-out seeds start this far above the scenario's seed (the search's start there)."""
CANDIDATES = 3
"""At most this many of the best-ranked configurations are verified on held-out
seeds before the search says that none holds there."""


def _cells(table: pd.DataFrame) -> dict[str, str]:
    return {r.level: slo_mod.cell(r) for r in table.itertuples()}


def _trial_rows(trials: Sequence[Trial], levels: slo_mod.Slo) -> pd.DataFrame:
    rows = []
    for t in trials:
        tab = slo_mod.judge_figures(levels, t.runs) if t.runs else None
        obj = [r[""] for r in t.runs if math.isfinite(r.get("", math.nan))]
        rows.append({"trial": t.number, "scheme": t.config.scheme,
                     "configuration": t.config.label(), "state": t.state,
                     "seeds": len(t.runs), "score": t.score,
                     "objective": sum(obj) / len(obj) if obj else math.nan,
                     "met": bool(tab is not None and slo_mod.met(tab)),
                     "missed": slo_mod.missed(tab) if tab is not None else math.nan,
                     "error": t.error, **(_cells(tab) if tab is not None else {})})
    return pd.DataFrame(rows)


def _ranked(trials: Sequence[Trial]) -> list[Trial]:
    best: dict[Config, Trial] = {}
    for t in trials:
        if t.state == "complete" and (t.config not in best or t.score < best[t.config].score):
            best[t.config] = t
    return sorted(best.values(), key=lambda t: (t.score, t.number))


def advise(scenario: Scenario | str | Path | dict[str, Any],
           levels: slo_mod.Slo | str | Path | dict[str, Any],
           schemes: Sequence[str] | None = None, budget: int | str = 200, seeds: int = 3,
           held_out: int = 5, jobs: int | None = None, memo: str | Path | None = None,
           seed: int = 1, ray: str | None = None) -> Advice:
    """Searches the schemes `schemes` (default every one that applies) and their
    parameters on `scenario` (a :class:`Scenario`, a file or a dictionary) for the
    configuration that meets the service levels `levels` (an :class:`Slo`, a file or a
    dictionary as the file reads) with the least objective, within `budget` (runs of
    up to `seeds` seeds each, or a time such as ``"30min"`` for the search and its
    verification together); verifies the best on `held_out` fresh seeds (module doc).
    `memo` (a file) keeps every run's figures so that a search started again resumes
    (:mod:`.search`); `seed` seeds the sampler. Runs go to `jobs` worker processes
    (default one per core), or with `ray` to a Ray cluster at that address (``"local"``
    starts one of `jobs` CPUs here; :func:`tenantnet.jobs.raypool.session`): the
    same runs, so the same answer."""
    scenario = as_scenario(scenario)
    if isinstance(levels, str | Path):
        levels = slo_mod.load(levels)
    elif isinstance(levels, dict):
        levels = slo_mod.parse(levels)
    check_type("levels", levels, isinstance(levels, slo_mod.Slo),
               "service levels: a file, a dictionary or an Slo")
    runs, seconds = _budget(budget)
    for name, v, lo in (("seeds", seeds, 1), ("held_out", held_out, 2)):
        check_type(name, v, is_whole(v, lo, 10**9), f"a whole number of at least {lo}")
    check_type("jobs", jobs, jobs is None or is_whole(jobs, 1, 2**31),
               "a number of runs at a time (1 or more), or None")
    check_type("ray", ray, ray is None or (isinstance(ray, str) and bool(ray)),
               "a Ray cluster's address, \"local\" or \"auto\", or None")
    if runs < seeds:
        raise ScenarioError(f"budget = {budget}: expected at least {seeds} runs (one "
                            "configuration on every seed)")
    sp = space(scenario, levels, schemes)
    first = int(sp.data.get("simulation", {}).get("seed", 1))
    search_seeds = [(first + i) % (SEED_MAX + 1) for i in range(seeds)]
    check = [(first + HELD_OUT_FROM + i) % (SEED_MAX + 1) for i in range(held_out)]
    n = workers(jobs, runs)
    kept_runs = Memo(None if memo is None else Path(memo))
    with ExitStack() as stack:
        if ray is None:
            run = local_runner(sp, kept_runs, n, stack.enter_context(Workers()))
        else:
            stack.enter_context(session(ray, n, "--ray"))
            run = ray_runner(sp, kept_runs)
        trials = searched(sp, search_seeds, runs, n, run, seed, seconds,
                          held_out * (CANDIDATES + len(sp.params)))
        ranked = _ranked(trials)
        verify = list(ranked[:CANDIDATES])
        for best in _best_of_each(trials):
            if best.config not in {t.config for t in verify}:
                verify.append(best)
        verified = _verify(sp, verify, check, run)
    return _advice(sp, trials, ranked, verified, len(verify) * len(check))


def _budget(budget: int | str) -> tuple[int, float | None]:
    """A budget of runs (a whole number) or of time (``"30min"``): the runs it
    allows and the seconds (None for a budget of runs)."""
    if isinstance(budget, str):
        secs = time_budget(budget)
        if secs is None:
            raise ValueError(f"budget = {budget!r}: expected {EXPECTED}")
        return 10**9, secs
    check_type("budget", budget, is_whole(budget, 1, 10**9), EXPECTED)
    return int(budget), None


def _best_of_each(trials: Sequence[Trial]) -> list[Trial]:
    """Each scheme's best trial: of those run on every search seed if it has one,
    else of those successive halving dropped (by their score on the seeds they
    ran), so that every scheme is verified and its shortfall named."""
    best: dict[str, Trial] = {}
    for t in sorted((t for t in trials if t.runs),
                    key=lambda t: (t.state != "complete", t.score, t.number)):
        best.setdefault(t.config.scheme, t)
    return list(best.values())


def _verify(sp: Space, trials: Sequence[Trial], check: Sequence[int],
            run: Any) -> dict[Config, pd.DataFrame]:
    jobs = [(t.config, s) for t in trials for s in check]
    results = run(jobs) if jobs else []
    out: dict[Config, list[Any]] = {}
    for (c, _), r in zip(jobs, results, strict=True):
        out.setdefault(c, []).append(r)
    return {c: slo_mod.judge_figures(sp.levels, [r for r in rs if not isinstance(r, str)])
            for c, rs in out.items()}


def _advice(sp: Space, trials: Sequence[Trial], ranked: Sequence[Trial],
            verified: dict[Config, pd.DataFrame], held_out_runs: int) -> Advice:
    levels = sp.levels
    order = {t.config: i for i, t in enumerate(ranked)}
    for c in verified:  # a scheme's best that halving dropped ranks after the rest
        order.setdefault(c, len(order))
    good = [c for c in verified if slo_mod.met(verified[c])]
    recommended = min(good, key=order.__getitem__) if good else None
    closest = recommended or (min(verified, key=lambda c: (slo_mod.missed(verified[c]),
                                                           order[c])) if verified else None)
    bind = "" if closest is None or recommended else _binding(verified[closest])
    held = pd.concat([v.assign(configuration=c.label(), scheme=c.scheme)
                      for c, v in verified.items()], ignore_index=True) \
        if verified else pd.DataFrame()
    rows: list[dict[str, Any]] = []
    for s in sp.params:
        mine = [c for c in verified if c.scheme == s]
        if not mine:
            rows.append({"scheme": s, "configuration": "", "verdict": "no run of it "
                         "succeeded"})
            continue
        c = min(mine, key=order.__getitem__)
        v = verified[c]
        word = _verdict(v)
        rows.append({"scheme": s, "configuration": c.label(), "verdict": word,
                     "met": slo_mod.met(v), "missed": slo_mod.missed(v)})
    presets = pd.DataFrame([_preset_row(t, levels) for t in trials[:len(sp.params)]])
    ranking = _trial_rows(ranked, levels)
    if len(ranking):
        ranking.insert(0, "rank", range(1, len(ranking) + 1))
    data = closest.scenario(sp.data, sp.base_dir) if closest is not None else {}
    named = tuple((r.level, r.rule) for r in held.drop_duplicates("level").itertuples()) \
        if len(held) else ()
    return Advice(_trial_rows(trials, levels), ranking, held, pd.DataFrame(rows),
                  recommended, closest, bind, sum(len(t.runs) for t in trials),
                  held_out_runs, data, str(sp.data.get("name", sp.source)),
                  levels.minimise, named, str(sp.base_dir), presets)


def _preset_row(t: Trial, levels: slo_mod.Slo) -> dict[str, Any]:
    """How a scheme's preset (the search's first trials) did on the search's seeds."""
    if not t.runs:
        return {"scheme": t.config.scheme, "seeds": 0,
                "verdict": t.error or "no run of it succeeded"}
    return {"scheme": t.config.scheme, "seeds": len(t.runs),
            "verdict": _verdict(slo_mod.judge_figures(levels, t.runs))}


def _verdict(table: pd.DataFrame) -> str:
    """``meets every level``, or the level a judged table misses first."""
    return "meets every level" if slo_mod.met(table) else f"misses {_binding(table)}"


def _binding(table: pd.DataFrame) -> str:
    b = slo_mod.binding(table)
    return "no level it could be judged on" if b is None else slo_mod.shortfall(b)
