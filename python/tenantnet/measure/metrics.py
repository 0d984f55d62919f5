"""What a run gave each tenant, the fabric and short messages: the measures of
``tenantnet compare`` and ``tenantnet sweep``, computed from a run's
results alone, so that every scheme is judged by one yardstick.

Choices, where the issue leaves the measure open:

* **Measurement intervals** are the run's sampling intervals (``output.sample_interval``).
* **Units.** A tenant's VMs on one host are one unit: flows are known by their hosts,
  so several VMs of a tenant on one host pool their guarantees and rates.
* **Demand.** A unit has demand in an interval when one of its flows runs through the
  whole interval: started before it and neither stopped nor finished before its end
  (such a flow had data waiting throughout). A UDP flow's demand is its source's rate;
  a TCP flow's is unbounded.
* **Entitlement** (the guarantee a unit with demand should get), the hose model split
  equally: the unit's guarantee is split among the destinations it has demand to, and
  a destination that is a unit of the same tenant splits its own guarantee among the
  units sending to it; each pair is entitled to the smaller share, at most its UDP
  demand. A unit's entitlement is the sum over its pairs (traffic to hosts without the
  tenant's VMs is bounded by the sender's share alone).
* **Rates** are what the entitlement covers: the wire rate of the data packets a
  unit's VMs send past their virtual switch (the ``vm_data`` throughput scope; the
  ACKs a VM returns for traffic it receives are not counted against its guarantee).
  A tenant's rate in an interval sums its units that have demand in it.
* **Satisfied:** the unit's data rate over the interval is at least
  ``SATISFIED`` of its entitlement (5 % for headers and sampling).
* **Settled:** an interval of a unit that has had demand without a break for at
  least ``settle`` seconds before it (default ``SETTLE_S``, the demo's choice: the
  second half of each 1 s phase). Schemes that measure and react (MBFQ's 100 ms
  macroscheduler) need a few periods to hand a newcomer its guarantee; the verdicts
  on guarantees and fairness judge settled intervals, and the tables give every
  interval too (satisfied share and worst shortfall).
* **Spare:** what a unit sends beyond its entitlement (all it sends when it has none).
* **Bottleneck links while demand exceeds capacity:** in each interval, the links
  that saturate in the max-min fair allocation of the flows with demand over the
  hosts' links, the fabric taken as non-blocking (the hose model every scheme here
  assumes). Their measured utilisation is the work-conservation figure. On an
  oversubscribed fabric a busy fabric link can hold a host link below it; the figure
  is then a lower bound.
* **Fairness by weight:** in each interval in which two or more tenants have demand,
  all of it settled, Jain's index over those tenants of (their units' rate / their
  units' guarantee); the figure is its mean over such intervals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..sim.results import Results, jain
from .defaults import SETTLE_S as SETTLE_S  # the default settling time (module doc)
from .tables import bucket_rows

SATISFIED = 0.95
"""A unit is given its guarantee in an interval when it sends at least this share of
its entitlement."""
GUARANTEED = 0.95
"""Verdict: guarantees hold when at least this share of (unit, interval) pairs with
demand are satisfied."""
WORK_CONSERVING = 0.90
"""Verdict: work-conserving when the bottleneck links are at least this busy on average."""
SHORT_P99 = 2.0
"""Verdict: short flows (< 100 KB) are fine when their p99 slowdown is within this
factor of the best scheme's in the same comparison. (No absolute bound fits every
fabric: the ideal FCT of a 10 KB flow on a 10 Gb/s rack is a few microseconds, so
one ECN threshold's worth of queue already multiplies it several times.)"""
FAIR = 0.90
"""Verdict: fair by weight when the mean Jain index is at least this."""
SHORT_BYTES = 100e3
BUCKETS = [(0, 100e3, "< 100 KB"), (100e3, 1e6, "100 KB - 1 MB"),
           (1e6, 10e6, "1 MB - 10 MB"), (10e6, np.inf, "≥ 10 MB")]

_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}


def gbps(value: Any) -> float:
    """A rate of the scenario format ("6Gbps", or bits per second) in Gb/s."""
    if isinstance(value, int | float):
        return float(value) / 1e9
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"{value!r}: expected a rate such as \"10Gbps\"")
    return float(m.group(1)) * _UNITS[m.group(2).lower()] / 1e9


