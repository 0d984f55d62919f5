"""The search of ``tenantnet advise``: schemes × their tunable parameters
(:func:`tenantnet.sim.schemes.tunables`), each configuration run on seeds until
successive halving drops it, proposed by Optuna's TPE sampler (multivariate, over
the conditional space "scheme, then its parameters"), every scheme's preset tried
first.

Choices:

* **What a trial scores** (lower is better): a configuration that meets every level
  on the mean of its seeds so far scores its objective ``x`` as ``x / (1 + x)``,
  below 1; one that misses scores 1 plus the sum of its missed margins (how far
  each missed level's mean is outside its bound, relative to the bound). A
  configuration that meets the levels always beats one that does not, and among
  those that do not, the nearer is better. A level no run could give (a tenant
  whose demand never settled) counts for neither.
* **Seeds are the resource** of the successive halving (Optuna's
  ``SuccessiveHalvingPruner``, reduction factor 3): a trial reports its score after
  each seed and is dropped when it is not among the best third at that rung.
* **The budget** counts runs, every seed of every trial; trials are asked for in
  batches of as many as there are workers, and their seeds run in lock-step. A
  budget of time stops asking for batches when the next one and the held-out
  verification after the search would not end within it, at the search's pace so
  far (replayed runs count at the pace of the runs made). Such a search is not a
  function of its inputs alone (a busier machine makes fewer runs); the number of
  runs it made, given as the budget, repeats it from its ``runs.jsonl``.
* **Determinism and resuming**: the search is a function of the scenario, the
  service levels, the schemes, the budget and the seed; every run's figures are
  kept (``runs.jsonl``) and a search started again over the same folder replays
  the kept runs instead of running them, so an interrupted search resumes to the
  same answer.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..comparison.compare import instrumented, measured_run
from ..errors import ScenarioError
from ..jobs import progress
from ..jobs.pool import Workers, pool_map
from ..jobs.raypool import ray_map
from ..measure.metrics import SETTLE_S
from ..sim import schemes
from ..sim.params import Param, set_key
from ..sim.scenario import Scenario
from . import slo as slo_mod

REDUCTION = 3
"""Successive halving keeps the best third at each rung."""


@dataclass(frozen=True)
class Config:
    """A scheme and values of its parameters, as the scenario writes them."""
    scheme: str
    values: tuple[tuple[str, Any], ...] = ()

    def label(self) -> str:
        """``mbfq (mbfq.interval = 50ms, mbfq.headroom = 1.2)``: each key without its
        table (``vswitch.``, ``network.``, ``transport.``)."""
        if not self.values:
            return self.scheme
        return f"{self.scheme} (" + ", ".join(f"{_short(k)} = {v}" for k, v in
                                              self.values) + ")"

    def key(self, seed: int) -> str:
        return json.dumps([self.scheme, [list(kv) for kv in self.values], seed])

    def scenario(self, data: Mapping[str, Any], base_dir: str) -> dict[str, Any]:
        """`data` under this configuration, instrumented for the measures."""
        d = schemes.apply(instrumented(data), self.scheme, base_dir)
        for k, v in self.values:
            set_key(d, k, v)
        return d


def _short(key: str) -> str:
    head, _, rest = key.partition(".")
    return rest if head in ("vswitch", "network", "transport") and rest else key


Figures = dict[str, float]
"""A run's figure per level (:func:`tenantnet.advice.slo.figures`)."""


def run_config(data: Mapping[str, Any], config: Config, seed: int, levels: slo_mod.Slo,
               source: str, base_dir: str) -> Figures | str:
    """One run of `config` under `seed`: its figures, or why it failed."""
    try:
        d = config.scenario(data, base_dir)
        o = measured_run(d, config.scheme, seed, SETTLE_S, None, None, source, base_dir)
    except ScenarioError as e:
        return f"failed: {e}"
    if o.measures is None:
        return o.error or "failed"
    return slo_mod.figures(levels, o.measures)


