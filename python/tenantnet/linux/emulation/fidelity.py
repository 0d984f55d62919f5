"""Whether an emulated run can be trusted: what the machine did to it, measured while it
ran, and a plain verdict.

An emulation runs in real time on a machine that may be doing other work. Where that
work holds up the emulation's parts, the run's numbers say more about the machine
than about the scheme. Each run measures, for its own parts:

* **the flows' starts**: how late each flow's sender began after its scheduled start
  (a flow that starts late shifts its demand, and MBFQ's ramp-up reads a VM that fills
  its rate late as not using it);
* **MBFQ's agent**: how long after each macro-interval's instant the rates it set were
  in force (the simulator sets them at the instant);
* **the queues**: what each rate-limited queue sent (a VM's class on a host's NIC, a
  port with one queue) in the sampling intervals in which it had packets waiting at
  both ends, against what its rate allowed in that time. A queue with a backlog sends
  at its rate unless the machine cannot forward its packets in time;
* **the CPUs**: how busy they were, and the share of the run in which runnable tasks
  waited for a core (the kernel's pressure stall information, ``/proc/pressure/cpu``),
  as context: a busy machine is not by itself a wrong run.

A run is trusted when every measure of its own parts is within its limit
(``LIMITS``); otherwise the verdict says which measure is over, by how much, and that
the machine was too busy for the run's numbers to be trusted.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...jobs.machine import CpuUse, busy_words

START_LATE_S = 0.02
"""A flow whose data starts later than this after its scheduled start: a fifth of
MBFQ's macro-interval, 2 % of a one-second phase."""
AGENT_LATE_S = 0.025
"""New rates in force later than this after their instant (the median over the run):
a quarter of MBFQ's macro-interval."""
PORT_RATE = 0.9
"""Queues that sent less than this share of what their rates allowed while they had a
backlog (all of them together)."""
MIN_INTERVALS = 5
"""The backlogged intervals a queue needs to be judged (and half of its intervals)."""
LIMITS = {"start": START_LATE_S, "agent": AGENT_LATE_S, "sent": PORT_RATE}


@dataclass
class Fidelity:
    """An emulated run's measures of itself (module doc) and the verdict."""

    start_late_s: tuple[float, float]
    """The flows' start lateness: median and largest (s)."""
    agent_late_s: tuple[float, float] | None
    """MBFQ's rates in force after their instant: median and largest (s); None
    without the agent."""
    sent: tuple[float, float] | None
    """What the queues sent while they had a backlog over what their rates allowed:
    all of them, and the lowest queue's; None where none had one."""
    cpu: CpuUse | None
    over: list[str] = field(default_factory=list)
    """Each measure over its limit, in words; empty when the run is trusted."""

    @property
    def trusted(self) -> bool:
        return not self.over

    @property
    def verdict(self) -> str:
        """Whether the run can be trusted, and if not, which measures are over."""
        if self.trusted:
            return "trusted: the machine kept up, every measure within its limit"
        return ("NOT TRUSTED: the machine was too busy for these numbers (" +
                "; ".join(self.over) + "): run it again on a quieter machine")

    def measures(self) -> list[str]:
        """A line per measure: what it measured, and its limit."""
        rows = [("flows' starts", f"{_ms(self.start_late_s[0])} late at the median, "
                 f"{_ms(self.start_late_s[1])} at most", f"at most {_ms(START_LATE_S)}")]
        if self.agent_late_s is not None:
            rows.append(("MBFQ's agent", f"rates in force {_ms(self.agent_late_s[0])} late "
                         f"at the median, {_ms(self.agent_late_s[1])} at most",
                         f"median {_ms(AGENT_LATE_S)}"))
        if self.sent is not None:
            rows.append(("queues", f"sent {_pct(self.sent[0], 1)} of their rates while "
                         f"backlogged, the lowest {_pct(self.sent[1], 1)}",
                         f"at least {_pct(PORT_RATE)}"))
        if self.cpu is not None:
            rows.append(("CPUs", f"{_pct(self.cpu.busy)} busy" + (
                f", {busy_words(self.cpu)}" if self.cpu.waiting is not None else ""),
                "context"))
        width = max(len(r[1]) for r in rows)
        return [f"{n:<15}{m:<{width}}  ({lim})" for n, m, lim in rows]

    def lines(self, width: int = 100) -> list[str]:
        """The verdict (wrapped at `width`), then the measures, for the terminal."""
        return [*textwrap.wrap(self.verdict, width, subsequent_indent="  "),
                *("  " + m for m in self.measures())]

    def as_dict(self) -> dict[str, Any]:
        """For ``summary.json``: every measure and the verdict."""
        return {
            "trusted": self.trusted, "over": list(self.over),
            "start_late_s": {"median": _r(self.start_late_s[0]),
                             "max": _r(self.start_late_s[1])},
            "agent_late_s": None if self.agent_late_s is None else
            {"median": _r(self.agent_late_s[0]), "max": _r(self.agent_late_s[1])},
            "sent_while_backlogged": None if self.sent is None else
            {"all": _r(self.sent[0]), "lowest": _r(self.sent[1])},
            "cpu_busy": None if self.cpu is None else _r(self.cpu.busy),
            "cpu_waiting": None if self.cpu is None or self.cpu.waiting is None
            else _r(self.cpu.waiting)}


