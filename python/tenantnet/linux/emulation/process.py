"""The traffic generator's loops in processes of their own (forked): one per receiving
namespace (:class:`.receivers.Receivers`) and one per sending VM (or host, for flows
of no VM: :class:`.traffic.Senders`), as each VM runs its own stack. Each loop is one
thread, so no flow waits for another's turn at an interpreter lock, a VM's flow
starts are not held up by another VM's sends, and the loops use every core the
machine gives them."""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

from .netns import realtime
from .receivers import Receivers
from .traffic import FlowPlan, Report, Senders


def _loops(flows: list[FlowPlan], duration: float, cc: str,
           interval: float) -> list[Receivers | Senders]:
    """The receiving loops (first: they listen before anyone connects), then the
    sending ones."""
    slots = max((f.flow_id for f in flows), default=-1) + 1
    sizes = {f.flow_id: f.size for f in flows}
    addrs: dict[str, list[str]] = {}
    sends: dict[tuple[str, str], list[FlowPlan]] = {}
    for f in flows:
        if f.dst_addr not in addrs.setdefault(f.dst_ns, []):
            addrs[f.dst_ns].append(f.dst_addr)
        sends.setdefault((f.src_ns, f.src_addr), []).append(f)
    out: list[Receivers | Senders] = [
        Receivers(ns, sorted(a), sizes, slots, duration, interval)
        for ns, a in sorted(addrs.items())]
    out += [Senders(ns, sorted(fs, key=lambda f: (f.start_s, f.flow_id)), duration, cc)
            for (ns, _), fs in sorted(sends.items())]
    return out


class TrafficProcess:
    """Runs the traffic's loops in forked processes: :meth:`open` (receivers
    listening), :meth:`start` (the flows at their times), :meth:`finish` (the loops'
    reports, merged)."""

    def __init__(self, flows: list[FlowPlan], duration: float, cc: str,
                 interval: float) -> None:
        ctx = mp.get_context("fork")
        self._conns = []
        self._procs = []
        for loop in _loops(flows, duration, cc, interval):
            conn, child = ctx.Pipe()
            self._conns.append(conn)
            self._procs.append(ctx.Process(target=_child, args=(loop, child), daemon=True))

    def open(self) -> None:
        """Starts the processes and waits for every receiver to listen."""
        for p in self._procs:
            p.start()
        for conn in self._conns:
            if not conn.poll(15):
                raise RuntimeError("the traffic generator did not start in 15 s")
            msg = conn.recv()
            if msg != "ready":
                raise RuntimeError(str(msg))

    def start(self, t0: float) -> None:
        """Starts the flows at their times after `t0` (``time.monotonic``, the same
        clock in every process)."""
        for conn in self._conns:
            conn.send(t0)

    def finish(self, timeout: float) -> Report:
        """Waits for every loop's report (each run ends by itself) and ends them."""
        out = Report()
        until = time.monotonic() + timeout
        try:
            for conn in self._conns:
                if not conn.poll(max(0.0, until - time.monotonic())):
                    raise RuntimeError(f"the traffic generator did not report in "
                                       f"{timeout:g} s")
                out.merge(conn.recv())
            return out
        finally:
            self.close()

    def close(self) -> None:
        """Ends the processes that still run."""
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            if p.pid is not None:
                p.join(5)


def _child(loop: Receivers | Senders, conn: Any) -> None:
    if isinstance(loop, Senders):
        # a sender sleeps until its flows' starts; at real-time priority, where allowed,
        # it wakes for them ahead of the machine's other work (as MBFQ's agent does)
        realtime()
    try:
        if isinstance(loop, Receivers):
            try:
                loop.listen()
            except OSError as e:
                conn.send(f"the receivers in {loop.ns} did not start: {e}")
                return
        conn.send("ready")
        t0 = float(conn.recv())
        try:
            loop.run(t0)
        except OSError as e:
            loop.report.errors.append(f"traffic in {loop.ns}: {e}")
        conn.send(loop.report)
    except (KeyboardInterrupt, SystemExit, BrokenPipeError, EOFError):
        pass
