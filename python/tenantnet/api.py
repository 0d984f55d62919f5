"""Running scenarios from Python."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import SEED_MAX, check_type, is_whole
from .progress import Progress
from .results import Results
from .scenario import MemoryBudget, Scenario, memory_budget_bytes
from .simulation import Simulation

if TYPE_CHECKING:
    from .comparison import Comparison


def as_scenario(scenario: Scenario | str | Path | dict[str, Any],
                where: str = "scenario") -> Scenario:
    """A :class:`Scenario` from itself, a file path or a dictionary; a TypeError
    naming `where` for anything else."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, str | Path):
        return Scenario.from_file(scenario)
    raise TypeError(f"{where} = {scenario!r}: expected a scenario file's path, a "
                    f"tenantnet.Scenario or a dict, not {type(scenario).__name__}")


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
    from . import metrics
    from .comparison import DEFAULT_SEEDS
    from .comparison import compare as run_all
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
    from .outdir import publish
    kept: list[Comparison] = []

    def write(d: Path) -> None:
        c = run_all(sc, specs, d, jobs, seeds, seed, float(settle), memory_budget)
        c.write(d)
        kept.append(c)
    publish(Path(out), write, "tenantnet.compare", force)
    return kept[0]


def run(scenario: Scenario | str | Path | dict[str, Any], progress: Progress | None = None,
        chunks: int = 200, seed: int | None = None,
        memory_budget: MemoryBudget = None, max_events: float | None = None,
        threads: int | None = None) -> Results:
    """Runs a scenario (a :class:`Scenario`, a file path or a dictionary) to its end.

    The simulation advances in ``chunks`` (at least 1) steps of simulated time with the
    GIL released; ``progress`` is called after each. Chunking does not change results.
    ``seed`` replaces ``simulation.seed``; ``memory_budget`` (bytes or a size such as
    ``"16GiB"``, default 8 GiB) refuses a scenario whose run would need more, and stops
    a run that grows past it, with :class:`ScenarioError`; so does ``max_events``
    (default 10^12, about two days) a scenario estimated to need more events.
    ``threads`` (1 to 4096; default: ``TENANTNET_THREADS`` if set, else chosen for the
    run) is how many threads the run may use (:meth:`Simulation.set_threads`): the
    results are the same on any number.
    """
    _check_chunks(chunks)
    sim = as_scenario(scenario).simulation(seed=seed, memory_budget=memory_budget,
                                           max_events=max_events)
    if threads is not None:
        sim.set_threads(threads)
    advance(sim, progress, chunks)
    from .eta import ran_one
    ran_one()
    return sim.results()


def _check_chunks(chunks: Any) -> None:
    if not is_whole(chunks, 1, 2**63):
        raise ValueError(f"chunks = {chunks!r}: expected a whole number of at least 1")


def advance(sim: Simulation, progress: Progress | None = None, chunks: int = 200) -> None:
    """Runs ``sim`` to its end in ``chunks`` steps of simulated time, calling
    ``progress`` after each (by default the terminal's progress line)."""
    _check_chunks(chunks)
    if progress is None:
        from .progress import sim_progress
        progress = sim_progress()
    end = sim.end_s
    k = 0
    while not sim.finished:
        k += 1
        sim.run_until(end * min(k, chunks) / chunks)
        if progress is not None:
            progress(sim.now_s, end, sim.events)
