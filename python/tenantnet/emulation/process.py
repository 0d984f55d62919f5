"""The traffic generator in a process of its own (forked), so that its threads' many
socket calls do not hold up the samplers' clocks in the emulation's process (threads
contend for one interpreter lock)."""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass
from typing import Any

from .traffic import FlowPlan, Samples, Traffic


@dataclass
class Outcome:
    """What the traffic process reports at its end."""

    ended: dict[int, float]
    retransmits: dict[int, int]
    late_s: float
    errors: list[str]
    samples: Samples
    slots: int
    """How many flow numbers the samples cover."""


class TrafficProcess:
    """Runs :class:`Traffic` in a forked process: :meth:`open` (receivers listening),
    :meth:`start` (the flows at their times), :meth:`finish` (its report)."""

    def __init__(self, flows: list[FlowPlan], duration: float, cc: str,
                 interval: float) -> None:
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child, args=(flows, duration, cc, interval, child),
                                 daemon=True)

    def open(self) -> None:
        """Starts the process and waits for its receivers to listen."""
        self._proc.start()
        if not self._conn.poll(15):
            raise RuntimeError("the traffic generator did not start in 15 s")
        msg = self._conn.recv()
        if msg != "ready":
            raise RuntimeError(str(msg))

    def start(self, t0: float) -> None:
        """Starts the flows at their times after `t0` (``time.monotonic``, the same
        clock in both processes)."""
        self._conn.send(t0)

    def finish(self, timeout: float) -> Outcome:
        """Waits for the process's report (its run ends by itself) and ends it."""
        try:
            if not self._conn.poll(timeout):
                raise RuntimeError(f"the traffic generator did not report in {timeout:g} s")
            out: Outcome = self._conn.recv()
            return out
        finally:
            self.close()

    def close(self) -> None:
        """Ends the process if it still runs."""
        if self._proc.is_alive():
            self._proc.terminate()
        if self._proc.pid is not None:
            self._proc.join(5)


def _child(flows: list[FlowPlan], duration: float, cc: str, interval: float,
           conn: Any) -> None:
    try:
        t = Traffic(flows, duration, cc, interval)
        try:
            t.listen()
        except (OSError, RuntimeError) as e:
            conn.send(f"the receivers did not start: {e}")
            return
        conn.send("ready")
        t.start(float(conn.recv()))
        t.wait()
        time.sleep(min(0.05, interval))  # the last sample
        t.stop()
        slots = max((f.flow_id for f in flows), default=-1) + 1
        conn.send(Outcome(dict(t.ended), dict(t.retransmits), t.late_s, list(t.errors),
                          t.samples, slots))
    except (KeyboardInterrupt, SystemExit, BrokenPipeError, EOFError):
        pass
