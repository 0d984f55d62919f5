"""BarberQ (Kim and Lee, IEEE Communications Letters 2019), §III-A microbenchmarks.

Setup (§III-A): a star of servers on one switch, 100 Gb/s links, a 1 MB port buffer
shared by the port's service queues, base RTT 40 µs (9 µs of host delay and 1 µs per
link; modelled as 10 µs on each host link), jumbo frames (9000-byte packets), WRR
with a 9000-byte quantum (one packet per turn), TCP with RTO_min 5 ms.

* Fig. 1: two services with equal weights; service 1 opens one flow at time 0,
  service 2 opens eight flows later (the paper at 0.5 s; here at 50 ms).
* Fig. 2: eight services on eight equal-weight queues; service i opens 2·i flows at
  time 0; services 8, 7, …, 2 stop one every 50 ms from 200 ms. Throughput of each
  queue every 10 ms gives Jain's index over the active queues and the aggregate.

Where the paper is silent: it does not say which servers send. A service's flows
are spread over eight sender servers (one flow per server per round), so that the
switch port, not a sender's NIC, is the bottleneck even when one service is left:
with one sender per service, that sender's NIC queue absorbs what the strawman's
125 KB queue share cannot, and Fig. 2(b)'s throughput loss disappears.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..jobs import progress
from ..measure.analysis import EPS, window
from ..report.plotting import from_zero, legend_outside, mark_times, save_csv, save_png, style
from ..sim.api import run
from ..sim.results import jain
from . import PAPER_TRANSPORT
from .claims import claim, frame

PROFILE = PAPER_TRANSPORT["barberq"][1]
"""The transport profile of every BarberQ scenario: the paper's packet-level simulator
names only "TCP" with RTO_min 5 ms (§IV-B), nearest to the ``htsim`` profile (NewReno
without SACK, no host clocks), not tenantnet's default ``linux``."""

SCHEMES = {"BarberQ": "barberq", "Best-Effort": "tail_drop", "Strawman": "static_partition"}
LINK_GBPS = 100.0


def _network(policy: str, queues: int) -> dict[str, Any]:
    return {"buffer": "1MB", "queues": queues, "scheduler": "wrr", "buffer_policy": policy,
            "dscp_map": "identity"}


def _base(duration_s: float, hosts: int, policy: str, queues: int) -> dict[str, Any]:
    return {
        "simulation": {"duration": f"{round(duration_s * 1e6)}us", "seed": 1},
        "topology": {"kind": "star", "hosts": hosts, "link_rate": "100Gbps",
                     "link_delay": "10us"},
        "network": _network(policy, queues),
        "transport": {"protocol": "tcp", "mss": "8960B", "min_rto": "5ms", "profile": PROFILE},
    }


def fig1_scenario(policy: str, start2_s: float = 0.05, duration_s: float = 0.2) -> dict[str, Any]:
    """Fig. 1: service 1 (one flow from h0) and, from `start2_s`, service 2 (eight
    flows from h1), both to h2."""
    d = _base(duration_s, 3, policy, 2)
    d["workloads"] = [
        {"kind": "long_lived", "tenant": "service1", "dscp": 0, "src": "h0", "dst": "h2"},
        {"kind": "long_lived", "tenant": "service2", "dscp": 1, "src": "h1", "dst": "h2",
         "flows_per_pair": 8, "start": f"{round(start2_s * 1e6)}us"},
    ]
    d["output"] = {"sample_interval": "10ms", "throughput": ["tenant"], "queues": False}
    return d


def fig1(start2_s: float = 0.05, duration_s: float = 0.2) -> pd.DataFrame:
    """Each service's mean goodput (Gb/s) once both are active, per scheme."""
    rows = []
    for name, policy in progress.steps(list(SCHEMES.items()), lambda x: f"Fig. 1: {x[0]}"):
        r = run(fig1_scenario(policy, start2_s, duration_s))
        tp = r.throughput
        both = window(tp[tp["scope"] == "tenant"], start2_s + 0.05)
        g = both.groupby("id")["gbps"].mean()
        rows.append({"scheme": name, "service1_gbps": g.get("service1", 0.0),
                     "service2_gbps": g.get("service2", 0.0),
                     "evicted_packets": r.summary["packets_evicted"],
                     "dropped_packets": r.summary["packets_dropped"]})
    return pd.DataFrame(rows)


