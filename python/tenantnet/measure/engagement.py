"""Whether a scheme's mechanism engaged during a run, read from the run's own
counters: a scheme that never acted is the scenario without it, and ``compare`` and
``sweep`` say so instead of judging it.

What counts as acting, scheme by scheme:

* **static, MBFQ**: a VM's token bucket held a packet (``vswitch.packets_shaped``);
* **Trinity, ElasticSwitch (and C-ES, A-ES)**: its rate control received feedback
  (``vswitch.control_packets``, the feedback packets its hosts sent);
* **C2QoS**: a VM's bucket of CPU cycles throttled it (``cpu.c2tb_throttled``);
* **QShare**: its controller decided after time 0 (``qshare_tenants``), so that it
  could bind tenants by their measured demand;
* **BarberQ**: a switch evicted a packet (``packets_evicted``);
* **PMSB, per-queue ECN**: a switch port marked a packet (``queue_stats``; marks
  at hosts' NICs follow their own rule);
* **none** is the baseline: nothing to engage, always judged.

A combination acted when each of its schemes did.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..sim.results import Results


@dataclass(frozen=True)
class Engagement:
    """Whether the scheme acted (None: it has nothing to act with, a baseline), and
    what it did or why it did not, in words."""
    acted: bool | None
    evidence: str


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}"


def _times(n: int) -> str:
    return {0: "no time", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _vswitch(r: Results, key: str) -> int:
    return int(r.summary.get("vswitch", {}).get(key, 0))


def _buckets(name: str) -> Callable[[Results, Mapping[str, Any]], Engagement]:
    def check(r: Results, _: Mapping[str, Any]) -> Engagement:
        n = _vswitch(r, "packets_shaped")
        if n:
            return Engagement(True, f"{name}'s token buckets held " +
                              _count(n, "packets"))
        return Engagement(False, f"{name}'s token buckets never held a packet: every "
                                 "VM sent below the rate its bucket allowed")
    return check


def _mbfq(r: Results, data: Mapping[str, Any]) -> Engagement:
    """As static reservation's, with how often the microschedulers were on: MBFQ
    switches them off while its host's NIC is under 80 % busy (§4)."""
    e = _buckets("MBFQ")(r, data)
    v = r.vm_rates
    if v is None or not len(v) or "allocated_gbps" not in v:
        return e
    on = float(v["allocated_gbps"].notna().mean())
    return Engagement(e.acted, f"{e.evidence}; its microschedulers were on in "
                               f"{100 * on:.0f} % of the macro-intervals (off while a NIC is "
                               "under 80 % busy)")


def _feedback(name: str) -> Callable[[Results, Mapping[str, Any]], Engagement]:
    def check(r: Results, _: Mapping[str, Any]) -> Engagement:
        n, held = _vswitch(r, "control_packets"), _vswitch(r, "packets_shaped")
        if n:
            return Engagement(True, f"{name}'s hosts sent {_count(n, 'feedback packets')}"
                                    f"; its buckets held {_count(held, 'packets')}")
        return Engagement(False, f"{name}'s hosts exchanged no feedback: no VM pair of "
                                 "a tenant carried traffic")
    return check


def _c2qos(r: Results, _: Mapping[str, Any]) -> Engagement:
    n = int((r.summary.get("cpu") or {}).get("c2tb_throttled") or 0)
    if n:
        return Engagement(True, f"C2TB's CPU buckets throttled a VM {_times(n)}")
    return Engagement(False, "C2TB's CPU buckets never throttled a VM with packets "
                             "waiting: the PMD cores had cycles for every VM")


def _seconds(text: Any) -> str:
    return str(text) if text is not None else "?"


def _qshare(r: Results, data: Mapping[str, Any]) -> Engagement:
    t = r.qshare_tenants
    if t is None or not len(t):
        return Engagement(False, "QShare's controller recorded no decision")
    times = sorted(set(t["time_s"].astype(float)))
    later = [x for x in times if x > 0]
    interval = _seconds(data.get("qshare", {}).get("interval", "4s"))
    duration = _seconds(data.get("simulation", {}).get("duration"))
    if not later:
        return Engagement(False, f"QShare's control interval {interval} is not shorter "
                                 f"than the {duration} run: it decided only at time 0, "
                                 "every tenant shared and capped at its guarantee")
    bound = t[t["dedicated"] == 1]
    sets = {x: frozenset(g["tenant"]) for x, g in bound.groupby("time_s")}
    moves = sum(1 for a, b in itertools.pairwise(times)
                if sets.get(a, frozenset()) != sets.get(b, frozenset()))
    return Engagement(True, f"QShare decided {_times(len(later))} (every {interval}); "
                            f"its binding changed {_times(moves)}; "
                            f"{bound['tenant'].nunique()} tenants held a dedicated queue")


def _barberq(r: Results, _: Mapping[str, Any]) -> Engagement:
    n = int(r.summary.get("packets_evicted", 0))
    if n:
        return Engagement(True, f"BarberQ evicted {_count(n, 'packets')}")
    return Engagement(False, "BarberQ never evicted: no switch's shared buffer filled")


def _marking(name: str) -> Callable[[Results, Mapping[str, Any]], Engagement]:
    def check(r: Results, _: Mapping[str, Any]) -> Engagement:
        n = int(r.queue_stats["ecn_marks"].sum()) if len(r.queue_stats) else 0
        if n:
            return Engagement(True, f"{name} marked {_count(n, 'packets')} at switch ports")
        return Engagement(False, f"{name} never marked: no switch queue reached its "
                                 "threshold (hosts' NICs may mark, but not by its rule)")
    return check


def _baseline(r: Results, _: Mapping[str, Any]) -> Engagement:
    return Engagement(None, "the baseline: nothing to engage")


CHECKS: dict[str, Callable[[Results, Mapping[str, Any]], Engagement]] = {
    "none": _baseline,
    "static": _buckets("static reservation"),
    "mbfq": _mbfq,
    "trinity": _feedback("Trinity"),
    "elasticswitch": _feedback("ElasticSwitch"),
    "c-es": _feedback("C-ES"),
    "a-es": _feedback("A-ES"),
    "c2qos": _c2qos,
    "qshare": _qshare,
    "barberq": _barberq,
    "pmsb": _marking("PMSB"),
    "per-queue-ecn": _marking("per-queue ECN"),
}
"""Each scheme's check, by name (module doc)."""


def engagement(spec: str, r: Results, data: Mapping[str, Any]) -> Engagement:
    """Whether the scheme or combination `spec` acted in the run `r` of the scenario
    `data` (as run: the scheme applied)."""
    parts = [CHECKS[name.strip()](r, data) for name in spec.split("+")]
    acted = [p.acted for p in parts if p.acted is not None]
    text = "; ".join(p.evidence for p in parts)
    if not acted:
        return Engagement(None, text)
    if all(acted):
        return Engagement(True, text)
    return Engagement(False, "; ".join(p.evidence for p in parts if p.acted is False))
