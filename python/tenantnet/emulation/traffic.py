"""The emulation's traffic generator: the scenario's flows on real sockets with the
kernel's TCP, each sender a thread in its VM's (or host's) namespace, each receiving
namespace one thread that serves all its connections (``selectors``).

The flows are the simulator's own for the same scenario and seed (its ``flows`` table:
who sends to whom, from when, how many bytes or until when), so the emulated and the
simulated run carry the same demand. A connection starts with the flow's number (8
bytes), then its data: a sized flow its bytes, a long-lived one until its stop (or the
run's end). A flow's connection is opened ``CONNECT_AHEAD_S`` before its start (the
simulator has no handshake), and its FCT runs from its scheduled start to the moment
the receiver has read its last byte. A long-lived flow ends with a reset at its stop,
so that the data its socket still buffers is not sent after it.

What each flow delivered over time is read from the kernel, not the application: every
sampling interval a thread reads each receiving socket's ``tcpi_bytes_received``
(``TCP_INFO``), with the instant it read it.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from .clock import instants
from .netns import enter

PORT = 5001
CHUNK = 1 << 20
HEADER = struct.Struct("<Q")
CONNECT_AHEAD_S = 0.05
"""A flow's connection opens this long before its start, and its data starts at the
start: the simulator's flows have no handshake."""
SOCKET_BUFFER = 8 << 20
"""Each socket's send and receive buffer (bytes). The sockets' own sizing keeps a few
milliseconds of data at these rates, and a generator thread that the machine holds up
for longer (10 ms, now and then, on 2 busy cores) then let its flow's class run dry:
MBFQ read the gap as a VM not using its rate. 8 MB is over 60 ms at 1 Gb/s; like
the simulator's sources, a flow always has data waiting."""
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33
"""Linux's socket options (not in Python's socket module) that set a buffer past
``net.core.wmem_max`` and ``rmem_max``, for root."""
TCP_INFO_LEN = 136
"""``struct tcp_info`` up to ``tcpi_bytes_received`` (Linux 4.1 on)."""


@dataclass(frozen=True)
class FlowPlan:
    """One flow: its number, the sender's namespace and address, the receiver's, its
    size (None: long-lived), scheduled start and stop (s from the run's start) and its
    TOS byte."""

    flow_id: int
    src_ns: str
    src_addr: str
    dst_ns: str
    dst_addr: str
    size: int | None
    start_s: float
    stop_s: float | None
    tos: int = 0
    """The TOS byte its sender sets (its DSCP where the switches classify and its host
    does not tag it)."""


def _buffers(s: socket.socket) -> None:
    """`s`'s buffers at ``SOCKET_BUFFER``, past the system's maximum where allowed."""
    for force, plain in ((SO_SNDBUFFORCE, socket.SO_SNDBUF),
                         (SO_RCVBUFFORCE, socket.SO_RCVBUF)):
        try:
            s.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)


def tcp_info(s: socket.socket) -> tuple[int, int]:
    """(``tcpi_total_retrans``, ``tcpi_bytes_received``) of a TCP socket; (0, 0) once
    it is closed."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    except OSError:
        return 0, 0
    if len(raw) < TCP_INFO_LEN:
        return 0, 0
    # eight 1-byte fields, 32-bit counters (total_retrans the 24th), then 64-bit ones
    return struct.unpack_from("<I", raw, 100)[0], struct.unpack_from("<Q", raw, 128)[0]


@dataclass
class Samples:
    """Each flow's bytes delivered (``bytes``, one list per sample) at ``times`` (s
    after the run's start)."""

    times: list[float] = field(default_factory=list)
    bytes: list[list[int]] = field(default_factory=list)


