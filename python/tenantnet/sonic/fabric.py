"""A scheme's switch configuration as SONiC config_db tables (``tenantnet deploy
sonic``): the scenario's ports after the scheme's presets (queues, scheduler, DSCP
map, ECN, buffers) rendered per switch, for the validator in :mod:`tenantnet.sonic.configdb`.

How tenantnet's switch model maps onto SONiC's:

* Queues and classification: ``DSCP_TO_TC_MAP`` from the scenario's DSCP map (the
  core's, DSCP 0-63), ``TC_TO_QUEUE_MAP`` TC i to queue i. SONiC has 8 queues a port.
* Scheduling: ``strict`` serves tenantnet's queue 0 first; SONiC's strict priority
  serves the highest queue first, so under ``strict`` (and the strict group of
  ``sp_dwrr``) tenantnet's queue q is SONiC's queue n - 1 - q. ``dwrr`` and ``wrr``
  keep their weights (1-100 in SONiC); ``wfq`` is rendered as DWRR with its weights
  (SONiC has no WFQ scheduler).
* ECN: a WRED profile per port queue marking every colour (``ecn_all``) from K to K
  plus one packet at probability 100 %, the nearest SONiC comes to DCTCP's step at K;
  SONiC's WRED works per queue, so ``ecn_scope = "port"`` is exact only with one
  queue a port (a note says so otherwise); ``pmsb`` (port and queue together) has no
  SONiC form.
* Buffers: ``tail_drop`` and ``static_partition`` as static thresholds on each queue
  (the port's buffer, or its share) in a static egress pool; ``dynamic_threshold``
  as a dynamic pool of the switch's pool size with ``dynamic_th`` = log2(dt_alpha);
  ``barberq`` (evicting another queue's packets) has no SONiC form.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..sim import schemes
from ..sim.layout import size_bytes, switch_layout
from ..sim.scenario import Scenario

CANNOT = {
    "barberq": "SONiC cannot express BarberQ: a switch buffer that evicts the tail of "
               "another queue has no config_db table (buffers only admit or drop arrivals)",
    "pmsb": "SONiC cannot express PMSB: its ECN marks when the port and the queue are "
            "both over their thresholds, and SONiC's WRED/ECN profiles act per queue only",
    "qshare": "QShare's switch configuration follows its controller's binding: "
              "`tenantnet qshare place`, `bind` and `emit-sonic` write it",
}
"""The schemes whose switch pieces SONiC cannot express, and why, in one line."""

POOL = "egress_lossy_pool"
MAP = "tenantnet"
WRED = "tenantnet_ecn"


def _bytes(value: Any, packet: int, key: str) -> int:
    return size_bytes(value, packet, f"network.{key}")


def _strict(net: dict[str, Any]) -> int:
    """How many of a port's queues are served by strict priority (module doc)."""
    sched = net["scheduler"]
    return int(net["queues"]) if sched == "strict" else (
        int(net["strict_queues"]) if sched == "sp_dwrr" else 0)


def sonic_queue(q: int, net: dict[str, Any]) -> int:
    """SONiC's queue for tenantnet's queue `q` (module doc: strict priority order)."""
    n, strict = int(net["queues"]), _strict(net)
    return n - 1 - q if q < strict else q - strict


def _schedulers(net: dict[str, Any]) -> tuple[dict[str, Any], dict[int, str], list[str]]:
    """SCHEDULER entries, each tenantnet queue's scheduler, and notes."""
    n, sched = int(net["queues"]), net["scheduler"]
    weights = net.get("weights") or [1] * n
    notes = []
    if max(weights) > 100:
        raise ValueError(f"network.weights = {weights}: SONiC's DWRR weights are 1-100")
    kind = {"wrr": "WRR", "wfq": "DWRR"}.get(sched, "DWRR")
    if sched == "wfq":
        notes.append("wfq rendered as DWRR with the same weights (SONiC has no WFQ)")
    table: dict[str, Any] = {}
    of: dict[int, str] = {}
    strict = _strict(net)
    for q in range(n):
        if q < strict:
            name = f"{MAP}_strict"
            table[name] = {"type": "STRICT"}
        else:
            name = f"{MAP}_{kind.lower()}_{weights[q]}"
            table[name] = {"type": kind, "weight": str(weights[q])}
        of[q] = name
    return table, of, notes


def _buffers(net: dict[str, Any], packet: int, ports: int, n: int) -> tuple[dict[str, Any],
                                                                              list[str]]:
    """BUFFER_POOL and BUFFER_PROFILE entries for one switch of `ports` ports."""
    policy, buffer = net["buffer_policy"], _bytes(net["buffer"], packet, "buffer")
    notes = []
    if policy == "dynamic_threshold":
        pool = _bytes(net["pool"], packet, "pool") if net.get("pool") else buffer * ports
        alpha = float(net["dt_alpha"])
        th = round(math.log2(alpha))
        if not math.isclose(2.0 ** th, alpha):
            notes.append(f"dt_alpha {alpha:g} rendered as dynamic_th {th} ({2.0 ** th:g}): "
                         "SONiC's alpha is a power of 2")
        return {"BUFFER_POOL": {POOL: {"type": "egress", "mode": "dynamic", "size": str(pool)}},
                "BUFFER_PROFILE": {f"{MAP}_queue": {"pool": POOL, "size": "0",
                                                    "dynamic_th": str(th)}}}, notes
    share = buffer // n if policy == "static_partition" else buffer
    if policy == "tail_drop" and n > 1:
        notes.append(f"tail_drop limits a port's {buffer} B in all; SONiC's static threshold "
                     f"limits each queue, so each of the {n} queues gets {buffer} B")
    return {"BUFFER_POOL": {POOL: {"type": "egress", "mode": "static",
                                   "size": str(buffer * ports)}},
            "BUFFER_PROFILE": {f"{MAP}_queue": {"pool": POOL, "size": "0",
                                                "static_th": str(share)}}}, notes


