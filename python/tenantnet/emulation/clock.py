"""The emulation's sampling instants, shared by the port samplers and the traffic
generator's flow sampler: every ``step`` seconds from ``t0`` on the monotonic clock,
which every process of the run reads alike."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator


def instants(t0: float, step: float, n: int, done: threading.Event) -> Iterator[float]:
    """Waits for ``t0 + k·step``, k = 0..n, and yields when it woke (s after `t0`; a
    thread wakes late now and then, and the tables interpolate); stops early once
    `done` is set."""
    for k in range(n + 1):
        wait = t0 + k * step - time.monotonic()
        if wait > 0 and done.wait(wait):
            return
        yield time.monotonic() - t0
