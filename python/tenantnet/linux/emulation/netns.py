"""What the emulation's processes ask of the kernel: entering a network namespace from
one thread (``setns(2)`` with ``CLONE_NEWNET`` changes only the calling thread's
namespace, so one process can run every namespace's samplers, each thread in its
own), and real-time priority for the parts whose timing the run depends on."""

from __future__ import annotations

import contextlib
import ctypes
import os

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def enter(ns: str) -> None:
    """Moves the calling thread into network namespace `ns` (``ip netns`` name)."""
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into {ns}: {os.strerror(err)}")
    finally:
        os.close(fd)


REALTIME = 10
"""The real-time priority (``SCHED_FIFO``) of the traffic's senders and MBFQ's agent."""


def realtime() -> None:
    """Puts this process at real-time priority ``REALTIME``, where the machine allows
    it (root, a kernel with real-time scheduling): it then wakes at its instants ahead
    of the machine's other work."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME))
