"""Progress on a terminal: what a long command is doing now.

The command line opens a display (:func:`showing`) on standard error when it is a
terminal; code anywhere below reports into it with :func:`step` (a phase: "running
BarberQ (2/3)", "writing report: figure 4/8") and :func:`sim_progress` (a bar of
simulated time, which :func:`tenantnet.run` feeds). Without a display, or from Python,
both do nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Progress = Callable[[float, float, int], None]
"""Called after each chunk of a simulation with (simulated seconds done, seconds to
run, events so far)."""


class Display:
    """One transient line on stderr: a spinner, the current step, a bar of simulated
    time while a simulation runs, and the time elapsed."""

    def __init__(self) -> None:
        # deferred for start-up: loads rich
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress
        self._bar = RichProgress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=24),
            TextColumn("{task.fields[sim]}"), TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=Console(stderr=True), transient=True)
        self._task = self._bar.add_task("", total=None, sim="", eta="")
        self._started = time.monotonic()

    def start(self) -> None:
        self._bar.start()

    def stop(self) -> None:
        self._bar.stop()

    def eta(self, text: str) -> None:
        """Shows ``text`` (how long the whole command has left) at the line's end."""
        self._bar.update(self._task, eta=text)

    def note(self, text: str) -> None:
        """Prints ``text`` above the progress line, where it stays."""
        self._bar.console.print(text, markup=False, highlight=False)

    def step(self, text: str) -> None:
        """Shows ``text`` as the current step; the bar idles until a simulation runs."""
        self._started = time.monotonic()
        self._bar.update(self._task, description=text, total=None, completed=0, sim="",
                         refresh=True)

    def sim(self, now: float, end: float, events: int) -> None:
        """A simulation of ``end`` seconds is at ``now``."""
        wall = max(time.monotonic() - self._started, 1e-9)
        self._bar.update(self._task, total=1.0, completed=now / end if end else 1.0,
                         sim=f"{now * 1e3:.1f}/{end * 1e3:.1f} ms simulated, "
                             f"{events / wall / 1e6:.1f} M events/s")


_display: ContextVar[Display | None] = ContextVar("tenantnet_display", default=None)
_notes: ContextVar[bool] = ContextVar("tenantnet_notes", default=False)


@contextmanager
def showing(enabled: bool = True) -> Iterator[Display | None]:
    """Shows progress on stderr for the duration, if ``enabled`` and stderr is a
    terminal; :func:`note` prints its lines to stderr if ``enabled``, terminal or not."""
    notes = _notes.set(enabled)
    try:
        if not (enabled and sys.stderr.isatty()):
            yield None
            return
        d = Display()
        token = _display.set(d)
        d.start()
        try:
            yield d
        finally:
            d.stop()
            _display.reset(token)
    finally:
        _notes.reset(notes)


def active() -> bool:
    """Whether a command shows its progress (what is worth timing for it)."""
    return _notes.get()


def note(text: str) -> None:
    """A line for the user of a long command (what it will run and how long that
    takes): on stderr, above the progress line; nothing from Python or with -q."""
    if not _notes.get():
        return
    d = _display.get()
    if d is not None:
        d.note(text)
    else:
        print(text, file=sys.stderr, flush=True)


def step(text: str) -> None:
    """Reports the current step of a long task (nothing without a display)."""
    d = _display.get()
    if d is not None:
        d.step(text)


def sim_progress() -> Progress | None:
    """A progress callback for a simulation, if a display is open."""
    d = _display.get()
    return d.sim if d is not None else None


def steps(items: list[Any], label: Callable[[Any], str]) -> Iterator[Any]:
    """Iterates ``items``, reporting ``label(item) (i/n)`` for each."""
    for i, x in enumerate(items, start=1):
        step(f"{label(x)} ({i}/{len(items)})")
        yield x


def eta(text: str) -> None:
    """Shows how long the whole command has left (nothing without a display)."""
    d = _display.get()
    if d is not None:
        d.eta(text)
