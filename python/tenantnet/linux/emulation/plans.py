"""Each port's traffic control in an emulation (:class:`tenantnet.linux.tc.Plan`), and
each flow's DSCP.

* A host's NIC: the host scheme's plan, as ``deploy linux`` writes it: no VM class
  (``none``: the NIC's rate for all), a class per VM at its guarantee (``static``) or
  at the NIC's rate until MBFQ's agent sets it (``mbfq``).
* A switch port: one class at the link's rate, or, where the scenario's ports have
  several queues, a class per queue classified by DSCP (:mod:`tenantnet.linux.queues`).
* DSCP, only where the switches classify: the VMs of a tenant whose workloads all
  carry one DSCP are tagged by their host (an eBPF program on the NIC's egress, by
  source address: how a hypervisor marks a tenant's packets, as QShare does); any
  other flow's sender sets it on its socket (``IP_TOS``). PIAS (a flow's first bytes
  tagged apart) is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import ScenarioError
from ...sim.results import Results
from ..queues import switch_queues
from ..tc import FIRST_VM, Plan, VmClass, tenant_dscps
from .fabric import GSO_SEGMENTS, Fabric


def flow_dscps(r: Results, data: Mapping[str, Any]) -> dict[int, int]:
    """Each flow's DSCP: its workload's, or entry k mod n of its list for the
    workload's k-th flow."""
    ws = data.get("workloads", [])
    for i, w in enumerate(ws):
        if w.get("pias"):
            raise ScenarioError(f"workloads[{i}].pias: an emulation does not tag a flow's "
                                "first bytes apart (PIAS)")
    out = {}
    seen: dict[int, int] = {}
    for fid, w in sorted(zip(r.flows["flow_id"].astype(int), r.flows["workload"].astype(int),
                             strict=True)):
        d = ws[w].get("dscp", 0) if w < len(ws) else 0
        values = d if isinstance(d, list) else [d]
        k = seen.get(w, 0)
        seen[w] = k + 1
        out[int(fid)] = int(values[k % len(values)])
    return out


def classifies(layout: Mapping[str, Any]) -> bool:
    """Whether the scenario's switch ports have several queues."""
    return int(layout["network"]["queues"]) > 1


def host_tags(f: Fabric, data: Mapping[str, Any]) -> dict[str, int]:
    """The VMs their hosts tag, VM name to DSCP: those of a tenant whose workloads all
    carry one DSCP other than 0 (:func:`tenantnet.linux.tc.tenant_dscps`, what ``deploy
    linux`` tags)."""
    dscp = tenant_dscps(dict(data))
    return {v.vm: dscp[v.tenant] for v in f.vms if v.tenant in dscp}


def socket_tos(f: Fabric, r: Results, dscp: Mapping[int, int],
               tags: Mapping[str, int]) -> dict[int, int]:
    """The TOS byte each flow's sender sets on its socket: its DSCP, unless its host tags
    its VM (`tags`)."""
    out = {}
    for fid, t, s in zip(r.flows["flow_id"].astype(int), r.flows["tenant"].astype(str),
                         r.flows["src"].astype(str), strict=True):
        v = f.vm_of(t, s)
        d = dscp.get(int(fid), 0)
        if d and (v is None or v.vm not in tags):
            out[int(fid)] = d << 2
    return out


def port_plans(f: Fabric, scheme: str, layout: Mapping[str, Any], limits: Mapping[str, int],
               tags: Mapping[str, int], burst_s: float = 1e-3) -> dict[tuple[str, str], Plan]:
    """Every port's plan, by (node, interface) (module doc); every HTB class's burst
    `burst_s` at its rate."""
    packet = int(layout["packet_bytes"])
    out = {}
    for p in f.ports:
        plan = Plan("static", p.ifname, p.rate_bps, limits[p.node], packet, burst_s=burst_s)
        if p.node in f.hosts:
            mine = [v for v in f.vms if v.host == p.node]
            if scheme != "none":
                plan.vms = [VmClass(v.vm, v.addr, FIRST_VM + i,
                                    v.guarantee_bps if scheme == "static" else p.rate_bps,
                                    v.tenant, v.guarantee_bps) for i, v in enumerate(mine)]
            plan.tags = [(v.addr, tags[v.vm]) for v in mine if v.vm in tags]
        elif classifies(layout):
            # the largest packet: TCP's segmentation offload sends GSO_SEGMENTS at once
            plan.queues = switch_queues(layout["network"], layout["dscp_to_queue"],
                                        p.rate_bps, GSO_SEGMENTS * (packet + 14),
                                        limits[p.node])
        out[(p.node, p.ifname)] = plan
    return out
