"""``tenantnet emulate``: a scenario on this machine's Linux networking, beside the
simulator's run of the same scaled scenario (its twin).

The steps: the scenario under the scheme, scaled and with the kernel's transport
(:mod:`.prepare`); the twin simulation, whose flows the emulation replays and whose
tables give the emulated ones their rows; the fabric in namespaces (:mod:`.fabric`),
each host's NIC shaped by the scheme's plan (:mod:`tenantnet.linux.tc`, with MBFQ's
agent, :mod:`.agent`); the traffic (:mod:`.traffic`) and the samplers
(:mod:`.sampler`) for the scenario's duration; then the tables (:mod:`.tables`). The
namespaces are removed on every way out (:class:`tenantnet.linux.lab.Lab`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ... import _core
from ...comparison.compare import instrumented
from ...errors import ScenarioError
from ...jobs.machine import CpuClock, CpuUse
from ...sim.api import run
from ...sim.layout import size_bytes, switch_layout
from ...sim.results import Results
from ...sim.scenario import Scenario
from .. import lab as linux_lab
from ..tc import Plan
from . import prepare
from .agent import Agent
from .fabric import GSO_SEGMENTS, Fabric, build, plan_fabric
from .fidelity import Fidelity, judge, sent_while_backlogged
from .kinds import DEFAULT_WIRE, Wire
from .plans import classifies, flow_dscps, host_tags, port_plans, socket_tos
from .process import TrafficProcess
from .sampler import NodeSampler, times
from .tables import Measured, emulated_results
from .traffic import FlowPlan

TAG = "emu"
"""The namespaces of an emulation are ``tn-emu-<node>``: one emulation at a time, and
``tenantnet emulate --cleanup`` removes what a killed one left."""


@dataclass
class Emulation:
    """What :func:`emulate` returns: the emulated run's results, its twin's, the scale
    and the scheme."""

    emulated: Results
    simulated: Results
    scale: float
    scheme: str
    transport: str
    """The transport both ran, in words."""
    interval: float
    """The sampling interval (s)."""
    data: dict[str, Any]
    """The scenario both ran: under the scheme, scaled, with the kernel's transport."""
    fidelity: Fidelity
    """What the machine did to the emulated run, and whether it can be trusted."""
    starts: pd.DataFrame
    """Each emulated flow (``flow_id``): how late its data started after its scheduled
    start (``late_s``) and the least RTT its sender sampled (``min_rtt_s``, NaN where
    the kernel took none)."""


def twin(scenario: Scenario, scheme: str | None, scale: float | None,
         seed: int | None = None) -> tuple[Scenario, Results, float, str, str]:
    """The scaled scenario under `scheme` with the kernel's transport, its simulated
    run, the scale, the scheme's name and the transport in words."""
    base = str(scenario.base_dir)
    data, name = prepare.scheme_of(instrumented(scenario.data()), scheme, base)
    if scale is None:  # the fastest host link: a switch port toward a host
        sw = switch_layout(data, scenario)["switches"]
        names = {s["name"] for s in sw}
        nic = max((float(p["rate_bps"]) for s in sw for p in s["ports"]
                   if p["peer"] not in names), default=0.0)
        scale = prepare.default_scale(nic / 1e9)
    elif not 0 < scale <= 1:
        raise ScenarioError(f"--scale {scale:g}: expected a factor in (0, 1]")
    data = prepare.scaled(data, scale)
    data, words = prepare.kernel_transport(data)
    sc = Scenario.from_dict(data, scenario.source, base)
    return sc, run(sc, seed=seed), scale, name, words


def _flows(r: Results, f: Fabric, ns: dict[str, str], duration: float,
           tos: dict[int, int]) -> list[FlowPlan]:
    traced = set() if r.flow_trace is None else set(r.flow_trace["flow_id"].astype(int))
    out = []
    for row in r.flows.itertuples():
        if float(row.start_s) >= duration:
            continue
        src = f.vm_of(str(row.tenant), str(row.src))
        dst = f.vm_of(str(row.tenant), str(row.dst))
        stop = None if pd.isna(row.stop_s) else float(row.stop_s)
        size = None if pd.isna(row.size_bytes) else int(row.size_bytes)
        out.append(FlowPlan(int(row.flow_id), ns[src.vm if src else str(row.src)],
                            src.addr if src else f.addr[str(row.src)],
                            ns[dst.vm if dst else str(row.dst)],
                            dst.addr if dst else f.addr[str(row.dst)], size,
                            float(row.start_s), stop, tos.get(int(row.flow_id), 0),
                            int(row.flow_id) in traced))
    return out


