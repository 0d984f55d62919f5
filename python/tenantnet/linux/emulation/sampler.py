"""What the emulation measures of the ports while it runs, every sampling interval:
each port's bytes and packets sent, and its queue (backlog, drops), from its root qdisc,
and on a host's NIC with a class per VM each class's bytes, backlog and rate (what the
run's fidelity is judged on, :mod:`.fidelity`), read over netlink by a thread in each
node's namespace (the flows' delivered bytes are sampled by the traffic generator,
:mod:`.traffic`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..tc import DEFAULT, FIRST_VM
from .clock import instants
from .netns import enter


@dataclass(frozen=True)
class ClassSample:
    """An HTB class's counters at one instant: bytes sent, bytes waiting, its rate and
    ceiling (bit/s) and its level (0: a leaf)."""

    tx_bytes: int
    backlog: int
    rate_bps: int
    ceil_bps: int
    level: int = 0


@dataclass
class PortSample:
    """A port's counters at one sampling instant (and its leaf classes', by minor
    handle, where they are sampled)."""

    tx_bytes: int
    tx_packets: int
    backlog: int
    drops: int
    at: float = 0.0
    """When it was read (s after the run's start): the middle of its own reads, which
    take milliseconds each over netlink, more on a busy machine."""
    classes: dict[int, ClassSample] = field(default_factory=dict)


@dataclass
class NodeSampler:
    """Samples the ports `ifnames` of the node in namespace `ns` at ``t0 + k·interval``
    for k = 0..n (``samples[k][ifname]``, each stamped with when it was read: a thread
    wakes late now and then)."""

    ns: str
    ifnames: list[str]
    interval: float
    n: int
    class_ifnames: frozenset[str] = frozenset()
    """The ports whose leaf classes are sampled too (hosts' NICs with VM classes)."""
    samples: list[dict[str, PortSample]] = field(default_factory=list)
    error: str = ""
    shaped: int = 0
    """At the end: how many times a VM's HTB class was over its rate when its turn came
    (the classes' ``overlimits``): a VM's rate limit held its traffic back."""

    def run(self, t0: float, done: threading.Event) -> None:
        try:
            enter(self.ns)
            # deferred: pyroute2 is the optional ``linux`` extra
            from pyroute2 import IPRoute
            with IPRoute() as ipr:
                index = {name: ipr.link_lookup(ifname=name)[0] for name in self.ifnames}
                for k, _ in enumerate(instants(t0, self.interval, self.n, done)):
                    self.samples.append(_read(ipr, index, self.class_ifnames,
                                              t0 if k else None))
                if done.is_set():
                    return
                self.shaped = sum(_overlimits(ipr, i) for i in index.values())
        except Exception as e:  # the run goes on; the tables say what is missing
            self.error = f"{self.ns}: {e}"


def _overlimits(ipr: Any, index: int) -> int:
    """The overlimits of the device's VM classes (minor handles from the first VM's
    up to the default class's, :mod:`tenantnet.linux.tc`)."""
    out = 0
    for m in ipr.get_classes(index=index):
        s2 = m.get_attr("TCA_STATS2")
        if s2 and FIRST_VM <= m["handle"] & 0xFFFF < DEFAULT:
            out += int(s2.get_attr("TCA_STATS_QUEUE")["overlimits"])
    return out


def read_classes(ipr: Any, index: int) -> dict[int, ClassSample]:
    """The device's HTB classes, by minor handle (MBFQ's agent reads them too)."""
    out = {}
    for m in ipr.get_classes(index=index):
        opts, s2 = m.get_attr("TCA_OPTIONS"), m.get_attr("TCA_STATS2")
        parms = opts.get_attr("TCA_HTB_PARMS") if opts else None
        if parms is None or s2 is None:
            continue
        rate = opts.get_attr("TCA_HTB_RATE64") or parms["rate"]
        ceil = opts.get_attr("TCA_HTB_CEIL64") or parms["ceil"]
        out[m["handle"] & 0xFFFF] = ClassSample(
            int(s2.get_attr("TCA_STATS_BASIC")["bytes"]),
            int(s2.get_attr("TCA_STATS_QUEUE")["backlog"]), int(rate) * 8, int(ceil) * 8,
            int(parms["level"]))
    return out


def times(samples: list[dict[str, PortSample]], ifname: str) -> list[float]:
    """When each of a port's samples was read (s after the run's start)."""
    return [x[ifname].at for x in samples]


def _read(ipr: Any, index: dict[str, int], class_ifnames: frozenset[str] = frozenset(),
          t0: float | None = None) -> dict[str, PortSample]:
    """Each port's counters from its root qdisc (every port has one, :mod:`.fabric`),
    each stamped with when it was read (`t0`: the run's start; None: the first sample,
    stamped as the start, :mod:`.clock`).
    The qdisc counts what goes on the wire: a GSO packet as its segments, each with
    its headers (``qdisc_pkt_len``, as HTB's rate does). The interface's own
    ``tx_bytes`` counts a GSO packet's headers once, about 4 % short at 8 segments."""
    out = {}
    for name, i in index.items():
        before = time.monotonic()
        roots = [s2 for m in ipr.get_qdiscs(index=i)
                 if m["parent"] == 0xFFFFFFFF and (s2 := m.get_attr("TCA_STATS2"))]
        if not roots:
            raise ValueError(f"port {name} has no root qdisc to count what it sends")
        sent, q = roots[0].get_attr("TCA_STATS_BASIC"), roots[0].get_attr("TCA_STATS_QUEUE")
        classes = read_classes(ipr, i) if name in class_ifnames else {}
        at = 0.0 if t0 is None else (before + time.monotonic()) / 2 - t0
        out[name] = PortSample(int(sent["bytes"]), int(sent["packets"]), int(q["backlog"]),
                               int(q["drops"]), at, classes)
    return out