def stop_time(service: int, first_s: float, gap_s: float) -> float | None:
    """When service `service` (1-8) stops: 8 at `first_s`, 7 one gap later, …; 1 never."""
    return None if service == 1 else first_s + (8 - service) * gap_s


def fig2_scenario(policy: str, first_stop_s: float = 0.2, gap_s: float = 0.05,
                  duration_s: float = 0.55) -> dict[str, Any]:
    """Fig. 2: 8 services from hosts h0-h7 to h8, service i on queue i-1 with 2i flows."""
    d = _base(duration_s, 9, policy, 8)
    workloads = []
    for i in range(1, 9):
        n = 2 * i
        stop = stop_time(i, first_stop_s, gap_s)
        for r in range((n + 7) // 8):
            hosts = [f"h{h}" for h in range(min(8, n - 8 * r))]
            w: dict[str, Any] = {"kind": "long_lived", "tenant": f"service{i}", "dscp": i - 1,
                                 "src": hosts, "dst": "h8"}
            if stop is not None:
                w["stop"] = f"{round(stop * 1e6)}us"
            workloads.append(w)
    d["workloads"] = workloads
    d["output"] = {"sample_interval": "10ms", "throughput": ["queue"], "queues": False}
    return d


def fig2(first_stop_s: float = 0.2, gap_s: float = 0.05, duration_s: float = 0.55,
         schemes: dict[str, str] | None = None) -> pd.DataFrame:
    """Per 10 ms sample and scheme: active services, Jain's index over the active
    queues, aggregate throughput, and each queue's throughput."""
    rows = []
    for name, policy in progress.steps(list((schemes or SCHEMES).items()),
                                       lambda x: f"Fig. 2: {x[0]}"):
        r = run(fig2_scenario(policy, first_stop_s, gap_s, duration_s))
        tp = r.throughput
        q = tp[(tp["scope"] == "queue") & tp["id"].str.startswith("switch->h8:q")].copy()
        q["queue"] = q["id"].str.extract(r":q(\d+)$")[0].astype(int)
        for t, g in q.groupby("time_s", sort=True):
            per = g.set_index("queue")["gbps"].reindex(range(8)).fillna(0.0)
            active = [i - 1 for i in range(1, 9)
                      if (s := stop_time(i, first_stop_s, gap_s)) is None or t <= s + EPS]
            row = {"time_s": t, "scheme": name, "active": len(active),
                   "jain": jain(per.iloc[active].to_numpy()), "aggregate_gbps": float(per.sum())}
            row.update({f"q{i}_gbps": float(per.iloc[i]) for i in range(8)})
            rows.append(row)
    return pd.DataFrame(rows)


def fig1_compare(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's claim (§I) and BarberQ's answer to it beside ours: equal weights should
    split the link in half; best effort does not, BarberQ does."""
    d = df.set_index("scheme")
    half = LINK_GBPS / 2
    be = float(d.loc["Best-Effort", "service1_gbps"])
    b = d.loc["BarberQ"]
    worst = float(max(abs(b["service1_gbps"] / half - 1), abs(b["service2_gbps"] / half - 1)))
    return frame([
        claim("best effort: service 1's goodput, Gb/s", round(be, 2),
              paper='"service 1 cannot grab a half of bandwidth"',
              expected=f"< {0.9 * half:g} (90 % of the half)", ok=be < 0.9 * half),
        claim("BarberQ: each service within 5 % of half the link, worst deviation %",
              round(worst * 100, 2), paper='"the bandwidth is expected to be guaranteed by '
              'packet schedulers"', expected="<= 5 %", ok=worst <= 0.05,
              note=f"service 1 {b['service1_gbps']:.2f}, service 2 "
              f"{b['service2_gbps']:.2f} Gb/s"),
    ])


def fig2_compare(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's claims (§III-A) beside ours, over the 10 ms samples after the first."""
    d = window(df, 0.01)
    by = {k: g for k, g in d.groupby("scheme")}
    b, be, st = by["BarberQ"], by["Best-Effort"], by["Strawman"]

    def agg(g: pd.DataFrame) -> float:
        return float(g["aggregate_gbps"].min() / LINK_GBPS * 100)

    return frame([
        claim("BarberQ: lowest Jain's index", round(float(b["jain"].min()), 4),
              paper='"BarberQ provides bandwidth guarantees and work conservation '
              'simultaneously"', expected=">= 0.99", ok=b["jain"].min() >= 0.99),
        claim("BarberQ: lowest aggregate throughput, % of the link", round(agg(b), 2),
              paper='"BarberQ provides bandwidth guarantees and work conservation '
              'simultaneously"', expected=">= 98 %", ok=agg(b) >= 98),
        claim("best effort: lowest Jain's index", round(float(be["jain"].min()), 4),
              paper='"bandwidth cannot be shared fairly"', expected="< 0.9",
              ok=be["jain"].min() < 0.9),
        claim("strawman: lowest aggregate throughput, % of the link", round(agg(st), 2),
              paper='"Strawman is not work-conserving when few services are active"',
              expected="< 95 %", ok=agg(st) < 95),
    ])


def reproduce_fig1(out: Path) -> list[Path]:
    """Writes barberq_fig1.csv, the comparison with the paper and barberq_fig1.png."""

    out.mkdir(parents=True, exist_ok=True)
    df = fig1()
    csv = save_csv(df, out / "barberq_fig1.csv")
    cmp = save_csv(fig1_compare(df), out / "barberq_fig1_vs_paper.csv")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(df))
    ax.bar(x - 0.2, df["service1_gbps"], 0.4, label="service 1 (1 flow)")
    ax.bar(x + 0.2, df["service2_gbps"], 0.4, label="service 2 (8 flows)")
    ax.axhline(LINK_GBPS / 2, color="k", lw=0.8, ls="--", label="equal share")
    ax.set_xticks(x, df["scheme"])
    ax.set_xlabel("buffer management of the switch port")
    ax.set_ylabel("goodput (Gb/s)")
    ax.set_title("BarberQ Fig. 1: two services, equal weights, 100 Gb/s")
    legend_outside(ax)
    png = save_png(fig, out / "barberq_fig1.png")
    return [csv, cmp, png]


def reproduce_fig2(out: Path) -> list[Path]:
    """Writes barberq_fig2.csv, the comparison with the paper and barberq_fig2.png
    (Jain's index and aggregate throughput over time for the three schemes)."""

    out.mkdir(parents=True, exist_ok=True)
    df = fig2()
    csv = save_csv(df, out / "barberq_fig2.csv")
    cmp = save_csv(fig2_compare(df), out / "barberq_fig2_vs_paper.csv")
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3.6))
    for i, (name, g) in enumerate(df.groupby("scheme", sort=False)):
        a.plot(g["time_s"] * 1e3, g["jain"], label=name, **style(i))
        b.plot(g["time_s"] * 1e3, g["aggregate_gbps"] / LINK_GBPS * 100, label=name,
               **style(i))
    a.set_title("(a) fairness index of active queues")
    a.set_ylabel("Jain's index")
    b.set_title("(b) aggregate throughput")
    b.set_ylabel("% of link (axis from 80 %)")
    stops = [s * 1e3 for i in range(8, 1, -1) if (s := stop_time(i, 0.2, 0.05)) is not None]
    for ax in (a, b):
        ax.set_xlabel("time (ms)")
        ax.grid(alpha=0.3)
        mark_times(ax, stops, "a service stops")
    from_zero([a])
    b.set_ylim(80, 101)
    legend_outside(b)
    png = save_png(fig, out / "barberq_fig2.png")
    return [csv, cmp, png]