@dataclass
class Traffic:
    """Runs `flows` for `duration` seconds with congestion control `cc`, sampling what
    each delivered every `interval` (``samples``)."""

    flows: list[FlowPlan]
    duration: float
    cc: str
    interval: float
    ended: dict[int, float] = field(default_factory=dict)
    """When the receiver had read a sized flow's last byte (s after the start)."""
    retransmits: dict[int, int] = field(default_factory=dict)
    late_s: float = 0.0
    """The latest a sender started after its scheduled start."""
    errors: list[str] = field(default_factory=list)
    samples: Samples = field(default_factory=Samples)
    t0: float = 0.0

    def __post_init__(self) -> None:
        n = max((f.flow_id for f in self.flows), default=-1) + 1
        self._final = [0] * n
        self._open: dict[int, socket.socket] = {}
        self._size = {f.flow_id: f.size for f in self.flows}
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[socket.socket] = []

    def listen(self) -> None:
        """Opens a listener at every receiving address (before :meth:`start`)."""
        by_ns: dict[str, list[str]] = {}
        for f in self.flows:
            by_ns.setdefault(f.dst_ns, [])
            if f.dst_addr not in by_ns[f.dst_ns]:
                by_ns[f.dst_ns].append(f.dst_addr)
        ready = []
        for ns, addrs in sorted(by_ns.items()):
            ev = threading.Event()
            ready.append(ev)
            self._spawn(self._serve, ns, sorted(addrs), ev)
        for ev in ready:
            if not ev.wait(10):
                raise RuntimeError("a receiver did not start in 10 s")
        if self.errors:
            raise RuntimeError(self.errors[0])

    def start(self, t0: float) -> None:
        """Starts every flow at its time after `t0` (``time.monotonic``), and the
        sampling."""
        self.t0 = t0
        self._spawn(self._schedule)
        self._spawn(self._sample)

    def stop(self) -> None:
        """Ends the run: senders stop, receivers and listeners close."""
        self._done.set()
        for s in self._listeners:
            with contextlib.suppress(OSError):
                s.close()

    def wait(self) -> None:
        """Waits for the run's end (or :meth:`stop`)."""
        self._done.wait(max(0.0, self.t0 + self.duration - time.monotonic()))

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _spawn(self, target: object, *args: object) -> None:
        threading.Thread(target=self._guard, args=(target, *args), daemon=True).start()

    def _guard(self, target: object, *args: object) -> None:
        try:
            target(*args)  # type: ignore[operator]
        except OSError as e:
            if not self._done.is_set():
                self.errors.append(f"{getattr(target, '__name__', target)}: {e}")

    # ---- receivers -----------------------------------------------------------------

    def _serve(self, ns: str, addrs: list[str], ready: threading.Event) -> None:
        """Every connection to the namespace's addresses, in one thread."""
        sel = selectors.DefaultSelector()
        try:
            enter(ns)
            for addr in addrs:
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                _buffers(s)  # accepted connections inherit them
                s.bind((addr, PORT))
                s.listen(1024)
                s.setblocking(False)
                self._listeners.append(s)
                sel.register(s, selectors.EVENT_READ, None)
        finally:
            ready.set()
        buf = bytearray(1 << 20)
        conns: dict[socket.socket, list[int]] = {}  # [flow, bytes read; -1 before header]
        while not self._done.is_set():
            for key, _ in sel.select(0.05):
                c = key.fileobj
                assert isinstance(c, socket.socket)
                if key.data is None:  # a listener
                    with contextlib.suppress(BlockingIOError):
                        new, _ = c.accept()
                        new.setblocking(False)
                        conns[new] = [-1, 0]
                        sel.register(new, selectors.EVENT_READ, True)
                    continue
                if not self._read(c, conns[c], buf):
                    sel.unregister(c)
                    del conns[c]
                    c.close()
        sel.close()

    def _read(self, c: socket.socket, st: list[int], buf: bytearray) -> bool:
        """Reads what `c` has; False once it is over (end, reset)."""
        try:
            if st[0] < 0:
                head = c.recv(HEADER.size, socket.MSG_PEEK)
                if len(head) < HEADER.size:
                    return bool(head)
                c.recv(HEADER.size)
                st[0] = HEADER.unpack(head)[0]
                with self._lock:
                    self._open[st[0]] = c
                return True
            k = c.recv_into(buf)
        except BlockingIOError:
            return True
        except ConnectionResetError:  # a long-lived flow's stop
            k = 0
        fid = st[0]
        st[1] += k
        size = self._size.get(fid)
        if size is not None and st[1] >= size and fid not in self.ended:
            self.ended[fid] = self.now()
        if k:
            return True
        with self._lock:
            self._final[fid] = max(self._final[fid], tcp_info(c)[1] - HEADER.size, st[1])
            self._open.pop(fid, None)
        return False

    def _sample(self) -> None:
        n = round(self.duration / self.interval)
        for at in instants(self.t0, self.interval, n, self._done):
            with self._lock:
                row = list(self._final)
                for fid, c in self._open.items():
                    row[fid] = max(row[fid], tcp_info(c)[1] - HEADER.size)
            self.samples.times.append(at)
            self.samples.bytes.append(row)

    # ---- senders -------------------------------------------------------------------

    def _schedule(self) -> None:
        for f in sorted(self.flows, key=lambda f: (f.start_s, f.flow_id)):
            wait = self.t0 + f.start_s - CONNECT_AHEAD_S - time.monotonic()
            if wait > 0 and self._done.wait(wait):
                return
            self._spawn(self._send, f)

    def _send(self, f: FlowPlan) -> None:
        enter(f.src_ns)
        end = self.t0 + min(f.stop_s if f.stop_s is not None else self.duration,
                            self.duration)
        data = memoryview(b"\0" * CHUNK)
        with socket.socket() as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.cc.encode())
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _buffers(s)
            if f.tos:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f.tos)
            s.settimeout(max(1.0, self.duration))
            s.bind((f.src_addr, 0))
            s.connect((f.dst_addr, PORT))
            s.settimeout(0.05)
            s.sendall(HEADER.pack(f.flow_id))
            wait = self.t0 + f.start_s - time.monotonic()
            if wait > 0 and self._done.wait(wait):
                return
            self.late_s = max(self.late_s, self.now() - f.start_s)
            left = f.size
            while not self._done.is_set() and (now := time.monotonic()) < end and left != 0:
                n = CHUNK if left is None else min(CHUNK, left)
                # a send waits at most until the stop, so that the reset comes on time
                s.settimeout(max(0.001, min(0.05, end - now)))
                try:
                    sent = s.send(data[:n])
                except TimeoutError:
                    continue
                if left is not None:
                    left -= sent
            self.retransmits[f.flow_id] = tcp_info(s)[0]
            if left is None:
                # a long-lived flow stops offering data: what its socket still holds is
                # dropped (a reset), as the simulator's source stops at once
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            s.shutdown(socket.SHUT_WR)
            # keep the socket open until the receiver has it all (or the run ends)
            while not self._done.is_set() and f.flow_id not in self.ended \
                    and time.monotonic() < self.t0 + self.duration:
                time.sleep(0.005)
            self.retransmits[f.flow_id] = tcp_info(s)[0]