class Memo:
    """Every run's figures, kept in a JSON-lines file (None: in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.kept: dict[str, Figures | str] = {}
        if path is not None and path.exists():
            good = []
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self.kept[row["key"]] = row["result"]
                    good.append(line)
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by an interruption: that run runs again
            path.write_text("".join(x + "\n" for x in good), encoding="utf-8")

    def get(self, key: str) -> Figures | str | None:
        return self.kept.get(key)

    def put(self, key: str, result: Figures | str) -> None:
        self.kept[key] = result
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"key": key, "result": result}) + "\n")


def score(levels: slo_mod.Slo, runs: Sequence[Figures]) -> float:
    """A trial's score on its runs so far (module doc)."""
    t = slo_mod.judge_figures(levels, runs)
    if not (t["verdict"] != "—").any():
        return math.inf
    missed = slo_mod.missed(t)
    if missed > 0:
        return 1.0 + missed
    obj = [r[""] for r in runs if math.isfinite(r.get("", math.nan))]
    x = sum(obj) / len(obj) if obj else math.inf
    return x / (1.0 + x) if math.isfinite(x) and x >= 0 else 1.0


@dataclass
class Trial:
    """One configuration the search tried, and its runs."""
    number: int
    config: Config
    runs: list[Figures] = field(default_factory=list)
    error: str = ""
    state: str = "running"
    """``complete`` (every seed), ``pruned`` or ``failed``."""
    score: float = math.inf


@dataclass
class Space:
    """What the search runs: the scenario, the levels, each scheme's parameters."""
    data: dict[str, Any]
    levels: slo_mod.Slo
    params: dict[str, tuple[Param, ...]]
    source: str
    base_dir: str


def space(scenario: Scenario, levels: slo_mod.Slo, names: Sequence[str] | None) -> Space:
    """The schemes `names` (default every one that applies) with their parameters on
    `scenario`; an error names a scheme that does not apply."""
    data, base = scenario.data(), str(scenario.base_dir)
    if names is None:
        names = [s for s, sch in schemes.SCHEMES.items()
                 if schemes.why_not(sch, data, base) is None]
    params = {}
    for n in names:
        schemes.parse(n)
        params[n] = schemes.tunables(n, data, base)
    if not params:
        raise ScenarioError(f"{scenario.source}: no scheme applies to it")
    return Space(data, levels, params, scenario.source, base)


def _suggest(trial: Any, sp: Space) -> Config:
    scheme = trial.suggest_categorical("scheme", list(sp.params))
    values = []
    for p in sp.params[scheme]:
        name = f"{scheme}/{p.key}"
        if p.whole:
            x: float = trial.suggest_int(name, int(p.low), int(p.high), log=p.scale == "log")
        else:
            x = trial.suggest_float(name, p.low, p.high, log=p.scale == "log")
        values.append((p.key, p.value(x)))
    return Config(scheme, tuple(values))


Runner = Callable[[Sequence[tuple[Config, int]]], list[Figures | str]]


