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

The send rates are measured over the span the last rates were in force: from just
after the agent set them to its next reading, not over the nominal T. Reading the
counters, running the macroscheduler and setting two classes over netlink takes the
agent 3-9 ms; over the nominal T, a VM lifted from 18 Mb/s to 600 Mb/s spent those
milliseconds at 18 Mb/s and read about 0.9 × AR, under the 0.95 that the next step
needs, so that every big step cost a whole interval (the demo's web VMs 17 % short in
the phase in which they start). The simulator sets its rates at the instant, so its
T is that span.

Where packets are large, a count of bytes is coarse: HTB counts a packet whole when it
sends it, and at the emulation's rates a packet of 8 segments takes 8 ms of a 12 Mb/s
class, so that a VM that used its whole rate read 93.5 % of it in one interval of two,
under the 95 % MBFQ's ramp-up needs (the simulator's packets are 1.2 ms at that rate).
A class that had packets waiting at both readings did use its rate: it is credited up
to one packet, never past its rate (:func:`send_rate`). A class that was short of its
rate by more than a packet stays short.

Where Linux differs from the simulator: a VM's microscheduler switched off is an HTB
class that may borrow the whole NIC, at an equal share of it otherwise
(:meth:`tenantnet.linux.tc.Plan.vm_rates`), so VMs without a limit share the NIC by
HTB's round robin rather than in one FIFO.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ... import _core
from ..tc import ROOT, TOP, Plan
from .netns import enter, realtime
from .sampler import read_classes


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
    packet_bytes: int = 65536 + 14
    """The largest packet the NIC's classes send (bytes on the wire): a TSO packet,
    64 KB on a hypervisor's NIC, as the emulation's ports make them."""
    lateness: list[tuple[float, float]] = field(default_factory=list)
    """Each run's lateness (s after its nominal instant): when it read the counters,
    and when the rates it set were in force."""

    def run_here(self, seconds: float | None = None) -> None:
        """Runs the agent in this process (``deploy linux --apply``) for `seconds`
        (None: until interrupted)."""
        if self.ns:
            enter(self.ns)
        # deferred: pyroute2 is the optional ``linux`` extra
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
                self.rows, self.error, self.lateness = self._conn.recv()
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
            realtime()
            if self.ns:
                enter(self.ns)
            # deferred: pyroute2 is the optional ``linux`` extra
            from pyroute2 import IPRoute
            try:
                with IPRoute() as ipr:
                    self._loop(ipr, t0, end, threading.Event())
            except Exception as e:
                self.error = f"MBFQ agent in {self.ns}: {e}"
            conn.send((self.rows, self.error, self.lateness))
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
        last = read_classes(ipr, idx)
        ar: list[float | None] = [None] * len(vms)
        k = 1
        while True:
            at = t0 + k * m.interval_s
            if at > t0 + end + 1e-9 or done.wait(max(0.0, at - time.monotonic())):
                return
            when = time.monotonic()  # just before the kernel reads the counters
            now = read_classes(ipr, idx)
            # the span the last rates were in force: from when they were set
            t = when - then
            sr = [send_rate(now[v.minor].tx_bytes - last[v.minor].tx_bytes, t,
                            min(now[v.minor].backlog, last[v.minor].backlog) > 0, a,
                            self.packet_bytes) for v, a in zip(vms, ar, strict=True)]
            util = (now[TOP].tx_bytes - last[TOP].tx_bytes) * 8 / t / c
            decision = m.run(util, sr, mg, w)
            ar = list(decision[0]) if decision else [None] * len(vms)
            tr: list[float | None] = list(decision[1]) if decision else [None] * len(vms)
            for v, a in zip(vms, ar, strict=True):
                rate, ceil = self.plan.vm_rates(max(1, round(a)) if a is not None
                                                else self.plan.nic_bps)
                ipr.tc("change-class", "htb", idx, (ROOT << 16) | v.minor,
                       parent=(ROOT << 16) | TOP, rate=f"{rate}bit", ceil=f"{ceil}bit",
                       burst=self.plan.burst(rate), cburst=self.plan.burst(ceil))
            last, then = read_classes(ipr, idx), time.monotonic()
            self.lateness.append((when - at, then - at))
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


def send_rate(sent: int, span: float, backlogged: bool, rate: float | None,
              packet: int) -> float:
    """SR: a VM class's `sent` bytes over `span` seconds. A class that had packets
    waiting at both readings (`backlogged`) while a microscheduler held it at `rate`
    is credited up to one packet of `packet` bytes, never past `rate`: HTB counts a
    packet whole when it sends it, so a counter read at an arbitrary instant is up to
    a packet ahead of what the rate has allowed, and a count between two such
    readings is up to a packet short of it (module doc)."""
    sr = sent * 8 / span
    if backlogged and rate is not None:
        return max(sr, min(rate, sr + packet * 8 / span))
    return sr
