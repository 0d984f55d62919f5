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
ECN_MODES = ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow",
             "ecn_green_red", "ecn_yellow_red", "ecn_all")


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
    ``<port>|<0-7>`` and references an existing SCHEDULER (and WRED_PROFILE, if it
    names one); DSCP_TO_TC_MAP keys are DSCP 0-63 and values TC 0-7; TC_TO_QUEUE_MAP
    keys and values 0-7; PORT_QOS_MAP references existing maps; a PORT's speed is
    whole Mb/s; WRED_PROFILE's ``ecn`` is one of SONiC's modes, its thresholds whole
    bytes with min <= max and its drop probabilities 0-100; BUFFER_POOL type
    ingress/egress, mode static/dynamic, size whole bytes; a BUFFER_PROFILE names an
    existing pool and has exactly one of ``static_th`` (bytes) and ``dynamic_th``
    (-8 to 8); BUFFER_QUEUE keys are ``<port>|<q>`` or ``<port>|<q>-<q>`` (0-7) and
    name an existing profile.
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
    for key, q in db.get("QUEUE", {}).items():
        if "wred_profile" in q and q["wred_profile"] not in db.get("WRED_PROFILE", {}):
            errs.append(f"QUEUE|{key}: wred_profile {q['wred_profile']!r} does not exist")
    for port, p in db.get("PORT", {}).items():
        if "speed" in p and not _int_in(p["speed"], 1, 10**7):
            errs.append(f"PORT|{port}: speed {p['speed']!r}: expected Mb/s, 1-10000000")
    errs += _wred_errors(db) + _buffer_errors(db)
    for port, pm in db.get("PORT_QOS_MAP", {}).items():
        for field_, table in (("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
                              ("tc_to_queue_map", "TC_TO_QUEUE_MAP")):
            if pm.get(field_) not in db.get(table, {}):
                errs.append(f"PORT_QOS_MAP|{port}: {field_} {pm.get(field_)!r} does not exist")
    return errs




def first_violation(dbs: dict[str, dict[str, Any]]) -> str | None:
    """The first switch's SONiC rule violations in words (``leaf0: 2 SONiC rule
    violations, first: ...``), or None when every config_db is valid."""
    for sw, db in dbs.items():
        errs = validate(db)
        if errs:
            return f"{sw}: {len(errs)} SONiC rule violations, first: {errs[0]}"
    return None

def _wred_errors(db: dict[str, Any]) -> list[str]:
    errs = []
    for name, w in db.get("WRED_PROFILE", {}).items():
        if w.get("ecn", "ecn_none") not in ECN_MODES:
            errs.append(f"WRED_PROFILE|{name}: ecn {w.get('ecn')!r} not in {ECN_MODES}")
        for colour in ("green", "yellow", "red"):
            lo, hi = w.get(f"{colour}_min_threshold"), w.get(f"{colour}_max_threshold")
            if lo is None and hi is None:
                continue
            if not (_int_in(lo, 0, 2**32) and _int_in(hi, 0, 2**32)) or int(lo) > int(hi):
                errs.append(f"WRED_PROFILE|{name}: {colour} thresholds {lo!r}-{hi!r}: "
                            "expected whole bytes, min <= max")
            p = w.get(f"{colour}_drop_probability", "100")
            if not _int_in(p, 0, 100):
                errs.append(f"WRED_PROFILE|{name}: {colour}_drop_probability {p!r} not 0-100")
            if w.get(f"wred_{colour}_enable", "false") not in ("true", "false"):
                errs.append(f"WRED_PROFILE|{name}: wred_{colour}_enable not true/false")
    return errs


def _buffer_errors(db: dict[str, Any]) -> list[str]:
    errs = []
    pools = db.get("BUFFER_POOL", {})
    for name, p in pools.items():
        if p.get("type") not in ("ingress", "egress") or p.get("mode") not in ("static",
                                                                              "dynamic"):
            errs.append(f"BUFFER_POOL|{name}: type {p.get('type')!r} / mode "
                        f"{p.get('mode')!r}: expected ingress|egress and static|dynamic")
        if not _int_in(p.get("size"), 1, 2**40):
            errs.append(f"BUFFER_POOL|{name}: size {p.get('size')!r}: expected whole bytes")
    profiles = db.get("BUFFER_PROFILE", {})
    for name, p in profiles.items():
        if p.get("pool") not in pools:
            errs.append(f"BUFFER_PROFILE|{name}: pool {p.get('pool')!r} does not exist")
        st, dy = p.get("static_th"), p.get("dynamic_th")
        if (st is None) == (dy is None):
            errs.append(f"BUFFER_PROFILE|{name}: expected exactly one of static_th, dynamic_th")
        elif st is not None and not _int_in(st, 0, 2**40):
            errs.append(f"BUFFER_PROFILE|{name}: static_th {st!r}: expected whole bytes")
        elif dy is not None and not (isinstance(dy, str) and dy.lstrip("-").isdigit()
                                     and -8 <= int(dy) <= 8):
            errs.append(f"BUFFER_PROFILE|{name}: dynamic_th {dy!r}: expected -8 to 8")
    for key, q in db.get("BUFFER_QUEUE", {}).items():
        port, _, qs = key.partition("|")
        ends = qs.split("-")
        if not port or len(ends) > 2 or not all(_int_in(e, 0, 7) for e in ends) or (
                len(ends) == 2 and int(ends[0]) > int(ends[1])):
            errs.append(f"BUFFER_QUEUE|{key}: expected <port>|<q> or <port>|<q>-<q>, 0-7")
        if q.get("profile") not in profiles:
            errs.append(f"BUFFER_QUEUE|{key}: profile {q.get('profile')!r} does not exist")
    return errs