def searched(sp: Space, seeds: Sequence[int], budget: int, batch: int, runner: Runner,
             seed: int = 1, seconds: float | None = None, kept_back: int = 0
             ) -> list[Trial]:
    """Every trial of a search of `sp` over `seeds` (the rungs) within `budget` runs,
    `batch` trials at a time, its runs made by `runner` (module doc). With `seconds`,
    no batch starts unless it and `kept_back` more runs (the verification's) would
    still end within them, at the search's pace so far."""
    # deferred for start-up: loads optuna
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():  # `group` is marked experimental since Optuna 2.8
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True,
                                             n_startup_trials=max(10, 2 * len(sp.params)))
    pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1,
                                                    reduction_factor=REDUCTION)
    study = optuna.create_study(direction="minimize", sampler=sampler, pruner=pruner)
    for s, ps in sp.params.items():  # the presets first
        study.enqueue_trial({"scheme": s, **{f"{s}/{p.key}": p.default for p in ps}})
    trials: list[Trial] = []
    runs = 0
    start = time.monotonic()

    def time_left() -> bool:  # for another batch, and then the runs kept back
        if seconds is None:
            return True
        spent = time.monotonic() - start
        return spent + spent / max(1, runs) * (batch * len(seeds) + kept_back) < seconds

    while budget - runs >= 1 and time_left():
        n = max(1, min(batch, (budget - runs) // len(seeds)))
        asked = [study.ask() for _ in range(n)]
        group = [Trial(t.number, _suggest(t, sp)) for t in asked]
        trials += group
        for k, seed_k in enumerate(seeds):
            alive = [i for i, t in enumerate(group) if t.state == "running"]
            if not alive or runs >= budget:
                break
            results = runner([(group[i].config, seed_k) for i in alive])
            runs += len(alive)
            for i, r in zip(alive, results, strict=True):
                _step(study, asked[i], group[i], r, k, len(seeds), sp.levels)
            progress.step(f"advise: {runs}/{budget} runs, {len(trials)} configurations"
                          f"{_best_text(trials)}")
        for i, t in enumerate(group):
            if t.state == "running":  # the budget ran out between its seeds
                t.state = "pruned"
                study.tell(asked[i], state=optuna.trial.TrialState.PRUNED)
    return trials


def _step(study: Any, ot: Any, t: Trial, r: Figures | str, k: int, rungs: int,
          levels: slo_mod.Slo) -> None:
    # deferred for start-up: loads optuna
    import optuna

    if isinstance(r, str):
        t.state, t.error = "failed", r
        study.tell(ot, state=optuna.trial.TrialState.FAIL)
        return
    t.runs.append(r)
    t.score = score(levels, t.runs)
    ot.report(t.score, step=k + 1)
    if k + 1 == rungs:
        t.state = "complete"
        study.tell(ot, t.score)
    elif ot.should_prune():
        t.state = "pruned"
        study.tell(ot, state=optuna.trial.TrialState.PRUNED)


def _best_text(trials: Sequence[Trial]) -> str:
    done = [t for t in trials if t.state == "complete"]
    if not done:
        return ""
    b = min(done, key=lambda t: t.score)
    return f"; best so far {b.config.label()}" + (" meets every level" if b.score < 1
                                                  else "")


def memo_runner(sp: Space, memo: Memo,
                execute: Callable[[list[tuple[Any, ...]], list[str]], list[Any]]) -> Runner:
    """Runs a batch by `execute(tasks, names)` (the arguments of :func:`run_config`
    for each run, and its name; the results in order), replaying what `memo` kept and
    keeping what ran."""
    def run(batch: Sequence[tuple[Config, int]]) -> list[Figures | str]:
        out: list[Figures | str | None] = [memo.get(c.key(s)) for c, s in batch]
        todo = [i for i, r in enumerate(out) if r is None]
        tasks = [(sp.data, batch[i][0], batch[i][1], sp.levels, sp.source, sp.base_dir)
                 for i in todo]
        names = [f"{batch[i][0].scheme} seed {batch[i][1]}" for i in todo]
        done = execute(tasks, names) if tasks else []
        for i, r in zip(todo, done, strict=True):
            memo.put(batch[i][0].key(batch[i][1]), r)
            out[i] = r
        return [r if r is not None else "failed: not run" for r in out]
    return run


def local_runner(sp: Space, memo: Memo, jobs: int, workers: Workers) -> Runner:
    """Runs on `jobs` worker processes (kept in `workers` between batches), replaying
    what `memo` kept."""
    return memo_runner(sp, memo, lambda tasks, names: pool_map(
        run_config, tasks, min(jobs, max(1, len(tasks))),
        lambda d, n, now: f"advise: {', '.join(now)}", names, workers=workers))


def ray_runner(sp: Space, memo: Memo) -> Runner:
    """Runs on the Ray cluster of the current :func:`tenantnet.jobs.raypool.session`,
    replaying what `memo` kept."""
    def execute(tasks: list[tuple[Any, ...]], names: list[str]) -> list[Any]:
        out: list[Any] = [None] * len(tasks)

        def done(i: int, r: Any) -> None:
            out[i] = r
        ray_map(run_config, tasks, done, lambda d, t: f"advise (ray): {d}/{t} runs of "
                "the batch done")
        return out
    return memo_runner(sp, memo, execute)
