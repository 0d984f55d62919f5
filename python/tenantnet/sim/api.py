"""Running scenarios from Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import is_whole
from ..jobs.progress import Progress, sim_progress
from ..jobs.runlog import ran_one
from .results import Results
from .scenario import MemoryBudget, Scenario
from .simulation import Simulation


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
        progress = sim_progress()
    end = sim.end_s
    k = 0
    while not sim.finished:
        k += 1
        sim.run_until(end * min(k, chunks) / chunks)
        if progress is not None:
            progress(sim.now_s, end, sim.events)
