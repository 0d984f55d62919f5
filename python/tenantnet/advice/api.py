"""`tenantnet.advise`: which scheme, with which settings, meets a scenario's service
levels. The search (:mod:`.search`) runs on seeds counted from the scenario's; the
configurations it ranks best are then run again on **held-out seeds** it never used
(from the scenario's seed plus ``HELD_OUT_FROM``) and judged there apart: the
recommended configuration is the best-ranked one that meets every level on them.
Every scheme's best configuration is verified the same way, so the answer says for
each other scheme which level it misses and by how much. When none meets the levels,
the answer is the closest configuration and the level that binds."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import SEED_MAX, ScenarioError, check_type, is_whole
from ..jobs.outdir import write_parquet
from ..jobs.pool import workers
from ..report.plotting import save_csv
from ..sim.api import as_scenario
from ..sim.scenario import Scenario
from . import slo as slo_mod
from .search import Config, Memo, Space, Trial, local_runner, searched, space

HELD_OUT_FROM = 1000
"""Held-out seeds start this far above the scenario's seed (the search's start there)."""
CANDIDATES = 3
"""At most this many of the best-ranked configurations are verified on held-out
seeds before the search says that none holds there."""


@dataclass
class Advice:
    """What :func:`advise` found: every configuration tried (``trials``), those run on
    every search seed ranked best first (``ranking``), the held-out verification
    (``held_out``: a row per configuration and level), each scheme's best
    (``schemes``), and the recommended configuration (None when nothing tried meets
    the levels on held-out seeds; ``closest`` is then the nearest)."""
    trials: pd.DataFrame
    ranking: pd.DataFrame
    held_out: pd.DataFrame
    schemes: pd.DataFrame
    recommended: Config | None
    closest: Config | None
    binding: str
    runs: int
    held_out_runs: int
    scenario: dict[str, Any]
    """The recommended (else closest) configuration's scenario."""

    def summary(self) -> str:
        """The answer in a few lines."""
        lines = []
        if self.recommended is not None:
            lines.append(f"recommended: {self.recommended.label()}: meets every level on "
                         f"the held-out seeds")
        elif self.closest is not None:
            lines.append(f"no configuration tried meets every level on the held-out "
                         f"seeds; closest: {self.closest.label()}, bound by {self.binding}")
        lines.append("each scheme's best configuration on the held-out seeds:")
        for r in self.schemes.itertuples():
            lines.append(f"  {r.scheme:<15} {r.verdict}")
            if r.configuration and r.configuration != r.scheme:
                lines.append(f"  {'':<15} ({r.configuration})")
        lines.append(f"{self.runs} search runs, {self.held_out_runs} held-out runs, "
                     f"{len(self.trials)} configurations")
        return "\n".join(lines)

    def write(self, out: str | Path) -> Path:
        """Writes the tables (Parquet and CSV), the summary and the recommended
        configuration's scenario (``recommended.json``) into `out`."""
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        for name in ("trials", "ranking", "held_out", "schemes"):
            df = getattr(self, name)
            write_parquet(df, d / f"{name}.parquet")
            save_csv(df, d / f"{name}.csv")
        (d / "summary.md").write_text(self.summary() + "\n", encoding="utf-8")
        (d / "recommended.json").write_text(json.dumps(self.scenario, indent=2) + "\n",
                                            encoding="utf-8")
        return d


def _cells(table: pd.DataFrame) -> dict[str, str]:
    return {r.level: (f"{r.verdict} {r.mean:.4g}" + (f" [{r.lo:.4g}, {r.hi:.4g}]"
                                                    if r.seeds > 1 else ""))
            if r.seeds else "—" for r in table.itertuples()}


def _trial_rows(trials: Sequence[Trial], levels: slo_mod.Slo) -> pd.DataFrame:
    rows = []
    for t in trials:
        tab = slo_mod.judge_figures(levels, t.runs) if t.runs else None
        rows.append({"trial": t.number, "scheme": t.config.scheme,
                     "configuration": t.config.label(), "state": t.state,
                     "seeds": len(t.runs), "score": t.score,
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
           schemes: Sequence[str] | None = None, budget: int = 200, seeds: int = 3,
           held_out: int = 5, jobs: int | None = None, memo: str | Path | None = None,
           seed: int = 1) -> Advice:
    """Searches the schemes `schemes` (default every one that applies) and their
    parameters on `scenario` (a :class:`Scenario`, a file or a dictionary) for the
    configuration that meets the service levels `levels` (an :class:`Slo`, a file or a
    dictionary as the file reads) with the least objective, within `budget` runs of up
    to `seeds` seeds each; verifies the best on `held_out` fresh seeds (module doc).
    `memo` (a file) keeps every run's figures so that a search started again resumes
    (:mod:`.search`); `seed` seeds the sampler. Runs go to `jobs` worker processes
    (default one per core)."""
    scenario = as_scenario(scenario)
    if isinstance(levels, str | Path):
        levels = slo_mod.load(levels)
    elif isinstance(levels, dict):
        levels = slo_mod.parse(levels)
    check_type("levels", levels, isinstance(levels, slo_mod.Slo),
               "service levels: a file, a dictionary or an Slo")
    for name, v, lo in (("budget", budget, 1), ("seeds", seeds, 1), ("held_out", held_out, 2)):
        check_type(name, v, is_whole(v, lo, 10**9), f"a whole number of at least {lo}")
    check_type("jobs", jobs, jobs is None or is_whole(jobs, 1, 2**31),
               "a number of runs at a time (1 or more), or None")
    if budget < seeds:
        raise ScenarioError(f"budget = {budget}: expected at least {seeds} runs (one "
                            "configuration on every seed)")
    sp = space(scenario, levels, schemes)
    first = int(sp.data.get("simulation", {}).get("seed", 1))
    search_seeds = [(first + i) % (SEED_MAX + 1) for i in range(seeds)]
    check = [(first + HELD_OUT_FROM + i) % (SEED_MAX + 1) for i in range(held_out)]
    n = workers(jobs, budget)
    run = local_runner(sp, Memo(None if memo is None else Path(memo)), n)
    trials = searched(sp, search_seeds, budget, n, run, seed)
    ranked = _ranked(trials)
    verify = list(ranked[:CANDIDATES])
    for s in sp.params:  # and every scheme's best
        best = next((t for t in ranked if t.config.scheme == s), None)
        if best is not None and best not in verify:
            verify.append(best)
    verified = _verify(sp, verify, check, run)
    return _advice(sp, trials, ranked, verified, len(verify) * len(check))


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
            rows.append({"scheme": s, "configuration": "", "verdict": "no configuration "
                         "ran on every search seed"})
            continue
        c = min(mine, key=order.__getitem__)
        v = verified[c]
        word = "meets every level" if slo_mod.met(v) else f"misses {_binding(v)}"
        rows.append({"scheme": s, "configuration": c.label(), "verdict": word,
                     "met": slo_mod.met(v), "missed": slo_mod.missed(v)})
    ranking = _trial_rows(ranked, levels)
    if len(ranking):
        ranking.insert(0, "rank", range(1, len(ranking) + 1))
    data = closest.scenario(sp.data, sp.base_dir) if closest is not None else {}
    return Advice(_trial_rows(trials, levels), ranking, held, pd.DataFrame(rows),
                  recommended, closest, bind, sum(len(t.runs) for t in trials),
                  held_out_runs, data)


def _binding(table: pd.DataFrame) -> str:
    b = slo_mod.binding(table)
    return "no level it could be judged on" if b is None else slo_mod.shortfall(b)
