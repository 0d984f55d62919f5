"""The emulated run's tables, the same as ``tenantnet run`` writes
(:class:`tenantnet.Results`), so that ``report`` and ``compare`` read them. The twin
simulation's tables give the rows (every port, VM and flow) and the column types;
what the emulation measured replaces what the simulator computed.

* ``throughput``: ``link`` from each port's bytes sent (Ethernet frames, as HTB counts
  them); ``vm`` and ``vm_data`` from the payload each VM's flows delivered in the
  interval (the receivers' ``tcpi_bytes_received``), counted on the wire as full
  frames (``WIRE`` bytes per MSS of payload: the kernel's 1448-byte MSS with
  timestamps, 52 bytes of TCP/IP headers and 14 of Ethernet), so a VM held at its
  guarantee by HTB reads as its guarantee; ``tenant`` the sum of its VMs; ``flow``
  each flow's delivered payload.
* ``flows``: FCTs from the scheduled start to the last byte's arrival, the kernel's
  retransmissions (``tcpi_total_retrans``), timeouts (``tcpi_total_rto``, Linux 6.7
  on; empty on older kernels).
* ``links``, ``queue_stats``, ``queues``: bytes, packets and drops of each port's root
  qdisc and its backlog at every sample; no ECN marks, no evictions.
* ``vm_rates``: with MBFQ, the agent's decisions every T (SR, AR, TR, RU).
* ``summary.json``: the twin's, with the emulation's facts under ``emulated``;
  ``vswitch.packets_shaped`` counts the times a VM's HTB class was over its rate when
  its turn came (its ``overlimits``), which says whether a rate limit acted.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...jobs.machine import CpuUse
from ...sim.results import Results
from .agent import Agent
from .fabric import Fabric
from .sampler import NodeSampler, times
from .traffic import INFINITE_SSTHRESH, Report

MSS = 1448
WIRE = (MSS + 52 + 14) / MSS
"""Frame bytes on the wire per byte of TCP payload (module doc)."""


@dataclass
class Measured:
    """Everything an emulation measured."""

    nodes: dict[str, NodeSampler]
    traffic: Report
    agents: list[Agent] = field(default_factory=list)
    interval: float = 0.05
    duration: float = 0.0
    cpu: CpuUse | None = None
    """What the CPUs did while the traffic ran."""
    cc: str = "reno"
    """The kernel's congestion control the flows ran."""