def emulate(scenario: Scenario, scheme: str | None = None, out: Path | None = None,
            scale: float | None = None, seed: int | None = None,
            say: Callable[[str], None] = lambda s: None,
            vm_stack: str = "host", wire: Wire = DEFAULT_WIRE) -> Emulation:
    """Emulates `scenario` under `scheme` (module doc) and writes the emulated run's
    tables into `out` (its twin's into ``out/simulated``) when given; `wire` says how
    the hosts put packets on the wire (:class:`.kinds.Wire`)."""
    try:
        # deferred: pyroute2 is the optional ``linux`` extra
        import pyroute2  # noqa: F401
    except ImportError:
        raise ScenarioError("tenantnet emulate needs pyroute2: pip install "
                            "'tenantnet[linux]'") from None
    sc, sim, scale, name, words = twin(scenario, scheme, scale, seed)
    data = sc.data()
    layout = switch_layout(data, sc)
    switches = {s["name"] for s in layout["switches"]}
    f = plan_fabric(sim.links, sim.vms, switches)
    net, packet = layout["network"], int(layout["packet_bytes"])
    host_buf = size_bytes(net.get("host_buffer") or net["buffer"], packet, "network.buffer")
    sw_buf = size_bytes(net["buffer"], packet, "network.buffer")
    limits = {n: max(packet, host_buf if n in f.hosts else sw_buf)
              for n in [*f.hosts, *f.switches]}
    cc = prepare.kernel_cc(data)
    needs = {"htb": "link rates", "bfifo": "port buffers", f"tcp_{cc}": "TCP"}
    duration = float(sim.summary["simulated_s"])
    interval = _sample_interval(sim)
    rto = _min_rto_ms(data)
    dscp = flow_dscps(sim, data) if classifies(layout) else {}
    tags = host_tags(f, data) if classifies(layout) else {}
    plans = port_plans(f, name, layout, limits, tags, wire.burst_s)
    tos = socket_tos(f, sim, dscp, tags)
    if tags:
        needs["clsact"] = "the hosts' DSCP tagging"
    linux_lab.require(needs)
    say(f"emulating {scenario.source} under {name} at scale {scale:g} for {duration:g} s "
        f"({len(f.hosts)} hosts, {len(f.vms)} VMs, {len(f.switches)} switches)")
    with linux_lab.Lab(TAG, "`tenantnet emulate --cleanup`") as lab:
        ns = build(f, lab, plans, rto, vm_stack, tso=wire.tso)
        flows = _flows(sim, f, ns, duration, tos)
        m = _measure(f, ns, plans, flows, (duration, interval, cc), name, data)
    fidelity = assess(f, plans, m)
    res = emulated_results(sim, f, m, scale, name, words)
    res.summary["emulated"]["fidelity"] = fidelity.as_dict()
    if wire.words():
        words += f"; {wire.words()}"
        res.summary["emulated"]["wire"] = wire.words()
    e = Emulation(res, sim, scale, name, words, interval, data, fidelity, starts(m))
    if out is not None:
        write(e, out)
    return e


def starts(m: Measured) -> pd.DataFrame:
    """:attr:`Emulation.starts` from what the traffic reported."""
    t = m.traffic
    ids = sorted(t.late)
    return pd.DataFrame({"flow_id": ids, "late_s": [t.late[i] for i in ids],
                         "min_rtt_s": [t.min_rtt.get(i, float("nan")) for i in ids]})


def write(e: Emulation, out: Path) -> None:
    """Writes the emulated run's tables into `out` and its twin's into
    ``out/simulated``."""
    e.emulated.write(out)
    e.simulated.write(out / "simulated")


