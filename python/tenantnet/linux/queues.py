"""A switch port's queues as HTB classes (``tenantnet emulate``): one class per queue
under the port's rate, classified by DSCP with u32 filters on the TOS byte, the
scenario's DSCP → queue map deciding which DSCPs each takes (the rest go to queue 0).

Every queue is guaranteed only a trickle (``TRICKLE`` of the port) and borrows up to
the port's rate; HTB lends spare capacity to the waiting classes of the lowest
priority number first, and among classes of one priority in proportion to their
quanta. So:

* ``strict`` (and the strict group of ``sp_dwrr``): queue q has priority q, served
  before every queue after it while it has packets.
* ``dwrr``, ``wrr``, ``wfq`` (and the rest of ``sp_dwrr``): one priority after the
  strict queues, quantum = weight × the largest packet (weights as
  ``network.weights``, equal without them): shares by bytes, as DWRR's and WFQ's;
  WRR's per-packet round is not reproduced (the same with equal packet sizes).

Buffers: ``static_partition`` gives queue i w_i/Σw of the port's buffer, as the
simulator does; under ``tail_drop`` each queue gets a bfifo of the whole port buffer
(a buffer the queues share is not emulated: where one queue's backlog crowds out
another's, the simulator's shares differ); ``dynamic_threshold`` and ``barberq``
are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ScenarioError
from .tc import QueueClass


def strict_count(net: Mapping[str, Any]) -> int:
    """How many of a port's queues are served by strict priority."""
    n, sched = int(net["queues"]), str(net["scheduler"])
    return n if sched == "strict" else int(net.get("strict_queues") or 0) \
        if sched == "sp_dwrr" else 0


TRICKLE = 1e-3
"""Each queue's guaranteed share of the port: HTB needs a rate above zero, and a class
within its rate is served before any that borrows, whatever their priorities."""
BUFFERS = ("tail_drop", "static_partition")
"""The switch buffer policies an emulation reproduces (module doc)."""


def switch_queues(net: Mapping[str, Any], dscp_to_queue: Sequence[int], rate_bps: int,
                  packet: int, buffer_bytes: int) -> list[QueueClass]:
    """The queues of a switch port of `rate_bps` and `buffer_bytes` under the network
    keys `net` (as ``switch_layout`` resolves them), `packet` the largest packet the
    port carries (a quantum below it would make the round robin one of packets, not
    bytes); none for a single-queue port."""
    n = int(net["queues"])
    if n <= 1:
        return []
    policy = str(net.get("buffer_policy", "tail_drop"))
    if policy not in BUFFERS:
        raise ScenarioError(f"network.buffer_policy = {policy!r}: an emulation reproduces "
                            f"{' and '.join(BUFFERS)} (a bfifo per queue)")
    weights = [int(w) for w in (net.get("weights") or [1] * n)]
    strict = strict_count(net)
    trickle = max(8000, round(rate_bps * TRICKLE))
    out = []
    for q in range(n):
        dscps = tuple(d for d, x in enumerate(dscp_to_queue) if int(x) == q)
        limit = buffer_bytes * weights[q] // sum(weights) if policy == "static_partition" \
            else None
        weighted = q >= strict
        out.append(QueueClass(q, trickle, strict if weighted else q,
                              packet * (weights[q] if weighted else 1), dscps, limit))
    return out
