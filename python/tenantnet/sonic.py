"""A QShare binding rendered as SONiC config_db QoS tables, one JSON per switch,
and a validator that encodes the SONiC YANG rules these tables must follow.

Per switch: ``PORT`` (a description naming the neighbour), ``DSCP_TO_TC_MAP`` (one
map per port, ``qshare_<port>``: each D-tenant's DSCP to the traffic class of its
queue on that port, everything else to TC 0), ``TC_TO_QUEUE_MAP`` (``qshare``: TC i
to queue i), ``PORT_QOS_MAP`` (each port's two maps), ``SCHEDULER`` (one DWRR
scheduler per distinct weight, ``qshare_dwrr_<w>``) and ``QUEUE`` (``<port>|<q>`` to
its scheduler). Which port gets which map and weights is derived in the core
(``tenantnet_core::qshare::switch_ports``: ports named ``Ethernet<4·i>`` in the
order of the switch's links; both ends of a switch-to-switch link get the same
queues; a server's end is the hypervisor's software WFQ, §5.4); this module only
renders and validates.
"""

from __future__ import annotations

from typing import Any

SCHEDULER_TYPES = ("DWRR", "WRR", "STRICT")


SwitchPort = tuple[str, str, str, list[int], list[tuple[int, int]]]
"""(switch, port, peer, DSCP -> queue for DSCP 0-63, [(queue, weight)]), as
``Controller.switch_ports`` derives it from a binding in the core."""


def config_db(ports: list[SwitchPort]) -> dict[str, dict[str, Any]]:
    """Per-switch config_db QoS tables for a binding's switch ports
    (``Controller.switch_ports`` of a binding made with ``max_weight`` at most 100,
    SONiC's DWRR range)."""
    out: dict[str, dict[str, Any]] = {}
    for switch, port, peer, dscp_to_queue, weights in ports:
        db = out.setdefault(switch, {"PORT": {}, "DSCP_TO_TC_MAP": {},
                                     "TC_TO_QUEUE_MAP": {"qshare": {str(i): str(i)
                                                                    for i in range(8)}},
                                     "PORT_QOS_MAP": {}, "SCHEDULER": {}, "QUEUE": {}})
        db["PORT"][port] = {"description": f"to {peer}"}
        for q, w in weights:
            sched = f"qshare_dwrr_{w}"
            db["SCHEDULER"][sched] = {"type": "DWRR", "weight": str(w)}
            db["QUEUE"][f"{port}|{q}"] = {"scheduler": sched}
        db["DSCP_TO_TC_MAP"][f"qshare_{port}"] = {str(d): str(q)
                                                  for d, q in enumerate(dscp_to_queue)}
        db["PORT_QOS_MAP"][port] = {"dscp_to_tc_map": f"qshare_{port}",
                                    "tc_to_queue_map": "qshare"}
    return out


def _int_in(s: Any, lo: int, hi: int) -> bool:
    return isinstance(s, str) and s.isdigit() and lo <= int(s) <= hi


def validate(db: dict[str, Any]) -> list[str]:
    """Every violation of the SONiC YANG rules in one switch's config_db (empty: valid).

    Rules: SCHEDULER type in DWRR/WRR/STRICT and weight 1-100; every QUEUE key is
    ``<port>|<0-7>`` and references an existing SCHEDULER; DSCP_TO_TC_MAP keys are
    DSCP 0-63 and values TC 0-7; TC_TO_QUEUE_MAP keys and values 0-7; PORT_QOS_MAP
    references existing maps.
    """
    errs: list[str] = []
    sched = db.get("SCHEDULER", {})
    for name, s in sched.items():
        if s.get("type") not in SCHEDULER_TYPES:
            errs.append(f"SCHEDULER|{name}: type {s.get('type')!r} not in {SCHEDULER_TYPES}")
        if s.get("type") in ("DWRR", "WRR") and not _int_in(s.get("weight"), 1, 100):
            errs.append(f"SCHEDULER|{name}: weight {s.get('weight')!r} not in 1-100")
    for key, q in db.get("QUEUE", {}).items():
        port, _, idx = key.partition("|")
        if not port or not _int_in(idx, 0, 7):
            errs.append(f"QUEUE|{key}: expected <port>|<queue 0-7>")
        if q.get("scheduler") not in sched:
            errs.append(f"QUEUE|{key}: scheduler {q.get('scheduler')!r} does not exist")
    for name, m in db.get("DSCP_TO_TC_MAP", {}).items():
        for k, v in m.items():
            if not _int_in(k, 0, 63) or not _int_in(v, 0, 7):
                errs.append(f"DSCP_TO_TC_MAP|{name}: {k} -> {v}: expected DSCP 0-63 -> TC 0-7")
    for name, m in db.get("TC_TO_QUEUE_MAP", {}).items():
        for k, v in m.items():
            if not _int_in(k, 0, 7) or not _int_in(v, 0, 7):
                errs.append(f"TC_TO_QUEUE_MAP|{name}: {k} -> {v}: expected TC 0-7 -> queue 0-7")
    for port, pm in db.get("PORT_QOS_MAP", {}).items():
        for field_, table in (("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
                              ("tc_to_queue_map", "TC_TO_QUEUE_MAP")):
            if pm.get(field_) not in db.get(table, {}):
                errs.append(f"PORT_QOS_MAP|{port}: {field_} {pm.get(field_)!r} does not exist")
    return errs
