"""Ctrl-C: the first press stops the command; the cleanup it sets off (removing a
half-written folder, stopping worker processes) runs to its end whatever presses
follow.

SIGINT reaches a process through whichever of its threads does not block it, and
tenantnet's processes have many (the simulator's, pyarrow's, the progress line's).
Blocking the signal in the main thread alone therefore holds nothing back: another
thread takes it, and Python runs its handler in the main thread at the next
instruction, in the middle of the cleanup. What holds is the handler itself, which
always runs in the main thread: :func:`shielded` swaps in one that only counts the
presses while the cleanup runs, and the command line (:func:`stop_once`) keeps
later presses from interrupting what the first one started.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: Presses after the first one that a stopping command takes without ending at
#: once: a terminal's Ctrl-C pressed twice, or passed on by a wrapper in the same
#: process group, must not cut the cleanup short; one more press ends the process
#: where it stands.
PATIENCE = 2


@contextmanager
def shielded() -> Iterator[None]:
    """Holds Ctrl-C back while a cleanup runs (in the main thread; elsewhere it does
    nothing, as no handler runs there). A press during the cleanup is handed to the
    handler that was in place once the cleanup is done (by default: a
    KeyboardInterrupt raised then)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[FrameType | None] = []
    old = signal.signal(signal.SIGINT, lambda _s, frame: pressed.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if pressed and callable(old):
            old(signal.SIGINT, pressed[-1])


def stop_once(message: str = "interrupted") -> None:
    """Makes Ctrl-C stop this process once: the first press raises KeyboardInterrupt
    as Python's own handler does; the next :data:`PATIENCE` presses are taken
    without a word while that interrupt unwinds (the process is on its way out);
    one more prints `message` and ends the process at once with exit code 130. A
    process that ignores SIGINT (started in the background) keeps ignoring it."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    signal.signal(signal.SIGINT, _counting(message))


def _counting(message: str) -> Callable[[int, FrameType | None], None]:
    presses = 0

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            raise KeyboardInterrupt
        if presses > 1 + PATIENCE:
            print(message, file=sys.stderr, flush=True)
            os._exit(130)
    return on_sigint
