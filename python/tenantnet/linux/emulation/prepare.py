"""The scenario an emulation runs, and its twin the simulator runs: the scheme applied,
every rate scaled by ``--scale`` (durations, buffers and sizes kept), and the transport
this kernel has in place of the scenario's.

* **Scale.** Link rates (every topology key ``rate`` or ``*_rate``), guarantees and
  UDP rates are multiplied by the scale. The default puts the fastest host NIC at
  ``NIC_TARGET_BPS`` (1 Gb/s; never scaled up), where this machine's CPUs forward every
  port's traffic with room to spare.
* **Transport.** The scenario's congestion control runs in the kernel where the kernel
  has it, with SACK and RACK-TLP as Linux does: ``cubic`` (and ``tcp`` under the
  ``linux`` transport profile, whose TCP is CUBIC) as ``tcp_cubic``, ``newreno`` (and
  ``tcp`` under the ``htsim`` profile) as ``tcp_reno``. The twin simulation runs the
  same congestion control with tenantnet's ``linux`` transport profile (RACK-TLP,
  delayed ACKs, each sender starting with the RTT sample of a handshake, as the
  kernel's connections open with one), the scenario's minimum RTO kept on both sides
  (the emulation sets it on every route with ``rto_min``). DCTCP becomes Reno on both
  sides: this kernel has neither DCTCP nor RED to mark ECN. The top-level
  ``[transport]`` decides for every flow (a workload's own protocol is not emulated
  apart).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...errors import ScenarioError
from ...measure.metrics import gbps
from ...sim import schemes
from .kinds import POLICIES as POLICIES

NIC_TARGET_BPS = 1e9
WORKLOADS = ("long_lived", "fixed", "permutation", "incast", "poisson")
"""The workload kinds an emulation drives (its TCP flows; UDP and request-response
workloads are not emulated)."""
NOT_EMULATED = {
    "trinity": "its green/red colouring and rate control per VM pair are per-packet host "
               "logic, and its switches' strict-priority queues need the prio qdisc, which "
               "this kernel lacks",
    "elasticswitch": "its rate allocation per VM pair needs per-packet host logic "
                     "(congestion feedback per pair) that tc's classes do not have",
    "c2qos": "it schedules the vswitch's CPU cycles, which the kernel's datapath does not "
             "spend the same way",
    "qshare": "its controller rebinds tenants to switch queues every interval, and its "
              "switches' weighted-fair queues by DSCP are not emulated yet",
    "barberq": "its switch buffer evicts the tail of another queue, which no Linux qdisc "
               "does",
    "pmsb": "its ECN marking needs RED (or a marking qdisc), which this kernel lacks",
    "per-queue-ecn": "its ECN marking needs RED (or a marking qdisc), which this kernel "
                     "lacks",
}
"""Why each scheme an emulation does not enforce is left out (ElasticSwitch's variants
``c-es`` and ``a-es`` as ElasticSwitch)."""


def not_emulated(scheme: str) -> str:
    """Why `scheme` (a name or combination) is not emulated, in words."""
    names = [n.strip() for n in scheme.split("+")]
    reasons = [NOT_EMULATED.get("elasticswitch" if n in ("c-es", "a-es") else n, "")
               for n in names if n not in POLICIES]
    why = "; ".join(r for r in reasons if r) or "it is not one of them"
    return f"an emulation enforces {', '.join(POLICIES)}: {why}"


KERNEL_CC = {"newreno": "reno", "cubic": "cubic"}
"""The kernel's congestion control for each protocol the twin simulation runs."""


def _scale_rate(v: Any, scale: float, key: str) -> str:
    try:
        bps = gbps(v) * 1e9 * scale
    except ValueError:
        raise ScenarioError(f"{key} = {v!r}: expected a rate such as \"10Gbps\"") from None
    return f"{max(1, round(bps))}bps"


