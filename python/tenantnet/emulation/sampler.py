"""What the emulation measures of the ports while it runs, every sampling interval:
each port's bytes and packets sent, and its queue (backlog, drops), from its root qdisc,
read over netlink by a thread in each node's namespace (the flows' delivered bytes
are sampled by the traffic generator, :mod:`.traffic`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .clock import instants
from .netns import enter


@dataclass
class PortSample:
    """A port's counters at one sampling instant."""

    tx_bytes: int
    tx_packets: int
    backlog: int
    drops: int


@dataclass
class NodeSampler:
    """Samples the ports `ifnames` of the node in namespace `ns` at ``t0 + k·interval``
    for k = 0..n (``samples[k][ifname]``)."""

    ns: str
    ifnames: list[str]
    interval: float
    n: int
    samples: list[dict[str, PortSample]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    """When each sample was taken (s after ``t0``): a thread wakes late now and then."""
    error: str = ""
    shaped: int = 0
    """At the end: how many times a VM's HTB class was over its rate when its turn came
    (the classes' ``overlimits``): a VM's rate limit held its traffic back."""

    def run(self, t0: float, done: threading.Event) -> None:
        try:
            enter(self.ns)
            from pyroute2 import IPRoute
            with IPRoute() as ipr:
                index = {name: ipr.link_lookup(ifname=name)[0] for name in self.ifnames}
                for at in instants(t0, self.interval, self.n, done):
                    self.samples.append(_read(ipr, index))
                    self.times.append(at)
                if done.is_set():
                    return
                self.shaped = sum(_overlimits(ipr, i) for i in index.values())
        except Exception as e:  # the run goes on; the tables say what is missing
            self.error = f"{self.ns}: {e}"


def _overlimits(ipr: Any, index: int) -> int:
    """The overlimits of the device's VM classes (minor handles from the first VM's
    up to the default class's, :mod:`tenantnet.linux_tc`)."""
    from ..linux_tc import DEFAULT, FIRST_VM
    out = 0
    for m in ipr.get_classes(index=index):
        s2 = m.get_attr("TCA_STATS2")
        if s2 and FIRST_VM <= m["handle"] & 0xFFFF < DEFAULT:
            out += int(s2.get_attr("TCA_STATS_QUEUE")["overlimits"])
    return out


def _read(ipr: Any, index: dict[str, int]) -> dict[str, PortSample]:
    """Each port's counters from its root qdisc (every port has one, :mod:`.fabric`).
    The qdisc counts what goes on the wire: a GSO packet as its segments, each with
    its headers (``qdisc_pkt_len``, as HTB's rate does). The interface's own
    ``tx_bytes`` counts a GSO packet's headers once, about 4 % short at 8 segments."""
    out = {}
    for name, i in index.items():
        roots = [s2 for m in ipr.get_qdiscs(index=i)
                 if m["parent"] == 0xFFFFFFFF and (s2 := m.get_attr("TCA_STATS2"))]
        if not roots:
            raise ValueError(f"port {name} has no root qdisc to count what it sends")
        sent, q = roots[0].get_attr("TCA_STATS_BASIC"), roots[0].get_attr("TCA_STATS_QUEUE")
        out[name] = PortSample(int(sent["bytes"]), int(sent["packets"]),
                               int(q["backlog"]), int(q["drops"]))
    return out