def _pct(x: float, decimals: int = 0) -> str:
    return f"{100 * x:.{decimals}f} %"


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"


def _r(x: float) -> float:
    return round(float(x), 6)


def sent_while_backlogged(series: list[tuple[list[float], list[tuple[int, int, int]]]]
                          ) -> tuple[float, float] | None:
    """What the queues sent while they had a backlog, over what their rates allowed in
    that time: over all of them, and the lowest queue's. Each queue is its sampling
    times (s) and samples of (bytes sent, backlog in bytes, rate in bit/s); an
    interval counts when the queue had a backlog at both ends and the same rate, and
    a queue counts when at least ``MIN_INTERVALS`` of its intervals, and half of them,
    do (None: none counts). A queue with a backlog all along sends at its rate, give
    or take a packet; over many intervals the packets even out. One with a backlog at
    a few instants (bursts on a port with room to spare) may have been idle between
    them: two instants 10 ms apart say nothing of the time between, and such ports
    read 46-116 % of their rates on a leaf-spine whose machine kept up."""
    total = [0.0, 0.0]
    lowest = None
    for times, samples in series:
        sent = allowed = 0.0
        n = 0
        for k in range(1, len(samples)):
            (b0, q0, r0), (b1, q1, r1) = samples[k - 1], samples[k]
            if q0 > 0 and q1 > 0 and r0 == r1 and times[k] > times[k - 1]:
                sent += (b1 - b0) * 8
                allowed += r1 * (times[k] - times[k - 1])
                n += 1
        if n < MIN_INTERVALS or 2 * n < len(samples) - 1:
            continue
        total[0] += sent
        total[1] += allowed
        lowest = min(lowest if lowest is not None else math.inf, sent / allowed)
    if not total[1]:
        return None
    overall = total[0] / total[1]
    return overall, min(overall, lowest if lowest is not None else overall)


def judge(start_late: list[float], agent_late: list[float] | None,
          sent: tuple[float, float] | None, cpu: CpuUse | None) -> Fidelity:
    """The verdict on a run's measures: each flow's start lateness, each of the agent's
    runs' lateness (None without the agent), what the queues sent while they had a
    backlog (:func:`sent_while_backlogged`) and the CPUs' use."""
    s = np.asarray(start_late or [0.0], dtype=float)
    f = Fidelity((float(np.median(s)), float(s.max())), None, None, cpu)
    if s.max() > START_LATE_S:
        late = int((s > START_LATE_S).sum())
        f.over.append(f"{late} of {len(s)} flows started over {_ms(START_LATE_S)} late, "
                      f"one {_ms(float(s.max()))}")
    if agent_late:
        a = np.asarray(agent_late, dtype=float)
        f.agent_late_s = (float(np.median(a)), float(a.max()))
        if f.agent_late_s[0] > AGENT_LATE_S:
            f.over.append(f"MBFQ's rates were in force {_ms(f.agent_late_s[0])} late at "
                          "the median")
    f.sent = sent
    if sent is not None and sent[0] < PORT_RATE:
        f.over.append(f"queues with a backlog sent {_pct(sent[0], 1)} of their rates: packets "
                      "were not forwarded in time")
    return f