def _scale_topology(t: Any, scale: float, path: str) -> Any:
    if isinstance(t, dict):
        return {k: _scale_rate(v, scale, f"{path}.{k}") if (k == "rate" or
                k.endswith("_rate")) and isinstance(v, str | int | float) and
                not isinstance(v, bool) else _scale_topology(v, scale, f"{path}.{k}")
                for k, v in t.items()}
    if isinstance(t, list):
        return [_scale_topology(x, scale, f"{path}[{i}]") for i, x in enumerate(t)]
    return t


def scaled(data: Mapping[str, Any], scale: float) -> dict[str, Any]:
    """`data` with every rate multiplied by `scale` (module doc)."""
    d = copy.deepcopy(dict(data))
    d["topology"] = _scale_topology(d.get("topology", {}), scale, "topology")
    for i, t in enumerate(d.get("tenants", [])):
        for k in ("guarantee", "capacity"):
            if k in t:
                t[k] = _scale_rate(t[k], scale, f"tenants[{i}].{k}")
        for j, vm in enumerate(t.get("vms", []) if isinstance(t.get("vms"), list) else []):
            if isinstance(vm, dict) and "guarantee" in vm:
                vm["guarantee"] = _scale_rate(vm["guarantee"], scale,
                                              f"tenants[{i}].vms[{j}].guarantee")
    for i, w in enumerate(d.get("workloads", [])):
        if "rate" in w:
            w["rate"] = _scale_rate(w["rate"], scale, f"workloads[{i}].rate")
    return d


def default_scale(nic_gbps: float) -> float:
    """The scale that puts the fastest host NIC (`nic_gbps`) at 1 Gb/s, at most 1."""
    return min(1.0, NIC_TARGET_BPS / 1e9 / nic_gbps) if nic_gbps > 0 else 1.0


def kernel_transport(data: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """`data` with the transport the emulation runs (module doc), and that transport in
    words."""
    d = copy.deepcopy(dict(data))
    tr = dict(d.get("transport", {}))
    was = str(tr.get("protocol", "tcp"))
    profile = str(tr.get("profile", "htsim"))
    keep = {k: tr[k] for k in ("min_rto", "mss", "header", "ack_size", "init_cwnd")
            if k in tr}
    cubic = was == "cubic" or (was == "tcp" and profile == "linux")
    twin = "cubic" if cubic else "newreno"
    d["transport"] = {**keep, "protocol": twin, "profile": "linux"}
    said = f"{was} under the {profile} profile" if was == "tcp" else was
    words = f"{kernel_cc(d)} (the scenario's {said}" + (
        ": this kernel has no DCTCP or RED)" if was == "dctcp" else ")")
    return d, words


def kernel_cc(twin: Mapping[str, Any]) -> str:
    """The kernel's congestion control for the twin scenario `twin` (of
    `kernel_transport`): ``reno`` or ``cubic``."""
    return KERNEL_CC[str(twin["transport"]["protocol"])]


def scheme_of(data: Mapping[str, Any], scheme: str | None,
              base_dir: str) -> tuple[dict[str, Any], str]:
    """`data` under `scheme` (default: the scenario's own vswitch policy), checked to be
    one an emulation enforces; the scheme's name."""
    name = scheme or str(data.get("vswitch", {}).get("policy", "none"))
    if name not in POLICIES:
        raise ScenarioError(f"scheme {name!r}: {not_emulated(name)}")
    d = schemes.apply(data, name, base_dir)
    if d.get("qshare") or d.get("vswitch", {}).get("cpu"):
        raise ScenarioError("an emulation runs no QShare controller and no vswitch CPU "
                            "model: remove [qshare] and [vswitch.cpu]")
    for i, w in enumerate(d.get("workloads", [])):
        kind = str(w.get("kind", ""))
        if kind not in WORKLOADS:
            raise ScenarioError(f"workloads[{i}].kind = {kind!r}: an emulation drives the "
                                f"TCP flows of the kinds {', '.join(WORKLOADS)}")
    return d, name