def _wred(net: dict[str, Any], packet: int) -> tuple[dict[str, Any] | None, list[str]]:
    """The ECN profile (None without marking) and notes."""
    if not net.get("ecn_threshold"):
        return None, []
    k = _bytes(net["ecn_threshold"], packet, "ecn_threshold")
    notes = []
    if net["ecn_scope"] == "port" and int(net["queues"]) > 1:
        notes.append("ecn_scope port with several queues rendered per queue: SONiC marks on "
                     "a queue's occupancy")
    if net["ecn_mark"] == "dequeue":
        notes.append("ecn_mark dequeue rendered as SONiC's WRED, which marks on arrival")
    profile = {"wred_green_enable": "true", "wred_yellow_enable": "true",
               "wred_red_enable": "true", "ecn": "ecn_all"}
    for colour in ("green", "yellow", "red"):
        profile.update({f"{colour}_min_threshold": str(k),
                        f"{colour}_max_threshold": str(k + packet),
                        f"{colour}_drop_probability": "100"})
    return {WRED: profile}, notes


def scheme_config_db(layout: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Each switch's config_db tables for a scenario's `layout` (``_core.switch_layout``),
    and notes on what SONiC renders differently. ValueError names what it cannot."""
    net, packet = layout["network"], int(layout["packet_bytes"])
    n = int(net["queues"])
    if n > 8:
        raise ValueError(f"network.queues = {n}: SONiC has 8 queues a port")
    if net["buffer_policy"] == "barberq":
        raise ValueError(CANNOT["barberq"])
    if net["ecn_scope"] == "pmsb":
        raise ValueError(CANNOT["pmsb"])
    schedulers, sched_of, notes = _schedulers(net)
    wred, more = _wred(net, packet)
    notes += more
    dscp = {str(d): str(sonic_queue(q, net)) for d, q in enumerate(layout["dscp_to_queue"])}
    out: dict[str, dict[str, Any]] = {}
    for sw in layout["switches"]:
        buffers, more = _buffers(net, packet, len(sw["ports"]), n)
        notes += [m for m in more if m not in notes]
        db: dict[str, Any] = {
            "PORT": {}, "DSCP_TO_TC_MAP": {MAP: dscp},
            "TC_TO_QUEUE_MAP": {MAP: {str(i): str(i) for i in range(n)}},
            "PORT_QOS_MAP": {}, "SCHEDULER": schedulers, "QUEUE": {}, **buffers,
            "BUFFER_QUEUE": {}}
        if wred:
            db["WRED_PROFILE"] = wred
        for p in sw["ports"]:
            port = p["port"]
            db["PORT"][port] = {"description": f"to {p['peer']}",
                                "speed": str(int(p["rate_bps"]) // 1_000_000)}
            db["PORT_QOS_MAP"][port] = {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP}
            for q in range(n):
                entry = {"scheduler": sched_of[q]}
                if wred:
                    entry["wred_profile"] = WRED
                db["QUEUE"][f"{port}|{sonic_queue(q, net)}"] = entry
            db["BUFFER_QUEUE"][f"{port}|0-{n - 1}" if n > 1 else f"{port}|0"] = {
                "profile": f"{MAP}_queue"}
        out[sw["name"]] = db
    return out, notes


def sonic_configs(scenario: Scenario, scheme: str | None
                  ) -> tuple[dict[str, dict[str, object]], list[str]]:
    """Each switch's config_db for `scenario` under `scheme` (None: the scenario as it
    is, as ``tenantnet advise`` writes a tuned one), and notes on what SONiC renders
    differently; raises :class:`tenantnet.ScenarioError` (a scheme that does not
    apply, or that SONiC cannot express) or ValueError."""
    data = scenario.data()
    names = [s.name for s in schemes.parse(scheme)] if scheme else (
        ["qshare"] if "qshare" in data else [])
    for name in names:
        if name in CANNOT:
            raise ValueError(CANNOT[name])
    if scheme:
        data = schemes.apply(data, scheme, str(scenario.base_dir))
    return scheme_config_db(switch_layout(data, scenario))


def write_config_dbs(dbs: dict[str, dict[str, object]], d: Path,
                     notes: list[str] | tuple[str, ...] = ()) -> None:
    """Writes ``<switch>.json`` per config_db into the folder `d`, and ``NOTES.md``
    if there are `notes`."""
    for sw, db in sorted(dbs.items()):
        (d / f"{sw}.json").write_text(json.dumps(db, indent=1, sort_keys=True) + "\n",
                                      encoding="utf-8")
    if notes:
        (d / "NOTES.md").write_text("".join(f"{n}\n" for n in notes), encoding="utf-8")
