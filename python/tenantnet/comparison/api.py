"""``tenantnet.compare`` from Python: a scenario under several schemes and seeds,
judged (:mod:`tenantnet.comparison.compare` does the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import SEED_MAX, check_type, is_whole
from ..jobs.outdir import publish
from ..measure import metrics
from ..sim.api import as_scenario
from ..sim.scenario import MemoryBudget, Scenario, memory_budget_bytes
from .compare import DEFAULT_SEEDS, Comparison
from .compare import compare as run_all


def _scheme_specs(schemes: Any) -> list[str] | None:
    """``schemes``: None, "a,b+c" or a list of names and combinations."""
    if schemes is None:
        return None
    if isinstance(schemes, str):
        schemes = [s.strip() for s in schemes.split(",") if s.strip()]
    check_type("schemes", schemes, isinstance(schemes, list | tuple) and bool(schemes)
                and all(isinstance(s, str) for s in schemes),
                'a list of scheme names such as ["none", "qshare+barberq"], or None')
    return list(schemes)


def compare(scenario: Scenario | str | Path | dict[str, Any],
            schemes: str | list[str] | None = None, seeds: int | list[int] | None = None,
            *, seed: int | None = None, out: str | Path | None = None,
            jobs: int | None = None, settle: float | None = None,
            memory_budget: MemoryBudget = None, force: bool = False) -> Comparison:
    """Runs a scenario (a :class:`Scenario`, a file path or a dictionary) under each
    scheme of `schemes` (default: every one that applies) and `seeds` seeds (default
    3; or a list of seeds), `jobs` runs at a time (default: one per core), and judges
    them: ``.verdicts`` has a row per scheme with ✔, ✘ or ≈ inconclusive per property
    and the 95 % interval over seeds. With `out`, every run's results, the tables and
    ``report.html`` are written there (a folder replaced whole; `force` replaces one
    tenantnet did not write). Runs go to fresh worker processes: no
    ``if __name__ == "__main__":`` guard is needed around the call."""
    sc = as_scenario(scenario)
    specs = _scheme_specs(schemes)
    seeds = DEFAULT_SEEDS if seeds is None else seeds
    whole = isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1
    check_type("seeds", seeds, whole or (isinstance(seeds, list | tuple) and bool(seeds)
                                         and all(is_whole(s, 0, SEED_MAX) for s in seeds)),
                "a number of seeds (1 or more) or a list of seeds")
    check_type("seed", seed, seed is None or is_whole(seed, 0, SEED_MAX),
                "a seed from 0 to 2^63 - 1, or None")
    check_type("jobs", jobs, jobs is None or is_whole(jobs, 1, 2**31),
                "a number of runs at a time (1 or more), or None")
    settle = metrics.SETTLE_S if settle is None else settle
    check_type("settle", settle, isinstance(settle, int | float) and not isinstance(
        settle, bool) and 0 <= settle < 1e6, "seconds (a number from 0)")
    check_type("out", out, out is None or isinstance(out, str | Path),
                "a folder's path, or None")
    memory_budget_bytes(memory_budget)  # a bad budget fails here, not in every run
    if out is None:
        return run_all(sc, specs, None, jobs, seeds, seed, float(settle), memory_budget)
    kept: list[Comparison] = []

    def write(d: Path) -> None:
        c = run_all(sc, specs, d, jobs, seeds, seed, float(settle), memory_budget)
        c.write(d)
        kept.append(c)
    publish(Path(out), write, "tenantnet.compare", force)
    return kept[0]
