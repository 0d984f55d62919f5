"""Running scenarios from Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import is_whole
from .progress import Progress
from .results import Results
from .scenario import MemoryBudget, Scenario
from .simulation import Simulation


def as_scenario(scenario: Scenario | str | Path | dict[str, Any]) -> Scenario:
    """A :class:`Scenario` from itself, a file path or a dictionary."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    return Scenario.from_file(scenario)


def run(scenario: Scenario | str | Path | dict[str, Any], progress: Progress | None = None,
        chunks: int = 200, seed: int | None = None,
        memory_budget: MemoryBudget = None, max_events: float | None = None) -> Results:
    """Runs a scenario (a :class:`Scenario`, a file path or a dictionary) to its end.

    The simulation advances in ``chunks`` (at least 1) steps of simulated time with the
    GIL released; ``progress`` is called after each. Chunking does not change results.
    ``seed`` replaces ``simulation.seed``; ``memory_budget`` (bytes or a size such as
    ``"16GiB"``, default 8 GiB) refuses a scenario whose run would need more, and stops
    a run that grows past it, with :class:`ScenarioError`; so does ``max_events``
    (default 10^12, about two days) a scenario estimated to need more events.
    """
    _check_chunks(chunks)
    sim = as_scenario(scenario).simulation(seed=seed, memory_budget=memory_budget,
                                           max_events=max_events)
    advance(sim, progress, chunks)
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