def _sample_interval(r: Results) -> float:
    t = sorted(set(r.throughput["time_s"].astype(float)))
    return t[0] if t else 0.05


def _min_rto_ms(data: dict[str, Any]) -> float:
    v = data.get("transport", {}).get("min_rto")
    return _core.parse_duration(str(v)) * 1e3 if v is not None else 200.0


def _measure(f: Fabric, ns: dict[str, str], plans: dict[tuple[str, str], Plan],
             flows: list[FlowPlan], timing: tuple[float, float, str], scheme: str,
             data: dict[str, Any]) -> Measured:
    duration, interval, cc = timing
    n = round(duration / interval)
    traffic = TrafficProcess(flows, duration, cc, interval)
    nodes = [NodeSampler(ns[x], [p.ifname for p in f.ports if p.node == x], interval, n,
                         frozenset(p.ifname for p in f.ports
                                   if p.node == x and plans[(x, p.ifname)].vms))
             for x in [*f.hosts, *f.switches]]
    agents = []
    if scheme == "mbfq":
        table = json.dumps(data.get("vswitch", {}).get("mbfq", {}))
        nics = [plans[(h, f.uplink(h).ifname)] for h in f.hosts]
        # the largest packet: TCP's segmentation offload sends GSO_SEGMENTS at once
        packet = GSO_SEGMENTS * (nics[0].packet_bytes + 14) if nics else 0
        agents = [Agent(ns[h], nic, table, packet_bytes=packet)
                  for h, nic in zip(f.hosts, nics, strict=True) if nic.vms]
    done = threading.Event()
    try:
        traffic.open()
        t0 = time.monotonic() + 0.2
        clock = CpuClock.now()
        for a in agents:  # processes forked before this one starts threads
            a.start(t0, duration)
        runs = [s.run for s in nodes]
        threads = [threading.Thread(target=r, args=(t0, done), daemon=True) for r in runs]
        for t in threads:
            t.start()
        traffic.start(t0)
        for t in threads:
            t.join(timeout=max(0.0, t0 + duration + 5 - time.monotonic()))
        cpu = CpuUse.between(clock, CpuClock.now())
        outcome = traffic.finish(10)
        for a in agents:
            a.collect(max(1.0, t0 + duration + 5 - time.monotonic()))
    except RuntimeError as e:
        raise ScenarioError(f"the emulation failed: {e}") from None
    finally:
        done.set()
        traffic.close()
        for a in agents:
            a.stop()
    errors = [x for x in [*(s.error for s in nodes), *(a.error for a in agents),
                          *outcome.errors] if x]
    if errors:
        raise ScenarioError("the emulation failed: " + "; ".join(errors[:3]))
    return Measured(nodes={x: s for x, s in zip([*f.hosts, *f.switches], nodes,
                                                 strict=True)},
                    traffic=outcome, agents=agents, interval=interval, duration=duration,
                    cpu=cpu, cc=cc)


def assess(f: Fabric, plans: dict[tuple[str, str], Plan], m: Measured) -> Fidelity:
    """The run's measures of itself and the verdict (:mod:`.fidelity`): the queues
    judged are each VM's class on a host's NIC while its rate is its ceiling, and the
    ports with one queue at the link's rate."""
    series = []
    for p in f.ports:
        s, plan = m.nodes[p.node].samples, plans[(p.node, p.ifname)]
        at = times(s, p.ifname)
        if plan.vms:
            for v in plan.vms:
                rows = [x[p.ifname].classes.get(v.minor) for x in s]
                series.append((at, [(c.tx_bytes, c.backlog, c.rate_bps)
                                    if c is not None and c.rate_bps == c.ceil_bps
                                    else (0, 0, 0) for c in rows]))
        elif not plan.queues:
            series.append((at, [(x[p.ifname].tx_bytes, x[p.ifname].backlog, p.rate_bps)
                                for x in s]))
    late = [b for a in m.agents for _, b in a.lateness] if m.agents else None
    return judge(list(m.traffic.late.values()), late, sent_while_backlogged(series), m.cpu)
