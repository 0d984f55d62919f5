"""MBFQ's agent on a Linux host: every macro-interval T it reads the bytes each VM's
HTB class sent and the NIC's top class sent, runs MBFQ's macroscheduler on the send
rates (``_core.Macroscheduler``: the simulator's own code, through the binding) and
sets each VM class's rate and ceiling to its allocated rate AR, or to the NIC's rate
while the macroscheduler has the microschedulers off (NIC under 80 % busy).

Each agent runs in a process of its own (forked, at real-time priority where the
machine allows it): in the process of the samplers, waiting for the interpreter lock
delayed its reads by 9 ms at the median, and a read late by d ms in a 100 ms interval
misreads the send rates by up to d %, which is enough to stop MBFQ's ramp-up (it
needs SR > 0.95 × AR).

Where Linux differs from the simulator: a VM's microscheduler switched off is an HTB
class at the NIC's rate, so VMs without a limit share the NIC by HTB's round robin
rather than in one FIFO.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..linux_tc import ROOT, TOP, Plan
from .netns import enter


@dataclass
class Agent:
    """The agent of the host whose NIC has plan `plan` (its VM classes carry each VM's
    tenant and guarantee), in namespace `ns` (None: this process's); `table` is the
    scenario's ``[vswitch.mbfq]`` as JSON. With `record`, every decision is kept in
    ``rows`` (the ``vm_rates`` table); `say` is told each one in words."""

    ns: str | None
    plan: Plan
    table: str
    record: bool = True
    say: Callable[[str], None] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""

    def run_here(self, seconds: float | None = None) -> None:
        """Runs the agent in this process (``deploy linux --apply``) for `seconds`
        (None: until interrupted)."""
        if self.ns:
            enter(self.ns)
        from pyroute2 import IPRoute
        with IPRoute() as ipr:
            self._loop(ipr, time.monotonic(), math.inf if seconds is None else seconds,
                       threading.Event())

    def start(self, t0: float, end: float) -> None:
        """Forks the agent's process, which runs from `t0` for `end` seconds (fork
        before starting threads: a forked child has only the forking thread)."""
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=self._child, args=(t0, end, child), daemon=True)
        self._proc.start()

    def collect(self, timeout: float) -> None:
        """Waits for the process's rows (or its error) and ends it."""
        try:
            if self._conn.poll(timeout):
                self.rows, self.error = self._conn.recv()
            else:
                self.error = f"MBFQ agent in {self.ns}: no report in {timeout:g} s"
        except EOFError:
            self.error = f"MBFQ agent in {self.ns}: exited ({self._proc.exitcode})"
        finally:
            self.stop()

    def stop(self) -> None:
        """Ends the process if it still runs."""
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.is_alive():
            proc.terminate()
        if proc is not None and proc.pid is not None:
            proc.join(5)

    def _child(self, t0: float, end: float, conn: Any) -> None:
        try:
            # ahead of the traffic's threads for the CPU, where allowed
            with contextlib.suppress(OSError, AttributeError):
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            if self.ns:
                enter(self.ns)
            from pyroute2 import IPRoute
            try:
                with IPRoute() as ipr:
                    self._loop(ipr, t0, end, threading.Event())
            except Exception as e:
                self.error = f"MBFQ agent in {self.ns}: {e}"
            conn.send((self.rows, self.error))
        except (KeyboardInterrupt, SystemExit, BrokenPipeError):
            pass

    def _loop(self, ipr: Any, t0: float, end: float, done: threading.Event) -> None:
        vms = self.plan.vms
        c = float(self.plan.nic_bps)
        m = _core.Macroscheduler(self.table, c, len(vms))
        idx = ipr.link_lookup(ifname=self.plan.dev)[0]
        mg = [float(v.guarantee_bps) for v in vms]
        w = [g / c for g in mg]
        if done.wait(max(0.0, t0 - time.monotonic())):
            return
        then = time.monotonic()
        last = _bytes(ipr, idx)
        k = 1
        while True:
            at = t0 + k * m.interval_s
            if at > t0 + end + 1e-9 or done.wait(max(0.0, at - time.monotonic())):
                return
            when = time.monotonic()  # just before the kernel reads the counters
            now = _bytes(ipr, idx)
            t = when - then  # the interval measured, not the nominal T
            sr = [(now.get(v.minor, 0) - last.get(v.minor, 0)) * 8 / t for v in vms]
            util = (now.get(TOP, 0) - last.get(TOP, 0)) * 8 / t / c
            last, then = now, when
            decision = m.run(util, sr, mg, w)
            ar: list[float | None] = list(decision[0]) if decision else [None] * len(vms)
            tr: list[float | None] = list(decision[1]) if decision else [None] * len(vms)
            for v, a in zip(vms, ar, strict=True):
                rate = max(1, round(a)) if a is not None else self.plan.nic_bps
                ipr.tc("change-class", "htb", idx, (ROOT << 16) | v.minor,
                       parent=(ROOT << 16) | TOP, rate=f"{rate}bit", ceil=f"{rate}bit",
                       burst=self.plan.burst(rate), cburst=self.plan.burst(rate))
            self._decided(k * m.interval_s, sr, ar, tr, m.ru, util)
            k += 1


    def _decided(self, at: float, sr: list[float], ar: list[float | None],
                 tr: list[float | None], ru: list[int], util: float) -> None:
        vms = self.plan.vms
        if self.record:
            self.rows += [{
                "time_s": round(at, 9), "vm": v.vm, "tenant": v.tenant,
                "send_gbps": sr[i] / 1e9, "allocated_gbps": _gbps(ar[i]),
                "target_gbps": _gbps(tr[i]), "ru": int(ru[i]),
                "guarantee_gbps": v.guarantee_bps / 1e9, "nic_utilization": util}
                for i, v in enumerate(vms)]
        if self.say is not None:
            self.say(f"{at:.1f} s: NIC {util:.0%} busy; " + (", ".join(
                f"{v.vm} sent {sr[i] / 1e9:.3f}, gets {_text(ar[i])} Gb/s"
                for i, v in enumerate(vms)) if ar[0] is not None or not vms else
                "microschedulers off"))


def _text(bps: float | None) -> str:
    return "any" if bps is None else f"{bps / 1e9:.3f}"


def _gbps(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e9


def _bytes(ipr: Any, idx: int) -> dict[int, int]:
    """Bytes sent by each HTB class of the device, by minor handle."""
    out = {}
    for msg in ipr.get_classes(index=idx):
        s2 = msg.get_attr("TCA_STATS2")
        basic = s2.get_attr("TCA_STATS_BASIC") if s2 else None
        if basic:
            out[msg["handle"] & 0xFFFF] = int(basic["bytes"])
    return out