@dataclass
class Measures:
    """Everything measured of one run: per tenant, per interval, per size bucket, and
    one row of figures (``row``) with the four verdicts' numbers."""
    tenants: pd.DataFrame
    intervals: pd.DataFrame
    latency: pd.DataFrame
    row: dict[str, Any] = field(default_factory=dict)
    slowdowns: pd.DataFrame = field(default_factory=pd.DataFrame)
    """size_bytes, slowdown and tenant of every finished sized flow."""
    samples: pd.DataFrame = field(default_factory=pd.DataFrame)
    """A row per unit and interval in which it had demand: its tenant, the
    interval's end, whether its demand had settled, its rate and entitlement (Gb/s),
    from which a service level at any share of the entitlement is judged."""


def _grid(r: Results) -> np.ndarray:
    t = np.sort(r.throughput["time_s"].astype(float).unique())
    return np.concatenate([[0.0], t]) if len(t) else np.zeros(1)


def _float(s: pd.Series) -> np.ndarray:
    out: np.ndarray = s.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return out


def _through(f: pd.DataFrame, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """flows × intervals: the flow runs through the whole interval (a, b]."""
    start = _float(f["start_s"])[:, None]
    stop = np.fmin(_float(f["stop_s"]), _float(f["end_s"]))
    stop = np.where(np.isnan(stop), np.inf, stop)[:, None]
    return (start <= a[None, :] + 1e-12) & (stop >= b[None, :] - 1e-12)


def _demand(f: pd.DataFrame, workloads: list[Mapping[str, Any]]) -> np.ndarray:
    """Each flow's demand (Gb/s): its UDP source's rate, else unbounded."""
    out = np.full(len(f), np.inf)
    for i, (proto, w) in enumerate(zip(f["protocol"], f["workload"], strict=True)):
        spec = workloads[int(w)] if int(w) < len(workloads) else {}
        if str(proto) == "udp" and "rate" in spec:
            out[i] = gbps(spec["rate"])
    return out


def _units(r: Results) -> pd.DataFrame:
    """A row per (tenant, host) with VMs: its guarantee (Gb/s, at the end)."""
    v = r.vms
    if not len(v):
        return pd.DataFrame(columns=["tenant", "host", "guarantee"])
    return (v.assign(tenant=v["tenant"].astype(str), host=v["host"].astype(str))
            .groupby(["tenant", "host"], sort=True)["guarantee_gbps"].sum()
            .rename("guarantee").reset_index())


RATE_SCOPE = "vm_data"
"""The throughput scope of the units' rates (module doc: Rates)."""


def _unit_rates(r: Results, units: pd.DataFrame, ends: np.ndarray) -> np.ndarray:
    """units × intervals: the data rate (Gb/s) of the unit's VMs (module doc)."""
    tp = r.throughput[r.throughput["scope"] == RATE_SCOPE]
    host = dict(zip(r.vms["vm"].astype(str), r.vms["host"].astype(str), strict=True))
    out = np.zeros((len(units), len(ends)))
    index = {(t, h): i for i, (t, h) in enumerate(zip(units["tenant"], units["host"],
                                                        strict=True))}
    col = {round(float(t), 12): j for j, t in enumerate(ends)}
    for vm, tenant, t, g in zip(tp["id"].astype(str), tp["tenant"].astype(str),
                                tp["time_s"].astype(float), tp["gbps"].astype(float),
                                strict=True):
        i = index.get((tenant, host.get(vm, "")))
        j = col.get(round(t, 12))
        if i is not None and j is not None:
            out[i, j] += g
    return out


def _entitlements(f: pd.DataFrame, units: pd.DataFrame, through: np.ndarray,
                  demand: np.ndarray) -> np.ndarray:
    """units × intervals: the hose model's equal-split entitlement (module doc)."""
    index = {(t, h): i for i, (t, h) in enumerate(zip(units["tenant"], units["host"],
                                                        strict=True))}
    g = units["guarantee"].to_numpy(dtype=float)
    src = np.array([index.get((str(t), str(s)), -1) for t, s in
                    zip(f["tenant"], f["src"], strict=True)])
    tenant = [str(t) for t in units["tenant"]]
    dst_host = f["dst"].astype(str).to_numpy()
    out = np.zeros((len(units), through.shape[1]))
    for j in range(through.shape[1]):
        on = np.flatnonzero(through[:, j] & (src >= 0))
        if not len(on):
            continue
        pairs: dict[tuple[int, str], float] = {}
        for k in on:
            key = (int(src[k]), str(dst_host[k]))
            pairs[key] = pairs.get(key, 0.0) + demand[k]
        fan_out: dict[int, int] = {}
        fan_in: dict[tuple[str, str], int] = {}
        for s, d in pairs:
            fan_out[s] = fan_out.get(s, 0) + 1
            fan_in[(tenant[s], d)] = fan_in.get((tenant[s], d), 0) + 1
        for (s, d), want in pairs.items():
            share = g[s] / fan_out[s]
            recv = index.get((tenant[s], d))
            if recv is not None:
                share = min(share, g[recv] / fan_in[(tenant[s], d)])
            out[s, j] += min(share, want)
    return out


def _host_links(r: Results) -> tuple[dict[str, str], dict[str, str], dict[str, float]]:
    """Each host's uplink and downlink port ids ("a->b") and every port's rate."""
    L = r.links
    hosts = set(r.flows["src"].astype(str)) | set(r.flows["dst"].astype(str))
    up: dict[str, str] = {}
    down: dict[str, str] = {}
    rate: dict[str, float] = {}
    for node, peer, g in zip(L["node"].astype(str), L["peer"].astype(str),
                             L["rate_gbps"].astype(float), strict=True):
        key = f"{node}->{peer}"
        rate[key] = g
        if node in hosts:
            up.setdefault(node, key)
        if peer in hosts:
            down.setdefault(peer, key)
    return up, down, rate


def max_min(paths: list[tuple[str, ...]], caps: Mapping[str, float],
            demand: np.ndarray) -> tuple[np.ndarray, set[str]]:
    """Max-min fair rates of flows over links (water filling) and the links that
    saturate; a flow is capped at its demand."""
    rate = np.zeros(len(paths))
    frozen = np.zeros(len(paths), dtype=bool)
    left = dict(caps)
    saturated: set[str] = set()
    while not frozen.all():
        users: dict[str, list[int]] = {}
        for i in np.flatnonzero(~frozen):
            for link in paths[i]:
                users.setdefault(link, []).append(int(i))
        step = min((left[k] / len(v) for k, v in users.items()), default=np.inf)
        live = np.flatnonzero(~frozen)
        step = min(step, float((demand[live] - rate[live]).min()))
        rate[live] += step
        for k, v in users.items():
            left[k] -= step * len(v)
            if left[k] <= 1e-9 * caps[k]:
                saturated.add(k)
                frozen[v] = True
        frozen |= rate >= demand - 1e-12
    return rate, saturated


def _fabric(r: Results, f: pd.DataFrame, through: np.ndarray, demand: np.ndarray,
            ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per interval: the mean utilisation of the bottleneck links (NaN where no
    demand exceeds a link's capacity) and how many there are."""
    up, down, caps = _host_links(r)
    tp = r.throughput[r.throughput["scope"] == "link"]
    busy = {(str(i), round(float(t), 12)): float(g) for i, t, g in
            zip(tp["id"], tp["time_s"], tp["gbps"], strict=True)}
    paths: list[tuple[str, ...]] = [
        tuple(x for x in (up.get(str(s)), down.get(str(d))) if x)
        for s, d in zip(f["src"], f["dst"], strict=True)]
    util = np.full(len(ends), np.nan)
    count = np.zeros(len(ends), dtype=int)
    for j, end in enumerate(ends):
        on = np.flatnonzero(through[:, j])
        if not len(on):
            continue
        _, hot = max_min([paths[k] for k in on], caps, demand[on])
        seen = [busy[(k, round(float(end), 12))] / caps[k] for k in sorted(hot)
                if (k, round(float(end), 12)) in busy]
        if seen:
            util[j], count[j] = float(np.mean(seen)), len(seen)
    return util, count


def _latency(r: Results) -> pd.DataFrame:
    """Slowdown p50, p99 and mean by flow-size bucket, with counts."""
    sized = r.flows.dropna(subset=["size_bytes"])
    rows = bucket_rows(sized, "slowdown", 1.0, "", [(0, np.inf, "all sized"), *BUCKETS])
    return pd.DataFrame(rows, columns=["size", "finished", "unfinished", "p50", "p99",
                                       "mean"])


def _settled(want: np.ndarray, a: np.ndarray, settle: float) -> np.ndarray:
    """units × intervals: the unit has had demand without a break for ``settle``
    seconds before the interval (module doc)."""
    out = np.zeros_like(want)
    for i in range(want.shape[0]):
        since = np.inf
        for j in range(want.shape[1]):
            since = (min(since, a[j]) if want[i, j] else np.inf)
            out[i, j] = want[i, j] and a[j] >= since + settle - 1e-12
    return out


def _pct(part: np.ndarray, whole: np.ndarray) -> float:
    return 100.0 * float(part.sum()) / float(whole.sum()) if whole.any() else np.nan


def _tenant_rows(r: Results, units: pd.DataFrame, rates: np.ndarray, ent: np.ndarray,
                 settled: np.ndarray, dt: np.ndarray) -> pd.DataFrame:
    span = float(r.summary["simulated_s"])
    want = ent > 0
    ok = rates >= SATISFIED * ent
    spare = np.maximum(rates - ent, 0.0) * dt[None, :]
    sent = float((rates * dt[None, :]).sum())
    total_spare = float(spare.sum())
    rows = []
    goodput = r.flows.groupby(r.flows["tenant"].astype(str))["bytes_delivered"].sum()
    for tenant in sorted(set(units["tenant"]) | set(goodput.index)):
        m = (units["tenant"] == tenant).to_numpy()
        w, o, st = want[m], ok[m], settled[m]
        gap = np.where(w, ent[m] - rates[m], -np.inf)
        worst = np.unravel_index(int(np.argmax(gap)), gap.shape) if w.any() else None
        busy = w.any(axis=0)
        rows.append({
            "tenant": tenant,
            "guarantee_gbps": float(units.loc[m, "guarantee"].sum()),
            "rate_with_demand_gbps": float(np.where(w, rates[m], 0.0)[:, busy]
                                           .sum(axis=0).mean()) if busy.any() else np.nan,
            "entitled_gbps": float(ent[m][:, busy].sum(axis=0).mean())
            if busy.any() else np.nan,
            "throughput_gbps": float(goodput.get(tenant, 0)) * 8 / span / 1e9,
            "intervals_with_demand": int(w.sum()),
            "satisfied_pct": _pct(w & o, w),
            "settled_intervals": int(st.sum()),
            "settled_satisfied_pct": _pct(st & o, st),
            "worst_shortfall_gbps": max(0.0, float(gap[worst])) if worst else np.nan,
            "worst_shortfall_pct": max(0.0, 100.0 * float(gap[worst] / ent[m][worst]))
            if worst else np.nan,
            "spare_gbps": float(spare[m].sum()) / span,
            "spare_share_pct": 100.0 * float(spare[m].sum()) / total_spare
            if total_spare > 0.01 * sent else np.nan,
        })
    return pd.DataFrame(rows)


def _fairness(units: pd.DataFrame, rates: np.ndarray, ent: np.ndarray,
              settled: np.ndarray) -> np.ndarray:
    """Per interval: Jain's index over tenants with demand of rate / guarantee, where
    two tenants or more have demand and all of it is settled."""
    out = np.full(rates.shape[1], np.nan)
    g = units["guarantee"].to_numpy(dtype=float)
    tenants = units["tenant"].to_numpy()
    for j in range(rates.shape[1]):
        want = ent[:, j] > 0
        if (want & ~settled[:, j]).any():
            continue
        x = [rates[m, j].sum() / g[m].sum() for t in np.unique(tenants[want])
             for m in [want & (tenants == t)]]
        if len(x) >= 2:
            out[j] = jain(np.array(x))
    return out


def measure(r: Results, workloads: list[Mapping[str, Any]],
            settle: float = SETTLE_S) -> Measures:
    """Every measure of the run `r` of a scenario whose workloads are `workloads`,
    guarantees and fairness judged after `settle` seconds of demand (module doc). The
    run must have recorded the throughput scopes ``vm_data`` and ``link`` (compare
    and sweep add them)."""
    have = set(r.throughput["scope"].astype(str))
    need = [s for s in ((RATE_SCOPE,) if len(r.vms) else ()) + ("link",) if s not in have]
    if need:
        raise ValueError(f"the run recorded no {' or '.join(need)} throughput: add "
                         f"{need} to output.throughput to measure it")
    grid = _grid(r)
    a, b = grid[:-1], grid[1:]
    f = r.flows.reset_index(drop=True)
    through = _through(f, a, b)
    demand = _demand(f, list(workloads))
    units = _units(r)
    rates = _unit_rates(r, units, b)
    ent = _entitlements(f, units, through, demand)
    want, ok = ent > 0, rates >= SATISFIED * ent
    settled = _settled(want, a, settle)
    util, hot = _fabric(r, f, through, demand, b)
    intervals = pd.DataFrame({
        "from_s": a, "to_s": b, "bottleneck_links": hot, "bottleneck_utilisation": util,
        "jain": _fairness(units, rates, ent, settled),
        "units_with_demand": want.sum(axis=0), "units_satisfied": (want & ok).sum(axis=0),
        "units_settled": settled.sum(axis=0),
        "units_settled_satisfied": (settled & ok).sum(axis=0)})
    latency = _latency(r)
    done = f.dropna(subset=["size_bytes", "slowdown"])
    slow = pd.DataFrame({"size_bytes": done["size_bytes"].astype(float).to_numpy(),
                         "slowdown": done["slowdown"].astype(float).to_numpy(),
                         "tenant": done["tenant"].astype(str).to_numpy()})
    return Measures(_tenant_rows(r, units, rates, ent, settled, b - a), intervals, latency,
                    _row(r, intervals, latency), slow, _samples(units, b, rates, ent, settled))


def _samples(units: pd.DataFrame, ends: np.ndarray, rates: np.ndarray, ent: np.ndarray,
             settled: np.ndarray) -> pd.DataFrame:
    """Measures.samples: the (unit, interval) cells with demand."""
    u, i = np.nonzero(ent > 0)
    return pd.DataFrame({"tenant": units["tenant"].to_numpy()[u].astype(str),
                         "to_s": ends[i], "settled": settled[u, i],
                         "rate_gbps": rates[u, i], "entitled_gbps": ent[u, i]})


def _mean(x: pd.Series) -> float:
    return float(x.mean()) if x.notna().any() else np.nan


FIGURES: dict[str, tuple[str, tuple[float, float]]] = {
    "guarantees_pct": ("no VM of a tenant had settled demand (demand without a break "
                       "for the settling time)", (0.0, 100.0)),
    "work_conservation_pct": ("demand exceeded no host link's capacity", (0.0, 100.0)),
    "short_p99_slowdown": ("no flow under 100 KB finished", (1.0, np.inf)),
    "jain": ("no interval in which two tenants or more had settled demand", (0.0, 1.0)),
}
"""The verdicts' figures: why each is missing from a run (NaN) when it is, and the
range it can take."""


def missing(row: Mapping[str, Any]) -> dict[str, str]:
    """Why each of the verdicts' figures of `row` that is NaN could not be computed."""
    return {k: why for k, (why, _) in FIGURES.items()
            if k in row and isinstance(row[k], float) and np.isnan(row[k])}


def _row(r: Results, iv: pd.DataFrame, lat: pd.DataFrame) -> dict[str, Any]:
    want, settled = int(iv["units_with_demand"].sum()), int(iv["units_settled"].sum())
    short = lat[lat["size"] == BUCKETS[0][2]]
    s = r.summary
    row: dict[str, Any] = {
        "guarantees_pct": 100.0 * float(iv["units_settled_satisfied"].sum()) / settled
        if settled else np.nan,
        "guarantees_all_pct": 100.0 * float(iv["units_satisfied"].sum()) / want
        if want else np.nan,
        "work_conservation_pct": 100.0 * _mean(iv["bottleneck_utilisation"]),
        "short_p99_slowdown": float(short["p99"].iloc[0]) if len(short) else np.nan,
        "short_flows": int(short["finished"].iloc[0]) if len(short) else 0,
        "jain": _mean(iv["jain"]),
        "drops": int(r.links["drops"].sum()) + int(s.get("vm_queue_drops", 0)),
        "evictions": int(r.links["evictions"].sum()),
        "ecn_marks": int(s.get("ecn_marks", 0)),
        "control_packets": int(s.get("packets_sent", 0)) - int(s.get("data_packets_sent", 0)),
        "goodput_gbps": float(r.flows["bytes_delivered"].sum()) * 8 / float(s["simulated_s"])
        / 1e9,
    }
    q = r.queries.dropna(subset=["qct_s"]) if len(r.queries) else r.queries
    if len(q):
        row["qct_p50_ms"] = float(q["qct_s"].quantile(0.5)) * 1e3
        row["qct_p99_ms"] = float(q["qct_s"].quantile(0.99)) * 1e3
    if r.vm_cpu is not None and len(r.vm_cpu):
        row["cpu_cycles"] = int(r.vm_cpu["cycles"].sum())
    return row