def _typed(df: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """`df` with `like`'s columns, in its order and with its types."""
    out = pd.DataFrame({c: df[c] if c in df else pd.Series([None] * len(df), dtype=object)
                        for c in like.columns})
    for c in like.columns:
        out[c] = out[c].astype(like[c].dtype)
    return out.reset_index(drop=True)


def on_grid(times: list[float], values: np.ndarray, step: float, n: int) -> np.ndarray:
    """Counters sampled at `times` (s; one row each) read at the nominal instants
    k · `step`, k = 0..n, by linear interpolation: a sampler that woke a few ms late
    would otherwise put those ms' bytes in the wrong interval."""
    grid = np.arange(n + 1) * step
    if not len(times):
        return np.zeros((n + 1, values.shape[1] if values.ndim == 2 else 0))
    t = np.asarray(times, dtype=float)
    return np.column_stack([np.interp(grid, t, values[:, j]) for j in range(values.shape[1])]) \
        if values.shape[1] else np.zeros((n + 1, 0))


def _n(m: Measured) -> int:
    return round(m.duration / m.interval)


def _delivered(m: Measured) -> np.ndarray:
    """instants × flows: bytes delivered at each nominal sampling instant (each
    receiving loop's samples on the grid, added: a flow is in one loop's)."""
    out = np.zeros((_n(m) + 1, 0))
    for s in m.traffic.samples:
        raw = np.array(s.bytes, dtype=float).reshape(len(s.bytes), -1)
        grid = on_grid(s.times, raw, m.interval, _n(m))
        out = grid if not out.shape[1] else out + grid
    return out


def _port_bytes(m: Measured, node: str, ifname: str) -> np.ndarray:
    """instants × (tx bytes, tx packets, drops) of a port at the nominal instants."""
    s = m.nodes[node]
    raw = np.array([[x[ifname].tx_bytes, x[ifname].tx_packets, x[ifname].drops]
                    for x in s.samples], dtype=float).reshape(-1, 3)
    return on_grid(times(s.samples, ifname), raw, m.interval, _n(m))


def _throughput(sim: Results, f: Fabric, m: Measured) -> pd.DataFrame:
    scopes = set(sim.throughput["scope"].astype(str))
    d = np.diff(_delivered(m), axis=0)
    times = [round((k + 1) * m.interval, 9) for k in range(len(d))]
    gb = 8 / m.interval / 1e9
    fl = sim.flows
    src = {int(i): f"{t}/{s}" for i, t, s in zip(fl["flow_id"], fl["tenant"], fl["src"],
                                                  strict=True)}
    ports = {(p.node, p.ifname): _port_bytes(m, p.node, p.ifname) for p in f.ports}
    rows: list[dict[str, Any]] = []
    for k, t in enumerate(times):
        per_vm: dict[str, float] = {v.vm: 0.0 for v in f.vms}
        for fid in range(d.shape[1]):
            if src.get(fid) in per_vm:
                per_vm[src[fid]] += d[k, fid] * WIRE * gb
        if "tenant" in scopes:
            for tenant in dict.fromkeys(v.tenant for v in f.vms):
                rows.append({"time_s": t, "scope": "tenant", "id": tenant, "tenant": tenant,
                             "gbps": sum(g for vm, g in per_vm.items()
                                         if vm.split("/")[0] == tenant)})
        if "link" in scopes:
            for p in f.ports:
                b = ports[(p.node, p.ifname)][:, 0]
                rows.append({"time_s": t, "scope": "link", "id": f"{p.node}->{p.peer}",
                             "tenant": "", "gbps": (b[k + 1] - b[k]) * gb})
        for scope in ("vm", "vm_data"):
            if scope in scopes:
                rows += [{"time_s": t, "scope": scope, "id": v.vm, "tenant": v.tenant,
                          "gbps": per_vm[v.vm]} for v in f.vms]
        if "flow" in scopes:
            rows += [{"time_s": t, "scope": "flow", "id": str(i), "tenant": src[i].split("/")[0],
                      "gbps": d[k, i] * gb} for i in range(d.shape[1]) if i in src]
    return _typed(pd.DataFrame(rows, columns=list(sim.throughput.columns)), sim.throughput)


def _flows(sim: Results, m: Measured) -> pd.DataFrame:
    fl = sim.flows.copy()
    last = _delivered(m)[-1]
    ids = fl["flow_id"].astype(int).to_numpy()
    fl["bytes_delivered"] = [int(last[i]) if i < len(last) else 0 for i in ids]
    ended = m.traffic.ended
    start = fl["start_s"].astype(float).to_numpy()
    end = [ended.get(int(i)) for i in ids]
    fl["end_s"] = pd.array([e for e in end], dtype="Float64")
    fl["fct_s"] = pd.array([e - s if e is not None else None for e, s in
                            zip(end, start, strict=True)], dtype="Float64")
    fl["slowdown"] = fl["fct_s"] / fl["ideal_fct_s"]
    fl["retransmits"] = [m.traffic.retransmits.get(int(i), 0) for i in ids]
    fl["timeouts"] = [m.traffic.timeouts.get(int(i), 0) for i in ids]
    fl["protocol"] = m.cc
    out = _typed(fl, sim.flows)
    if not m.traffic.counts_timeouts:  # a kernel before 6.7: not counted, left empty
        out["timeouts"] = pd.array([None] * len(out), dtype="Int64")
    return out


def _ports(sim: Results, f: Fabric, m: Measured) -> tuple[pd.DataFrame, pd.DataFrame,
                                                           pd.DataFrame]:
    links = sim.links.copy()
    rows = []
    by = {(p.node, p.peer): p for p in f.ports}
    stats = []
    for node, peer, rate in zip(links["node"].astype(str), links["peer"].astype(str),
                                links["rate_gbps"].astype(float), strict=True):
        p = by[(node, peer)]
        s = m.nodes[node].samples
        c = _port_bytes(m, node, p.ifname)
        tx, pkts, drops = (round(float(x)) for x in c[-1] - c[0])
        backlog = np.array([x[p.ifname].backlog for x in s[1:]] or [0], dtype=float)
        stats.append({"tx_bytes": tx, "tx_packets": pkts, "drops": drops,
                      "evictions": 0, "ecn_marks": 0,
                      "mean_queue_bytes": float(backlog.mean()),
                      "max_queue_bytes": int(backlog.max()),
                      "utilization": tx * 8 / m.duration / (rate * 1e9)})
        for k, x in enumerate(s[1:]):
            rows.append({"time_s": round((k + 1) * m.interval, 9), "switch": node,
                         "port": p.number, "queue": 0, "bytes": x[p.ifname].backlog,
                         "peer": peer})
    for col in stats[0] if stats else []:
        links[col] = [st[col] for st in stats]
    have = set(sim.queues["switch"].astype(str)) if len(sim.queues) else set()
    queues = pd.DataFrame([r for r in rows if r["switch"] in have],
                          columns=list(sim.queues.columns))
    qs = sim.queue_stats.copy()
    key = {(str(n), str(q)): i for i, (n, q) in enumerate(zip(links["node"], links["peer"],
                                                             strict=True))}
    for col, src in (("tx_bytes", "tx_bytes"), ("tx_packets", "tx_packets"),
                     ("drops", "drops"), ("evictions", "evictions"),
                     ("ecn_marks", "ecn_marks"), ("mean_bytes", "mean_queue_bytes"),
                     ("max_bytes", "max_queue_bytes")):
        qs[col] = [stats[key[(str(n), str(p))]][src] if int(q) == 0 else 0
                   for n, p, q in zip(qs["node"], qs["peer"], qs["queue"], strict=True)]
    return (_typed(links, sim.links), _typed(queues, sim.queues),
            _typed(qs, sim.queue_stats))


def emulated_results(sim: Results, f: Fabric, m: Measured, scale: float, scheme: str,
                     transport: str) -> Results:
    """The emulated run as :class:`Results` (module doc)."""
    flows = _flows(sim, m)
    links, queues, qs = _ports(sim, f, m)
    vms = sim.vms.copy()
    tx = {v: 0.0 for v in vms["vm"].astype(str)}
    for t, s, b in zip(flows["tenant"], flows["src"], flows["bytes_delivered"], strict=True):
        if f"{t}/{s}" in tx:
            tx[f"{t}/{s}"] += float(b) * WIRE
    vms["tx_bytes"] = [int(tx[str(v)]) for v in vms["vm"]]
    vms["mean_gbps"] = vms["tx_bytes"].astype(float) * 8 / m.duration / 1e9
    vms["drops"] = 0
    rates = pd.DataFrame([r for a in m.agents for r in a.rows])
    rates = rates.sort_values(["time_s", "vm"], kind="stable") if len(rates) else rates
    hosts = set(f.hosts)
    sent = int(links[links["node"].astype(str).isin(hosts)]["tx_packets"].sum())
    summary = dict(sim.summary)
    summary.update({
        "scenario": f"{sim.summary.get('scenario', 'scenario')} [emulated]",
        "wall_s": m.duration, "events": 0, "packets_sent": sent, "data_packets_sent": sent,
        "packets_dropped": int(links["drops"].sum()), "vm_queue_drops": 0,
        "packets_evicted": 0, "ecn_marks": 0,
        "flows_completed": len(m.traffic.ended),
        "emulated": {"scheme": scheme, "scale": scale, "transport": transport,
                     "kernel": platform.release(), "cpus": os.cpu_count(),
                     "sample_interval_s": m.interval,
                     "latest_start_s": round(max(m.traffic.late.values(), default=0.0), 6),
                     "wire_bytes_per_payload_byte": round(WIRE, 6)}})
    summary["vswitch"] = {"packets_shaped": sum(n.shaped for n in m.nodes.values()),
                          "control_packets": 0}
    return Results(summary=summary, flows=flows, throughput=_throughput(sim, f, m),
                   queues=queues, links=links, queue_stats=qs, vms=_typed(vms, sim.vms),
                   vm_rates=_typed(rates, sim.vm_rates) if len(rates)
                   else sim.vm_rates.iloc[0:0].copy(), queries=sim.queries.iloc[0:0].copy(),
                   flow_trace=_flow_trace(sim, m) if sim.flow_trace is not None else None)


CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")
"""Linux's ``tcpi_ca_state`` codes 0 to 4, named as the simulator's trace names them."""


def _flow_trace(sim: Results, m: Measured) -> pd.DataFrame:
    """The kernel's trace of the flows the simulated twin traced, in its columns:
    snd_una and snd_max, which ``TCP_INFO`` does not give, are empty."""
    rows = [(s.t, fid, s.cwnd * s.mss,
             None if s.ssthresh >= INFINITE_SSTHRESH else s.ssthresh * s.mss,
             s.rtt_us / 1e6 if s.rtt_us else None, s.rto_us / 1e6,
             CA_STATES[s.ca_state] if s.ca_state < len(CA_STATES) else "open")
            for fid, states in sorted(m.traffic.traces.items()) for s in states]
    cols = ["time_s", "flow_id", "cwnd_bytes", "ssthresh_bytes", "srtt_s", "rto_s",
            "state"]
    df = pd.DataFrame(rows, columns=cols).sort_values(["time_s", "flow_id"],
                                                       kind="stable")
    like = sim.flow_trace
    assert like is not None
    out = pd.DataFrame({
        "time_s": df["time_s"].astype(float).to_numpy(),
        "flow_id": df["flow_id"].astype(like["flow_id"].dtype).to_numpy(),
        "cwnd_bytes": df["cwnd_bytes"].astype(like["cwnd_bytes"].dtype).to_numpy(),
        "ssthresh_bytes": pd.array(df["ssthresh_bytes"].tolist(), dtype="Int64"),
        "srtt_s": pd.array(df["srtt_s"].tolist(), dtype="Float64"),
        "rto_s": df["rto_s"].astype(float).to_numpy(),
        "state": pd.array(df["state"].tolist(), dtype="string"),
        "snd_una": pd.array([None] * len(df), dtype="Int64"),
        "snd_max": pd.array([None] * len(df), dtype="Int64"),
    })
    return out
