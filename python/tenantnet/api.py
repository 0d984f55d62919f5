"""Running scenarios from Python."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .results import Results
from .scenario import Scenario

Progress = Callable[[float, float, int], None]
"""Called after each chunk with (simulated seconds done, seconds to run, events)."""


def _as_scenario(scenario: Scenario | str | Path | dict[str, Any]) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    return Scenario.from_file(scenario)


def run(scenario: Scenario | str | Path | dict[str, Any], progress: Progress | None = None,
        chunks: int = 200) -> Results:
    """Runs a scenario (a :class:`Scenario`, a file path or a dictionary) to its end.

    The simulation advances in ``chunks`` steps of simulated time with the GIL
    released; ``progress`` is called after each. Chunking does not change results.
    """
    sim = _as_scenario(scenario).simulation()
    end = sim.end_s
    k = 0
    while not sim.finished:
        k += 1
        sim.run_until(end * min(k, chunks) / chunks)
        if progress is not None:
            progress(sim.now_s, end, sim.events)
    summary, tables = sim.results()
    return Results.from_core(summary, tables)
