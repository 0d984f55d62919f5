"""What the machine's CPUs are doing: how busy they are, and how long runnable tasks
waited for a core (the kernel's pressure stall information), between two readings.
Emulated runs judge their own fidelity by it and long commands say why they run slower
than estimated."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

PSI = Path("/proc/pressure/cpu")


@dataclass
class CpuClock:
    """The machine's CPU counters at one instant: jiffies in all and idle (``/proc/stat``),
    and the microseconds runnable tasks waited for a core (``/proc/pressure/cpu``'s
    ``some`` total; None where the kernel has no pressure information)."""

    total: int
    idle: int
    waited_us: int | None
    at: float

    @staticmethod
    def now() -> CpuClock:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        waited = None
        with contextlib.suppress(OSError, IndexError, ValueError):
            waited = int(PSI.read_text().split("total=")[1].split()[0])
        return CpuClock(sum(v[:8]), v[3] + v[4], waited, time.monotonic())


@dataclass
class CpuUse:
    """What the CPUs did between two :class:`CpuClock` readings: the share busy and the
    share of the time runnable tasks waited for a core (None: not measured)."""

    busy: float
    waiting: float | None

    @staticmethod
    def between(a: CpuClock, b: CpuClock) -> CpuUse:
        busy = 1 - (b.idle - a.idle) / max(1, b.total - a.total)
        wait = None
        if a.waited_us is not None and b.waited_us is not None and b.at > a.at:
            wait = (b.waited_us - a.waited_us) / 1e6 / (b.at - a.at)
        return CpuUse(busy, wait)




def busy_words(use: CpuUse) -> str:
    """What the CPUs did, in words: how long tasks waited for a core, or how busy they
    were where the kernel does not say."""
    if use.waiting is not None:
        return f"tasks waited for a core {100 * use.waiting:.0f} % of the time"
    return f"CPUs {100 * use.busy:.0f} % busy"
