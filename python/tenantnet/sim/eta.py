"""How long a command's runs take here: an estimate before they start, and an ETA as
they go that says when the machine runs them slower than estimated.

The scenario's own estimate of its events (``tenantnet validate``) is an upper bound
at a cautious 150 ns an event: on the compare example it said 12 s a run where a run
takes 2 to 4 s. The estimate here times each kind of run on this machine, now: a
trial runs the scenario under the scheme for a short stretch at its start (about
:data:`TRIAL_EVENTS` of its estimated events), and the time it took per estimated
event times the whole run's estimate is the run's time. That carries the machine's
speed, its current load and how far the estimate is from what the scheme really
processes; what the start of a run does not show (a tenant that starts later under a
scheme that treats it differently) it misses, which is why the ETA then follows the
runs themselves.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jobs import progress
from ..jobs.machine import CpuClock, CpuUse, busy_words
from ..jobs.runlog import counting
from .api import run
from .scenario import Scenario

TRIAL_EVENTS = 3e6
"""A trial's share of a run: the stretch from its start with about this many
estimated events (0.1 to 0.2 s here)."""
OVERHEAD = 0.15
"""What a run costs beside its simulation, as a share of it: handing it to a worker,
measuring it and writing its files (``tenantnet bench compare``: 3 % measuring, the
rest writing and the workers' start)."""
SLOWER = 1.3
"""Runs going this many times slower than estimated are said to."""


def human(seconds: float) -> str:
    """A duration to read: 45 s, 3 min 10 s, 2 h 5 min."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _stretch(data: Mapping[str, Any], seconds: float) -> dict[str, Any]:
    """`data` cut to its first `seconds` (to the microsecond)."""
    d = copy.deepcopy(dict(data))
    d.setdefault("simulation", {})["duration"] = f"{max(1, round(seconds * 1e6))}us"
    return d


def trial(data: Mapping[str, Any], source: str = "<scenario>", base_dir: str = ".",
          seed: int | None = None) -> tuple[float, float]:
    """Times the start of the scenario `data` (module doc): (seconds per estimated
    event here, the whole run's estimated events)."""
    sc = Scenario.from_dict(dict(data), source, base_dir)
    events = sc.validate(seed=seed).events
    span = sc.simulation(seed=seed).end_s
    cut = Scenario.from_dict(_stretch(data, span * min(1.0, TRIAL_EVENTS / max(events, 1.0))),
                             source, base_dir)
    part = cut.validate(seed=seed).events
    start = time.monotonic()
    run(cut, seed=seed, threads=1)
    return (time.monotonic() - start) / max(part, 1.0), events


def makespan(seconds: Sequence[float], workers: int) -> float:
    """How long runs of `seconds` take on `workers` workers that each take the next
    run in order when they finish one (as the process pool does)."""
    free = [0.0] * max(1, min(workers, len(seconds)))
    for s in seconds:
        i = free.index(min(free))
        free[i] += s
    return max(free, default=0.0)


@dataclass
class Eta:
    """The runs of a command (their names and estimated seconds) on `workers`
    workers: what to say before they start and as they go."""

    names: list[str]
    seconds: list[float]
    workers: int
    what: str = "runs"
    started: float = field(default_factory=time.monotonic)
    done: set[int] = field(default_factory=set)
    clock: CpuClock = field(default_factory=CpuClock.now)

    @property
    def total(self) -> float:
        """The estimated wall time of all the runs."""
        return makespan(self.seconds, self.workers)

    def up_front(self, how: str) -> str:
        """``55 runs on 2 workers: about 1 min 20 s here (how)``."""
        n = len(self.names)
        return (f"{n} {self.what if n != 1 else self.what.rstrip('s')} on {self.workers} "
                f"worker{'s' if self.workers != 1 else ''}: about {human(self.total)} here "
                f"({how})")

    def finished(self, i: int, _: Any = None) -> None:
        """Run `i` is done (``pool_map``'s ``on_done``)."""
        self.done.add(i)

    def pace(self) -> float | None:
        """How many times slower than estimated the runs are going (None before the
        first is done)."""
        if not self.done:
            return None
        expected = makespan([self.seconds[i] for i in sorted(self.done)], self.workers)
        return (time.monotonic() - self.started) / max(expected, 1e-3)

    def left(self) -> str:
        """``about 40 s left``, at the pace so far, and a word when it is slower than
        estimated, with what the machine's CPUs are doing."""
        rest = [s for i, s in enumerate(self.seconds) if i not in self.done]
        pace = self.pace()
        text = f"about {human(makespan(rest, self.workers) * (pace or 1.0))} left"
        if pace is not None and pace > SLOWER:
            use = busy_words(CpuUse.between(self.clock, CpuClock.now()))
            text += f", {pace:.1f}x slower than estimated (the machine is busy: {use})"
        return text

    def label(self, prefix: str) -> Callable[[int, int, list[str]], str]:
        """A ``pool_map`` label: ``prefix: 3/55 runs done, about 40 s left; running …``."""
        def show(done: int, total: int, running: list[str]) -> str:
            return (f"{prefix}: {done}/{total} {self.what} done, {self.left()}; "
                    f"running {', '.join(running)}")
        return show


def calibrate() -> float:
    """Seconds this machine takes now for a fixed run (the permutation benchmark at
    fat-tree k = 4, 100 ms, on one thread; the faster of two): how much faster or
    slower it is than the machine a reference time was measured on."""
    d = Scenario.builtin("permutation").data()
    d["topology"]["k"] = 4
    d["simulation"]["duration"] = "100ms"
    d["output"] = {"throughput": [], "queues": False}
    sc = Scenario.from_dict(d, "<calibration>")
    took = []
    for _ in range(2):
        start = time.monotonic()
        run(sc, threads=1)
        took.append(time.monotonic() - start)
    return min(took)


REFERENCE = Path(__file__).parents[1] / "reference" / "reproductions.json"
"""Each reproduction's runs and wall time on this project's machine kind, with the
calibration run's time there (``scripts/time_reproductions.py`` writes it)."""


@contextmanager
def reproducing(name: str) -> Iterator[None]:
    """While reproduction `name` runs: its runs and time said up front (its recorded
    time, scaled by how long the calibration run takes here now) and, on the progress
    line, the runs done and the time left, or that it runs slower than estimated."""
    ref = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {}
    known = ref.get("reproductions", {}).get(name)
    if known is None or not progress.active():
        yield
        return
    progress.step(f"{name}: timing a calibration run")
    factor = calibrate() / ref["calibration_s"]
    total, runs = known["wall_s"] * factor, known["runs"]
    what = f"{runs} run{'s' if runs != 1 else ''}, " if runs else ""
    progress.note(f"{name}: {what}about {human(total)} here "
                  f"({human(known['wall_s'])} on a quiet {ref['machine']}; a calibration run "
                  f"takes {factor:.1f}x as long here now)")
    done = threading.Event()
    with counting() as count:
        started, clock = time.monotonic(), CpuClock.now()

        def show() -> None:
            while not done.wait(1.0):
                n, spent = count(), time.monotonic() - started
                # the pace of the runs so far, or of the time alone (no runs to count)
                pace = (spent / max(total * n / runs, 1e-3) if n and runs else
                        max(1.0, spent / max(total, 1e-3)) if not runs else 1.0)
                text = (f"{n}/{runs} runs, " if runs else "") + \
                    f"about {human(max(0.0, total * pace - spent))} left"
                if (n or not runs) and pace > SLOWER:
                    busy = busy_words(CpuUse.between(clock, CpuClock.now()))
                    text += f" ({pace:.1f}x slower than estimated: the machine is busy: {busy})"
                progress.eta(text)
        t = threading.Thread(target=show, daemon=True)
        t.start()
        try:
            yield
        finally:
            done.set()
            t.join()
