"""The emulation's traffic generator: the scenario's flows on real sockets with the
kernel's TCP. Each sending namespace's flows are one single-threaded event loop
(:class:`Senders`), each receiving namespace's connections another
(:class:`Receivers`), each loop in a process of its own (:mod:`.process`).

Why loops and not a thread per flow: threads of one Python process take turns at its
interpreter lock, and a thread woken for its flow's start waited for its turn behind
the others' socket calls: on two busy cores web's flow in the demo started 12-30 ms
late, and MBFQ, which ramps a VM up only when it used 95 % of its rate over a 100 ms
interval, read that VM as not using its rate and ramped it a whole interval late
(the VM's rate in that phase 17 % short). A loop wakes for the next start on its own.

The flows are the simulator's own for the same scenario and seed (its ``flows`` table:
who sends to whom, from when, how many bytes or until when), so the emulated and the
simulated run carry the same demand. A connection starts with the flow's number (8
bytes), then its data: a sized flow its bytes, a long-lived one until its stop (or the
run's end). A flow's connection is opened ``CONNECT_AHEAD_S`` before its start (the
simulator has no handshake), and its FCT runs from its scheduled start to the moment
the receiver has read its last byte. A long-lived flow ends with a reset at its stop,
so that the data its socket still buffers is not sent after it.

What each flow delivered over time is read from the kernel, not the application: every
sampling interval each receiving loop reads its sockets' ``tcpi_bytes_received``
(``TCP_INFO``), with the instant it read it. A traced flow's sender state (the
scenario's ``[output] trace_flows``) is read from its socket every ``TRACE_S``: the
window, ssthresh, RTT, RTO and congestion state the kernel reports (``TCP_INFO``, as
``ss -ti`` shows them).
"""

from __future__ import annotations

import contextlib
import heapq
import selectors
import socket
import struct
import time
from dataclasses import dataclass, field

from .netns import enter

PORT = 5001
CHUNK = 1 << 17
"""The most one send hands the kernel: a larger one holds the loop up for
milliseconds, and the other flows' starts with it."""
HEADER = struct.Struct("<Q")
CONNECT_AHEAD_S = 0.05
"""A flow's connection opens this long before its start, and its data starts at the
start: the simulator's flows have no handshake."""
SOCKET_BUFFER = 8 << 20
"""Each socket's send and receive buffer (bytes). The sockets' own sizing keeps a few
milliseconds of data at these rates, and a sender that the machine holds up for
longer (10 ms, now and then, on 2 busy cores) then let its flow's class run dry: MBFQ
read the gap as a VM not using its rate. 8 MB is over 60 ms at 1 Gb/s; like the
simulator's sources, a flow always has data waiting."""
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33
"""Linux's socket options (not in Python's socket module) that set a buffer past
``net.core.wmem_max`` and ``rmem_max``, for root."""
TCP_INFO_LEN = 136
"""``struct tcp_info`` up to ``tcpi_bytes_received`` (Linux 4.1 on)."""
TCP_INFO_RTO_LEN = 248
"""``struct tcp_info`` up to ``tcpi_total_rto_time`` (Linux 6.7 on): ``tcpi_total_rto``,
the timeouts a connection has had, is the 16-bit field at byte 240."""
IDLE_S = 0.05
"""The longest a loop sleeps without looking at the clock."""
TRACE_S = 0.001
"""How often a traced flow's sender state is read."""
INFINITE_SSTHRESH = 0x7FFFFFFF
"""Linux's ssthresh before the first congestion event (``TCP_INFINITE_SSTHRESH``)."""


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
    traced: bool = False
    """Whether its sender state is read every ``TRACE_S``."""


def set_buffers(s: socket.socket) -> None:
    """`s`'s buffers at ``SOCKET_BUFFER``, past the system's maximum where allowed."""
    for force, plain in ((SO_SNDBUFFORCE, socket.SO_SNDBUF),
                         (SO_RCVBUFFORCE, socket.SO_RCVBUF)):
        try:
            s.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)


TOTAL_RETRANS_AT = 100
"""Where ``tcpi_total_retrans`` sits in ``struct tcp_info``: eight 1-byte fields, then
32-bit counters, this the 24th."""


def tcp_info(s: socket.socket) -> tuple[int, int]:
    """(``tcpi_total_retrans``, ``tcpi_bytes_received``) of a TCP socket; (0, 0) once
    it is closed."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    except OSError:
        return 0, 0
    if len(raw) < TCP_INFO_LEN:
        return 0, 0
    return (struct.unpack_from("<I", raw, TOTAL_RETRANS_AT)[0],
            struct.unpack_from("<Q", raw, 128)[0])


def closing_info(s: socket.socket) -> tuple[int, int | None, int | None]:
    """What a sender's TCP counted, read once as it closes: ``tcpi_total_retrans``,
    ``tcpi_total_rto`` (its retransmission timeouts; None on a kernel before 6.7,
    whose ``struct tcp_info`` is shorter) and ``tcpi_min_rtt`` (µs, the least RTT it
    sampled; None before Linux 4.6 or with no sample); (0, None, None) once closed."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_RTO_LEN)
    except OSError:
        return 0, None, None
    retrans = (struct.unpack_from("<I", raw, TOTAL_RETRANS_AT)[0] if len(raw) >= TCP_INFO_LEN
               else 0)
    rtos = struct.unpack_from("<H", raw, 240)[0] if len(raw) >= TCP_INFO_RTO_LEN else None
    least = struct.unpack_from("<I", raw, 148)[0] if len(raw) >= 152 else 0
    return retrans, rtos, least if 0 < least < 0xFFFFFFFF else None


