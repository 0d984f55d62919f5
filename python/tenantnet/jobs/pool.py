"""Runs many independent jobs (a scheme under one seed, a sweep's point) on the
machine's cores, for ``compare``, ``sweep`` and the reproductions that fan out.

The workers are plain ``python`` processes started afresh (``tenantnet.jobs._worker``)
that read a job from a pipe, run it and write its result back. Unlike
:mod:`multiprocessing`'s ``spawn`` start method they never import the caller's
``__main__``: a script that calls :func:`tenantnet.compare` at its top level, without
an ``if __name__ == "__main__":`` guard, works as written. A job is a function that
can be pickled by reference (defined at the top level of an importable module) and
its arguments.
"""

from __future__ import annotations

import os
import pickle
import selectors
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from . import progress
from .interrupts import shielded

_HEADER = struct.Struct("<Q")


def machine_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1


def workers(n: int | None, jobs: int) -> int:
    """How many processes to run `jobs` on: `n`, or one per core, at most `jobs`."""
    return max(1, min(n or machine_cores(), jobs))


def share(cores: int, held: int, idle: int, left: int) -> int:
    """The cores a job starting now may take (at least one): what the running jobs
    hold (`held`) leaves of the machine's `cores`, split evenly between it and the
    jobs that can start beside it (`idle` workers, this one's included, and `left`
    jobs not yet started, this one included). Separate processes gain more than one
    run's threads, which meet every window, so a job gets several cores only where
    there are fewer jobs than cores: a small batch, or the last jobs of a large one."""
    return max(1, (cores - held) // max(1, min(idle, left)))


def plan_note(jobs: int, n: int, cores: int) -> str:
    """The split of `cores` that :func:`pool_map` makes for `jobs` jobs on `n`
    workers, in a line for the user."""
    each = share(cores, 0, n, jobs)
    plural = " each" if jobs > 1 else ""
    threads = f"one thread{plural}" if each == 1 else \
        f"up to {each} threads{plural} (under partitioned ties, when large enough to gain)"
    at = "" if jobs == 1 else ", one at a time" if n == 1 else f", {n} at a time"
    return f"{jobs} run{'s' if jobs > 1 else ''}{at} on {cores} " \
           f"core{'s' if cores > 1 else ''}: {threads}"


def send(stream: IO[bytes], obj: Any) -> None:
    """Writes `obj` to `stream`, pickled and length-prefixed."""
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(blob)) + blob)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """Reads one object :func:`send` wrote; EOFError when the stream ended."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(head)
    blob = stream.read(size)
    if len(blob) < size:
        raise EOFError
    return pickle.loads(blob)


class WorkerError(RuntimeError):
    """A job failed in a worker with an exception that could not be sent back as
    itself; the message carries the worker's traceback."""


class _Worker:
    """One worker process and the job it runs now."""

    def __init__(self) -> None:
        here = str(Path(__file__).resolve().parents[2])  # the folder holding tenantnet
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tenantnet.jobs._worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env)
        self.job: int | None = None
        self.cores = 0  # the share of the machine's cores its job may take

    @property
    def out(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def start(self, i: int, fn: Callable[..., Any], args: tuple[Any, ...],
              cores: int) -> None:
        """Starts job `i`, ``fn(*args)``, its simulations on up to `cores` cores."""
        assert self.proc.stdin is not None
        self.job, self.cores = i, cores
        send(self.proc.stdin, (fn, args, cores))

    def result(self, name: str) -> Any:
        """The running job's result (its exception raised here)."""
        try:
            status, value = receive(self.out)
        except EOFError:
            code = self.proc.wait()
            raise WorkerError(f"the worker running {name} ended (exit code {code}) "
                              "before it finished") from None
        self.job, self.cores = None, 0
        if status == "ok":
            return value
        raise value

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for s in (self.proc.stdin, self.proc.stdout):
            if s is not None:
                s.close()


class Workers:
    """Worker processes kept from one :func:`pool_map` to the next, for a caller that
    maps batch after batch (a search): ``with Workers() as w: pool_map(..., workers=w)``
    saves each batch the start of its processes. A map that ends in an error or an
    interrupt stops them all; the next map starts fresh ones."""

    def __init__(self) -> None:
        self.kept: list[_Worker] = []

    def take(self, n: int) -> list[_Worker]:
        """`n` workers, started where fewer are kept."""
        while len(self.kept) < n:
            self.kept.append(_Worker())
        return self.kept[:n]

    def close(self) -> None:
        for w in self.kept:
            w.stop()
        self.kept = []

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_: object) -> None:
        with shielded():
            self.close()


def pool_map(fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], n: int,
             label: Callable[[int, int, list[str]], str], names: Sequence[str],
             on_done: Callable[[int, Any], None] | None = None,
             workers: Workers | None = None) -> list[Any]:
    """``fn(*job)`` for every job, on `n` worker processes (in this process, one at
    a time, when `n` is 1; kept in `workers` from one call to the next when given),
    results in the jobs' order; reports progress with ``label(done, total, running
    names)`` and calls ``on_done(i, result)`` as each job finishes. A job's exception
    is raised here once the running jobs are stopped."""
    results: dict[int, Any] = {}

    def done(i: int, result: Any) -> None:
        results[i] = result
        if on_done is not None:
            on_done(i, result)

    cores = machine_cores()
    size = min(n, len(jobs))
    progress.note(plan_note(len(jobs), size, cores))
    if n == 1:
        for i, job in enumerate(jobs):
            progress.step(label(i, len(jobs), [names[i]]))
            done(i, fn(*job))
        return [results[i] for i in range(len(jobs))]
    pending = list(range(len(jobs)))
    pool = workers.take(size) if workers is not None else [_Worker() for _ in range(size)]
    sel = selectors.DefaultSelector()
    finished = False

    def start_next(w: _Worker) -> None:
        """Starts the next pending job on idle worker `w`, with its share of cores."""
        idle = sum(1 for x in pool if x.job is None)
        held = sum(x.cores for x in pool)
        i = pending.pop(0)
        w.start(i, fn, jobs[i], share(cores, held, idle, len(pending) + 1))

    try:
        for w in pool:
            sel.register(w.out, selectors.EVENT_READ, w)
            if pending:
                start_next(w)
        while len(results) < len(jobs):
            running = sorted(names[w.job] for w in pool if w.job is not None)
            progress.step(label(len(results), len(jobs), running))
            for key, _ in sel.select():
                w = key.data
                i = w.job
                done(i, w.result(names[i]))
                if pending:
                    start_next(w)
        finished = True
    finally:
        with shielded():  # a second Ctrl-C must not leave a worker writing
            sel.close()
            if workers is not None and not finished:
                workers.close()
            elif workers is None:
                for w in pool:
                    w.stop()
    return [results[i] for i in range(len(jobs))]
