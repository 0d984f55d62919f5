"""Entering a network namespace from one thread: ``setns(2)`` with ``CLONE_NEWNET``
changes only the calling thread's namespace, so one process can run every namespace's
sockets, samplers and agents, each thread in its own."""

from __future__ import annotations

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