@dataclass(frozen=True)
class SenderState:
    """What ``TCP_INFO`` says of a sender at `t` (s after the run's start): its
    congestion state (``tcpi_ca_state``: 0 open to 4 loss), RTO and smoothed RTT (µs),
    segment size, ssthresh and window (segments; ssthresh ``INFINITE_SSTHRESH`` before
    it is set)."""

    t: float
    ca_state: int
    rto_us: int
    rtt_us: int
    mss: int
    ssthresh: int
    cwnd: int


def sender_state(s: socket.socket, t: float) -> SenderState | None:
    """`s`'s :class:`SenderState` at `t`, or None once it is closed."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    except OSError:
        return None
    if len(raw) < 84:
        return None
    # struct tcp_info: tcpi_ca_state the 2nd byte; rto at 8, snd_mss at 16, rtt at 68,
    # snd_ssthresh at 76, snd_cwnd at 80 (32-bit)
    rto, mss = struct.unpack_from("<I", raw, 8)[0], struct.unpack_from("<I", raw, 16)[0]
    rtt, ssthresh, cwnd = struct.unpack_from("<I4xII", raw, 68)
    return SenderState(t, raw[1], rto, rtt, mss, ssthresh, cwnd)


@dataclass
class Samples:
    """Each flow's bytes delivered (``bytes``, one list per sample, indexed by flow
    number) at ``times`` (s after the run's start)."""

    times: list[float] = field(default_factory=list)
    bytes: list[list[int]] = field(default_factory=list)


@dataclass
class Report:
    """What a loop reports at its end; the loops' reports add up to the run's
    (:meth:`merge`)."""

    ended: dict[int, float] = field(default_factory=dict)
    """When the receiver had read a sized flow's last byte (s after the start)."""
    retransmits: dict[int, int] = field(default_factory=dict)
    timeouts: dict[int, int] = field(default_factory=dict)
    """Each flow's retransmission timeouts (``tcpi_total_rto``), where the kernel
    counts them (Linux 6.7 on)."""
    counts_timeouts: bool = False
    """Whether the kernel counted them."""
    min_rtt: dict[int, float] = field(default_factory=dict)
    """Each flow's least RTT sample (s, ``tcpi_min_rtt``)."""
    late: dict[int, float] = field(default_factory=dict)
    """How late each flow's data started after its scheduled start (s)."""
    errors: list[str] = field(default_factory=list)
    samples: list[Samples] = field(default_factory=list)
    """One per receiving loop, each on its own instants."""
    traces: dict[int, list[SenderState]] = field(default_factory=dict)
    """The traced flows' sender states, in time order."""

    def merge(self, other: Report) -> None:
        self.traces.update(other.traces)
        self.ended.update(other.ended)
        self.retransmits.update(other.retransmits)
        self.timeouts.update(other.timeouts)
        self.counts_timeouts |= other.counts_timeouts
        self.min_rtt.update(other.min_rtt)
        self.late.update(other.late)
        self.errors += other.errors
        self.samples += other.samples


@dataclass
class _Flow:
    plan: FlowPlan
    key: int
    """Its place in its loop's list."""
    sock: socket.socket | None = None
    state: str = "waiting"
    """waiting, connecting, ready, sending, draining, done."""
    started: bool = False
    left: int | None = None


class Senders:
    """Every flow of one sending namespace, in one loop: each connection opens
    ``CONNECT_AHEAD_S`` before its start, sends from its start on, and a long-lived
    one is reset at its stop; the run ends at `duration` after ``t0``."""

    def __init__(self, ns: str, flows: list[FlowPlan], duration: float, cc: str) -> None:
        self.ns, self.duration, self.cc = ns, duration, cc
        self.flows = [_Flow(f, i, left=f.size) for i, f in enumerate(flows)]
        self.report = Report()
        self._sel = selectors.DefaultSelector()
        self._data = memoryview(b"\0" * CHUNK)

    def run(self, t0: float) -> None:
        """Runs the flows from `t0` (``time.monotonic``, the same clock in every
        process) to the run's end."""
        enter(self.ns)
        timers: list[tuple[float, int, int, str]] = []
        for i, f in enumerate(self.flows):
            p = f.plan
            timers.append((t0 + p.start_s - CONNECT_AHEAD_S, 0, i, "open"))
            timers.append((t0 + p.start_s, 1, i, "start"))
            if p.size is None:
                timers.append((t0 + min(p.stop_s if p.stop_s is not None else self.duration,
                                        self.duration), 2, i, "stop"))
        if any(f.plan.traced for f in self.flows):
            timers.append((t0 + TRACE_S, 3, -1, "trace"))
        heapq.heapify(timers)
        end = t0 + self.duration
        try:
            while (now := time.monotonic()) < end:
                self._due(timers, t0)
                wake = min(timers[0][0] if timers else end, end, now + IDLE_S)
                for key, _ in self._sel.select(max(0.0, wake - time.monotonic())):
                    self._due(timers, t0)  # a start is not kept waiting by others' sends
                    f = self.flows[key.data]
                    try:
                        self._ready(f, t0)
                    except OSError as e:  # the receivers close at the run's end
                        if time.monotonic() < end:
                            self._fail(f, str(e))
        finally:
            for f in self.flows:
                self._close(f, reset=True)
            self._sel.close()

    def _due(self, timers: list[tuple[float, int, int, str]], t0: float) -> None:
        """Opens, starts and stops the flows whose time has come."""
        now = time.monotonic()
        while timers and timers[0][0] <= now:
            at, order, i, what = heapq.heappop(timers)
            if what == "trace":
                self._trace(now - t0)
                heapq.heappush(timers, (max(at + TRACE_S, now), order, i, what))
            else:
                getattr(self, f"_{what}")(self.flows[i], t0)

    def _trace(self, t: float) -> None:
        """Reads the traced flows' sender states at `t`."""
        for f in self.flows:
            if f.plan.traced and f.sock is not None and f.state in ("sending", "draining"):
                st = sender_state(f.sock, t)
                if st is not None:
                    self.report.traces.setdefault(f.plan.flow_id, []).append(st)

    def _open(self, f: _Flow, t0: float) -> None:
        p = f.plan
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.cc.encode())
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        set_buffers(s)
        if p.tos:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, p.tos)
        s.bind((p.src_addr, 0))
        s.setblocking(False)
        err = s.connect_ex((p.dst_addr, PORT))
        f.sock, f.state = s, "connecting"
        if err not in (0, 115):  # EINPROGRESS
            self._fail(f, f"connect to {p.dst_addr}: {err}")
            return
        self._sel.register(s, selectors.EVENT_WRITE, f.key)

    def _start(self, f: _Flow, t0: float) -> None:
        f.started = True
        if f.state == "ready":
            self._begin(f, t0)

    def _begin(self, f: _Flow, t0: float) -> None:
        assert f.sock is not None
        f.state = "sending"
        self.report.late[f.plan.flow_id] = max(0.0, time.monotonic() - t0 - f.plan.start_s)
        try:
            self._sel.modify(f.sock, selectors.EVENT_WRITE, f.key)
        except KeyError:
            self._sel.register(f.sock, selectors.EVENT_WRITE, f.key)

    def _stop(self, f: _Flow, t0: float) -> None:
        self._close(f, reset=True)

    def _ready(self, f: _Flow, t0: float) -> None:
        s = f.sock
        assert s is not None
        if f.state == "connecting":
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self._fail(f, f"connect to {f.plan.dst_addr}: {err}")
                return
            s.send(HEADER.pack(f.plan.flow_id))  # an empty buffer takes 8 bytes
            f.state = "ready"
            if f.started:  # connected after its start: it starts late
                self._begin(f, t0)
            else:
                self._sel.unregister(s)  # idle until its start
        elif f.state == "sending":
            n = CHUNK if f.left is None else min(CHUNK, f.left)
            with contextlib.suppress(BlockingIOError):
                sent = s.send(self._data[:n])
                if f.left is not None:
                    f.left -= sent
            if f.left == 0:  # the receiver closes once it has read it all
                s.shutdown(socket.SHUT_WR)
                f.state = "draining"
                self._sel.modify(s, selectors.EVENT_READ, f.key)
        elif f.state == "draining":
            try:
                over = not s.recv(64)
            except BlockingIOError:
                over = False
            except OSError:
                over = True
            if over:
                self._close(f, reset=False)

    def _close(self, f: _Flow, reset: bool) -> None:
        s = f.sock
        if s is None or f.state == "done":
            return
        retrans, rtos, least = closing_info(s)
        self.report.retransmits[f.plan.flow_id] = retrans
        if rtos is not None:
            self.report.timeouts[f.plan.flow_id] = rtos
            self.report.counts_timeouts = True
        if least is not None:
            self.report.min_rtt[f.plan.flow_id] = least * 1e-6
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(s)
        if reset:
            # what its socket still holds is dropped (a reset), as the simulator's
            # source stops at once
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        f.state = "done"

    def _fail(self, f: _Flow, why: str) -> None:
        self.report.errors.append(f"flow {f.plan.flow_id}: {why}")
        self._close(f, reset=True)
