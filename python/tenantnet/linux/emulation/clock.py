"""The emulation's sampling instants, shared by the port samplers and the traffic
generator's receivers: every ``step`` seconds from ``t0`` on the monotonic clock,
which every process of the run reads alike.

The first sample, the counters' values at the start, is taken ``LEAD_S`` before
``t0``: no flow sends data before ``t0``, so the counters do not move in between, and a
first sample that a busy machine held up past ``t0`` (by 33 ms, when the senders'
first bursts filled both cores) would otherwise count the first milliseconds' data as
already there at the start."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

LEAD_S = 0.01


def due(t0: float, step: float, k: int) -> float:
    """When sample `k` is due (monotonic clock)."""
    return t0 - LEAD_S if k == 0 else t0 + k * step


def stamp(t0: float, k: int) -> float:
    """The time (s after `t0`) of sample `k` taken now: the start for the first."""
    return 0.0 if k == 0 else time.monotonic() - t0


def instants(t0: float, step: float, n: int, done: threading.Event) -> Iterator[float]:
    """Waits for each sample's instant, k = 0..n, and yields when it woke (s after
    `t0`, :func:`stamp`; a thread wakes late now and then, and the tables
    interpolate); stops early once `done` is set."""
    for k in range(n + 1):
        wait = due(t0, step, k) - time.monotonic()
        if wait > 0 and done.wait(wait):
            return
        yield stamp(t0, k)
