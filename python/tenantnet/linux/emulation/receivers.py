"""The receiving side of the emulation's traffic (:mod:`.traffic`): every connection
to one namespace's addresses in one single-threaded loop, which also samples what each
of its flows has delivered (``tcpi_bytes_received``) at the run's sampling instants."""

from __future__ import annotations

import contextlib
import selectors
import socket
import time

from .clock import due
from .netns import enter
from .traffic import HEADER, IDLE_S, PORT, Report, Samples, set_buffers, tcp_info

LINGER_S = 0.1
"""How long the receivers read on after the run's end."""


class Receivers:
    """Listens at `addrs` in namespace `ns` and reads every connection to them;
    `sizes` gives each flow's size (None: long-lived), `slots` how many flow numbers a
    sample covers."""

    def __init__(self, ns: str, addrs: list[str], sizes: dict[int, int | None],
                 slots: int, duration: float, interval: float) -> None:
        self.ns, self.addrs, self.sizes = ns, addrs, sizes
        self.duration, self.interval = duration, interval
        self.report = Report(samples=[Samples()])
        self._final = [0] * slots
        self._open: dict[int, socket.socket] = {}
        self._sel = selectors.DefaultSelector()
        self._conns: dict[socket.socket, list[int]] = {}  # [flow, bytes; -1 before header]
        self._buf = bytearray(1 << 20)

    def listen(self) -> None:
        """Opens a listener at every address (before the senders connect)."""
        enter(self.ns)
        for addr in self.addrs:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            set_buffers(s)  # accepted connections inherit them
            s.bind((addr, PORT))
            s.listen(1024)
            s.setblocking(False)
            self._sel.register(s, selectors.EVENT_READ, None)

    def run(self, t0: float) -> None:
        """Reads until the run's end (and ``LINGER_S`` more, so that no sender
        finds its connection closed before it stops), sampling at the run's
        instants (:mod:`.clock`)."""
        n = round(self.duration / self.interval)
        k = 0
        end = t0 + self.duration + LINGER_S
        try:
            while (now := time.monotonic()) < end:
                at = due(t0, self.interval, k) if k <= n else end
                if k <= n and now >= at:
                    self._sample(t0, k)
                    k += 1
                    continue
                wake = min(at, now + IDLE_S)
                for key, _ in self._sel.select(max(0.0, wake - time.monotonic())):
                    c = key.fileobj
                    assert isinstance(c, socket.socket)
                    if key.data is None:
                        self._accept(c)
                    elif not self._read(c, t0):
                        self._sel.unregister(c)
                        del self._conns[c]
                        c.close()
        finally:
            for key in list(self._sel.get_map().values()):
                if isinstance(key.fileobj, socket.socket):
                    key.fileobj.close()
            self._sel.close()

    def _accept(self, listener: socket.socket) -> None:
        with contextlib.suppress(BlockingIOError):
            new, _ = listener.accept()
            new.setblocking(False)
            self._conns[new] = [-1, 0]
            self._sel.register(new, selectors.EVENT_READ, True)

    def _read(self, c: socket.socket, t0: float) -> bool:
        """Reads what `c` has; False once it is over (end, reset)."""
        st = self._conns[c]
        try:
            if st[0] < 0:
                head = c.recv(HEADER.size, socket.MSG_PEEK)
                if len(head) < HEADER.size:
                    return bool(head)
                c.recv(HEADER.size)
                st[0] = HEADER.unpack(head)[0]
                self._open[st[0]] = c
                return True
            k = c.recv_into(self._buf)
        except BlockingIOError:
            return True
        except ConnectionResetError:  # a long-lived flow's stop
            k = 0
        fid = st[0]
        st[1] += k
        size = self.sizes.get(fid)
        if size is not None and st[1] >= size and fid not in self.report.ended:
            self.report.ended[fid] = time.monotonic() - t0
        if k:
            return True
        self._final[fid] = max(self._final[fid], tcp_info(c)[1] - HEADER.size, st[1])
        self._open.pop(fid, None)
        return False

    def _sample(self, t0: float, k: int) -> None:
        """Sample `k`: every flow's bytes delivered, stamped with the middle of the
        time its counters took to read (the first as the start, :mod:`.clock`)."""
        before = time.monotonic()
        row = list(self._final)
        for fid, c in self._open.items():
            row[fid] = max(row[fid], tcp_info(c)[1] - HEADER.size)
        s = self.report.samples[0]
        s.times.append(0.0 if k == 0 else (before + time.monotonic()) / 2 - t0)
        s.bytes.append(row)
