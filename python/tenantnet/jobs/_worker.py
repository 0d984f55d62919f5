"""A worker of :mod:`tenantnet.jobs.pool`: reads ``(function, arguments, cores)`` jobs
from standard input, runs each (its simulations on up to ``cores`` of the machine's
cores, :data:`tenantnet.sim.scenario.CORES_ENV`) and writes ``("ok", result)`` or
``("error", exception)`` back on what was standard output, until its input ends.
Anything the jobs print goes to standard error, so that it cannot corrupt the
replies. It ignores Ctrl-C: the process that started it stops it."""

from __future__ import annotations

import os
import signal
import sys
import traceback

from ..sim.scenario import CORES_ENV
from .pool import WorkerError, receive, send


def main() -> None:

    # Ctrl-C reaches the whole process group: the caller stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    jobs = sys.stdin.buffer
    while True:
        try:
            fn, args, cores = receive(jobs)
        except EOFError:
            return
        os.environ[CORES_ENV] = str(cores)  # this job's share of the machine's cores
        try:
            reply = ("ok", fn(*args))
        except Exception as e:  # sent back to be raised in the caller
            if hasattr(e, "add_note"):
                e.add_note("raised in a worker process:\n" + traceback.format_exc())
            reply = ("error", e)
        try:
            send(replies, reply)
        except Exception:  # the result or the exception does not pickle
            text = traceback.format_exc()
            send(replies, ("error", WorkerError(f"{type(reply[1]).__name__}: {text}")))


if __name__ == "__main__":
    main()
