"""Isolation schemes as presets (issue 17): a scheme is a named bundle of the pieces
it needs at each place of the network (the hosts' virtual switches, their CPU, the
switch ports' queues, buffer and ECN marking, a fabric controller), each piece the
scenario keys it sets. ``apply`` turns a user's scenario into the same scenario under
a scheme or a combination such as ``qshare+barberq``: pieces of different schemes
act at different places; two schemes that both need the same place conflict, and
the error names both. A piece marked optional (BarberQ's service queue per tenant)
yields to another scheme's piece at its place (QShare binds tenants to queues
itself).

A scheme replaces the scenario's own enforcement: ``vswitch.policy``,
``vswitch.hosts`` and ``[qshare]`` are removed first. Everything else the scenario
says (fabric, buffers, tenants, traffic) stays, except the keys a scheme sets.

A preset sets what lets its scheme act within the scenario where the paper's own
constant would not (:func:`choices` says what it chose, and why): QShare's control
interval is the paper's 4 s only where the run gives it ``QSHARE_DECISIONS``
decisions, else a tenth of the run or less. The scenario's own ``[qshare]`` table
overrides the QShare preset key by key (``interval`` included) when the
``qshare`` scheme runs."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..errors import ScenarioError, check_type
from .params import Param, get_key, on_tick, read, set_key
from .scenario import Scenario

PLACES: dict[str, str] = {
    "host": "the hosts' virtual switches: what limits each VM's traffic",
    "cpu": "the virtual switches' CPU: what limits each VM's use of the PMD cores",
    "queues": "the switch ports' queues: how many, their scheduler, what goes in each",
    "buffer": "the switch ports' buffer: which packets may occupy it",
    "ecn": "the switch ports' ECN marking",
    "controller": "a fabric controller reconfiguring switches and hosts as traffic runs",
}
"""The places a scheme acts at, in the order `tenantnet schemes` shows them."""

SERVICE_QUEUES = "service queue per tenant"
"""What the optional queues piece of BarberQ, PMSB and per-queue ECN sets: each
tenant's workloads tagged with their own DSCP, mapped to their own DWRR queue
(up to 8, tenants beyond share them in turn)."""


@dataclass(frozen=True)
class Piece:
    """What a scheme sets at one place: scenario keys by dotted path (``sets``),
    or a service queue per tenant (``service_queues``)."""
    place: str
    sets: Mapping[str, Any] = field(default_factory=dict)
    optional: bool = False
    """Yields to another scheme's piece at the same place."""
    service_queues: bool = False
    preset: tuple[str, ...] = ()
    """Keys removed from the scenario so that the core's preset for the scheme's
    host policy sets them (`scenario/build/presets.rs`: Trinity's queues, its and
    ElasticSwitch's marking)."""
    note: str = ""
    """What the preset sets, in words."""

    def describe(self) -> str:
        parts = [f"[{k}]" if v == {} else f"{k} = {_show(v)}" for k, v in self.sets.items()]
        if self.preset:
            parts.append(f"{self.note} (the core's preset: {', '.join(self.preset)})")
        elif self.note:
            parts.append(self.note)
        if self.service_queues:
            parts.append(SERVICE_QUEUES)
        text = ", ".join(parts) or "nothing (the scenario's own)"
        return f"{text} (unless another scheme sets the {self.place})" if self.optional else text


@dataclass(frozen=True)
class Scheme:
    """A named isolation scheme or baseline."""
    name: str
    line: str
    source: str
    pieces: tuple[Piece, ...]
    needs_cpu: bool = False
    """Applies only where the scenario models the vswitch's CPU (``[vswitch.cpu]``)."""
    needs_vms: bool = True
    """Applies only where the scenario's tenants have VMs with guarantees."""
    needs_pairs: bool = False
    """Applies only where some flow runs between two VMs of its tenant (guarantees
    per VM pair)."""
    params: tuple[Param, ...] = ()
    """What a search may tune (``tenantnet advise``), each with its paper's place."""

    @property
    def places(self) -> tuple[str, ...]:
        return tuple(p.place for p in self.pieces)


def _show(v: Any) -> str:
    """`v` as a TOML value."""
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_show(x)}" for k, x in v.items()) + " }" if v else "{}"
    return str(v)


def _host(policy: str, **more: Any) -> Piece:
    return Piece("host", {"vswitch.policy": policy, **more})


QSHARE_DECISIONS = 10
"""The QShare preset's control interval gives its controller at least this many
decisions after time 0 (module doc)."""

QSHARE_INTERVAL_S = 4.0
"""T_c of QShare §7.1.1."""


_MARKING = Piece("ecn", preset=("network.ecn_threshold", "network.ecn_scope",
                                "network.host_ecn"),
                 note="ECN at K = 30 KB per queue, servers that do not mark; a 4 MB "
                      "shared pool where the scenario sets no buffer policy or pool")
"""ECN at K = 30 KB in each queue, servers that do not mark: Trinity's testbed
switches (T:L867-872), on which Trinity §IV also ran ElasticSwitch."""

def _interval(key: str, low: float, high: float, default: float, source: str,
              what: str) -> Param:
    return Param(key, low, high, default, source, what, scale="log", unit="s",
                 on_tick=key.startswith("vswitch.") and key.count(".") == 2)


_K = Param("network.ecn_threshold", 5e3, 300e3, 30e3, "Trinity §IV-B: K = 30 KB",
           "ECN marking threshold K of each queue", scale="log", unit="B")
"""The marking threshold of the schemes that mark at K (the presets' 30 KB)."""

_MBFQ = (
    _interval("vswitch.mbfq.interval", 0.01, 1.0, 0.1, "MBFQ §4: every 100 ms; §5.1 "
              "picks it", "T, the macroscheduler's period"),
    Param("vswitch.mbfq.headroom", 1.0, 1.5, 1.1, "MBFQ §3, Fig. 4 lines 7, 10: "
          "TR = 1.1 × SR", "a target rate's margin over the measured rate"),
    Param("vswitch.mbfq.reclaim_below", 0.5, 0.95, 0.85, "MBFQ §3, Fig. 4 line 8: "
          "SR < 0.85 × AR", "use of its allocation under which a VM is reclaimed"),
    Param("vswitch.mbfq.reclaim_after", 0.0, 1.0, 0.5, "MBFQ §3, §5.4: 500 ms",
          "how long a VM must use less before it is reclaimed", unit="s"),
    Param("vswitch.mbfq.activate_above", 0.5, 0.95, 0.8, "MBFQ §4: 80 %",
          "NIC utilisation under which nothing is throttled"),
)
_TRINITY = (
    _interval("vswitch.trinity.interval", 0.001, 0.05, 0.005, "Trinity §III-C: 5 ms",
              "the rate-control interval"),
    Param("vswitch.trinity.alpha", 0.05, 1.0, 0.25, "Trinity §III-C, Eq. 6: α = 0.25",
          "growth of a red rate per interval without marks", scale="log"),
    _K,
)


def _es(*more: Param) -> tuple[Param, ...]:
    return (_interval("vswitch.elasticswitch.interval", 0.001, 0.05, 0.005,
                      "Trinity §IV-A: 5 ms, as Trinity's", "the rate-allocation "
                      "interval"), *more, _K)


SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("none", "no enforcement: every VM sends as fast as TCP lets it",
           "baseline", (_host("none"),), needs_vms=False),
    Scheme("static", "static reservation: every VM capped at its guarantee",
           "baseline (MBFQ §5, Oktopus)", (_host("static"),),
           params=(Param("vswitch.static.cap", 1.0, 4.0, 1.0, "ours: the baseline caps "
                         "each VM at its guarantee (1)", "every VM's cap as a multiple "
                         "of its guarantee", scale="log"),)),
    Scheme("mbfq", "MBFQ: a macroscheduler resets each VM's token bucket every 100 ms "
           "from its measured rate", "MBFQ paper (To et al.), §4", (_host("mbfq"),),
           params=_MBFQ),
    Scheme("trinity", "Trinity: green/red token buckets per VM pair, two strict-priority "
           "queues, ECN-driven rate control", "Trinity paper, §III",
           (_host("trinity", **{"vswitch.pair_guarantees": "hose"}),
            Piece("queues", preset=("network.queues", "network.scheduler",
                                    "network.dscp_map"),
                  note="2 strict-priority queues: green and feedback (DSCP 1, 2) high, "
                       "red (DSCP 0) low"), _MARKING), needs_pairs=True,
           params=_TRINITY),
    Scheme("elasticswitch", "ElasticSwitch: guarantee partitioning and ECN-driven rate "
           "allocation per VM pair (the ES paper's RA as far as its sources describe it)",
           "Trinity paper, §IV; QShare paper, §3.1",
           (_host("elasticswitch", **{"vswitch.pair_guarantees": "dynamic",
                                      "vswitch.elasticswitch.profile": "paper"}),
            _MARKING), needs_pairs=True,
           params=_es(Param("vswitch.elasticswitch.weighted_increase", 0.01, 0.5, 0.1,
                            "ours: the ES paper's constant is not in our sources",
                            "increase per congestion-free interval, a share of the "
                            "guarantee", scale="log"))),
    Scheme("c-es", "conservative ElasticSwitch as Trinity's public module runs it (C-ES)",
           "Trinity paper, §IV-A", (_host("elasticswitch", **{
               "vswitch.pair_guarantees": "dynamic",
               "vswitch.elasticswitch.profile": "trinity-code"}), _MARKING),
           needs_pairs=True,
           params=_es(Param("vswitch.elasticswitch.increase", 0.01, 0.5, 0.1,
                            "Trinity's public module: 0.1", "share of the gap to the "
                            "NIC closed per congestion-free interval", scale="log"))),
    Scheme("a-es", "aggressive ElasticSwitch (A-ES): R = G + W under Trinity's rate "
           "controller", "Trinity paper, §IV-A", (_host("elasticswitch", **{
               "vswitch.pair_guarantees": "dynamic",
               "vswitch.elasticswitch.profile": "aggressive"}), _MARKING),
           needs_pairs=True,
           params=_es(Param("vswitch.elasticswitch.alpha", 0.05, 1.0, 0.25,
                            "Trinity §III-C, Eq. 6: α = 0.25", "growth of a rate per "
                            "interval without marks", scale="log"))),
    Scheme("c2qos", "C2QoS: token buckets of CPU cycles (C2TB) and hierarchical batch "
           "scheduling (HBS) on the vswitch's PMD cores", "C2QoS paper (Yang et al.), §IV",
           (Piece("cpu", {"vswitch.cpu.limiter": "c2tb", "vswitch.cpu.scheduler": "hbs"}),),
           needs_cpu=True,
           params=(_interval("vswitch.cpu.c2tb.interval", 10e-6, 1e-3, 50e-6,
                             "C2QoS §V: invl = 50 µs", "C2TB's token refill interval"),)),
    Scheme("qshare", "QShare: high-demand tenants bound to the 8 weighted-fair queues of "
           "each port, the rest shared and capped at their guarantee",
           "QShare paper, §5, §7",
           (Piece("queues", {"network.queues": 8, "network.scheduler": "wfq",
                             "network.host_nic": "dscp"}),
            Piece("controller", {"qshare": {}},
                  note=f"its control interval 4s (§7.1.1) in a run of "
                       f"{QSHARE_DECISIONS} x 4s or more, else the longest 1, 2 or 5 "
                       f"x 10^k s giving {QSHARE_DECISIONS} decisions")),
           params=(
               _interval("qshare.interval", 1e-3, 4.0, QSHARE_INTERVAL_S,
                         "QShare §7.1.1: T_c = 4 s", "T_c, the control interval"),
               Param("network.queues", 2, 8, 8, "QShare §5: 8 queues a port",
                     "weighted-fair queues of each port", whole=True),
               Param("qshare.cq_weight", 0.0, 1.0, 0.5,
                     "QShare §4.2: TR cost of c_b and c_q; the weight and its 0.5 are ours",
                     "weight of queue occupation against bandwidth in placement"),
               Param("qshare.max_weight", 2, 100, 15, "QShare §7: the switches' 15; "
                     "SONiC's DWRR takes 100", "the largest queue weight", whole=True,
                     scale="log"))),
    Scheme("barberq", "BarberQ: a shared buffer that evicts the tail of the longest "
           "satisfied queue, each tenant in its own service queue",
           "BarberQ paper (Kim and Lee), §II",
           (Piece("buffer", {"network.buffer_policy": "barberq"}),
            Piece("queues", {}, optional=True, service_queues=True)),
           needs_vms=False),
    Scheme("pmsb", "PMSB: ECN marks a packet when its port and its queue are both over "
           "their thresholds, each tenant in its own service queue",
           "BarberQ paper, Fig. 4's baseline",
           (Piece("ecn", {"network.ecn_scope": "pmsb"}),
            Piece("queues", {}, optional=True, service_queues=True)), needs_vms=False,
           params=(_K,)),
    Scheme("per-queue-ecn", "ECN marking per queue at the port's threshold, each tenant "
           "in its own service queue", "BarberQ paper, Fig. 4's baseline",
           (Piece("ecn", {"network.ecn_scope": "queue"}),
            Piece("queues", {}, optional=True, service_queues=True)), needs_vms=False,
           params=(_K,)),
)}
"""Every scheme, by name."""


def vswitch_table(name: str, **overrides: Any) -> dict[str, Any]:
    """The ``[vswitch]`` table host scheme `name` sets, as its registration gives it,
    with `overrides` on top: a key given None is removed, a table merges key by key
    into the scheme's. The reproductions build their set-ups from it, so a scheme is
    defined once."""
    pieces = [p for p in SCHEMES[name].pieces if p.place == "host"]
    if not pieces:
        raise ValueError(f"scheme {name!r} sets no [vswitch] table")
    out: dict[str, Any] = {}
    for key, v in pieces[0].sets.items():
        path = key.split(".")
        assert path[0] == "vswitch", key
        d = out
        for part in path[1:-1]:
            d = d.setdefault(part, {})
        d[path[-1]] = v
    for key, v in overrides.items():
        if v is None:
            out.pop(key, None)
        elif isinstance(v, Mapping) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **v}
        else:
            out[key] = v
    return out


def parse(spec: str) -> list[Scheme]:
    """The schemes a combination such as ``qshare+barberq`` names, in order; an
    error names an unknown or repeated one, or two that need the same place."""
    names = [n.strip() for n in spec.split("+")]
    out: list[Scheme] = []
    for n in names:
        if n not in SCHEMES:
            raise ScenarioError(f"scheme {n!r} in {spec!r}: expected one of "
                                f"{', '.join(SCHEMES)}, joined with '+'")
        if any(s.name == n for s in out):
            raise ScenarioError(f"scheme {n!r} appears twice in {spec!r}")
        out.append(SCHEMES[n])
    holder: dict[str, str] = {}
    for s in out:
        for p in s.pieces:
            if p.optional:
                continue
            if p.place in holder:
                raise ScenarioError(
                    f"{spec!r}: {holder[p.place]} and {s.name} both set the {p.place} "
                    f"({PLACES[p.place]}); a combination joins schemes that act at "
                    f"different places")
            holder[p.place] = s.name
    return out


def why_not(scheme: Scheme, data: Mapping[str, Any], base_dir: str = ".") -> str | None:
    """Why `scheme` does not apply to the scenario `data` (whose files are relative to
    `base_dir`), or None if it does."""
    if scheme.needs_cpu and "cpu" not in data.get("vswitch", {}):
        return "the scenario models no vswitch CPU ([vswitch.cpu])"
    if scheme.needs_vms and not any(t.get("guarantee") or t.get("vms") or t.get("size")
                                    for t in data.get("tenants", [])):
        return "the scenario's tenants have no VMs with guarantees ([[tenants]])"
    if any(p.service_queues for p in scheme.pieces) and len(_tenants(data)) < 2:
        return "a service queue per tenant needs workloads of two tenants or more"
    if scheme.needs_pairs and not _vm_pairs(data, base_dir):
        return ("no flow runs between two VMs of its tenant: it limits VM pairs, so "
                "traffic to hosts without the tenant's VMs passes unlimited")
    keys = {k for p in scheme.pieces for k in [*p.sets, *p.preset]}
    own_k = "network.ecn_threshold" in keys
    if "network.ecn_scope" in keys and not own_k and "ecn_threshold" not in data.get(
            "network", {}):
        return "it marks at the scenario's ECN threshold K: expected network.ecn_threshold"
    return None


def _vm_pairs(data: Mapping[str, Any], base_dir: str = ".") -> bool:
    """Whether some flow of the scenario has a VM of its tenant at both ends (built,
    not run)."""
    r = Scenario.from_dict(dict(data), "<scheme check>", base_dir).simulation().results()
    hosts: dict[str, set[str]] = {}
    for t, h in zip(r.vms["tenant"], r.vms["host"], strict=True):
        hosts.setdefault(str(t), set()).add(str(h))
    f = r.flows
    return any({str(a), str(b)} <= hosts.get(str(t), set())
               for t, a, b in zip(f["tenant"], f["src"], f["dst"], strict=True))


def _tenants(data: Mapping[str, Any]) -> list[str]:
    """The tenants with traffic: declared ones in order, then those only workloads
    name."""
    busy = [str(w.get("tenant", "default")) for w in data.get("workloads", [])]
    names = [str(t["name"]) for t in data.get("tenants", []) if t["name"] in busy]
    return names + [t for t in dict.fromkeys(busy) if t not in names]


def _set(d: dict[str, Any], dotted: str, value: Any) -> None:
    set_key(d, dotted, copy.deepcopy(value))


def _unset(d: dict[str, Any], dotted: str) -> None:
    *path, last = dotted.split(".")
    for k in path:
        d = d.get(k, {})
    d.pop(last, None)


def _service_queues(d: dict[str, Any]) -> None:
    names = _tenants(d)
    queues = min(8, len(names))
    nw = d.setdefault("network", {})
    nw["queues"] = queues
    nw["scheduler"] = "dwrr"
    nw["dscp_map"] = {str(i + 1): i % queues for i in range(len(names))}
    for w in d.get("workloads", []):
        w["dscp"] = names.index(str(w.get("tenant", "default"))) + 1


def qshare_interval(data: Mapping[str, Any]) -> tuple[str, str]:
    """The control interval the QShare preset runs the scenario `data` with, and why
    (module doc)."""
    own = (data.get("qshare") or {}).get("interval")
    if own is not None:
        return str(own), f"control interval {own}, the scenario's own [qshare] interval"
    try:
        run = _core.parse_duration(str(data.get("simulation", {}).get("duration")))
    except ValueError:
        run = 0.0
    if run >= QSHARE_DECISIONS * QSHARE_INTERVAL_S or run <= 0:
        return "4s", "control interval 4s, QShare §7.1.1's"
    step = run / QSHARE_DECISIONS
    nice = max(m * 10.0 ** e for e in range(-6, 1) for m in (1, 2, 5) if m * 10.0 ** e <= step)
    text = _core.format_duration(nice)
    return text, (f"control interval {text} ({int(run / nice + 1e-9)} decisions in the "
                  f"{_core.format_duration(run)} run; QShare §7.1.1's 4s would give "
                  f"{int(run / QSHARE_INTERVAL_S)}): override with [qshare] interval")


def choices(data: Mapping[str, Any], spec: str) -> list[str]:
    """What the presets of `spec` chose for the scenario `data` beyond their fixed
    keys, in words (module doc)."""
    names = [s.name for s in parse(spec)]
    return [f"qshare: {qshare_interval(data)[1]}"] if "qshare" in names else []


def apply(data: Mapping[str, Any], spec: str, base_dir: str = ".") -> dict[str, Any]:
    """The scenario `data` under the scheme or combination `spec`: its own
    enforcement removed, then every piece's keys set. An error says why a scheme
    does not apply."""
    check_type("data", data, isinstance(data, Mapping), "a scenario as a dictionary")
    check_type("spec", spec, isinstance(spec, str), "a scheme's name, or names joined "
               "with '+'")
    schemes = parse(spec)
    for s in schemes:
        reason = why_not(s, data, base_dir)
        if reason:
            raise ScenarioError(f"scheme {s.name} does not apply: {reason}")
    d = copy.deepcopy(dict(data))
    own_qshare = d.pop("qshare", None) or {}
    vs = d.get("vswitch", {})
    vs.pop("policy", None)
    vs.pop("hosts", None)
    taken = {p.place for s in schemes for p in s.pieces if not p.optional}
    for s in schemes:
        for p in s.pieces:
            if p.optional and p.place in taken:
                continue
            for k in p.preset:
                _unset(d, k)
            for k, v in p.sets.items():
                _set(d, k, v)
            if p.service_queues:
                _service_queues(d)
    if "qshare" in d:
        d["qshare"] = {**own_qshare, "interval": qshare_interval(data)[0]}
    d["name"] = f"{d.get('name', 'scenario')} [{spec}]"
    return d


def table() -> list[dict[str, str]]:
    """A row per scheme: its name, places, line and what it sets at each place."""
    return [{"scheme": s.name, "places": ", ".join(s.places), "what": s.line,
             "source": s.source,
             "sets": "; ".join(f"{p.place}: {p.describe()}" for p in s.pieces)}
            for s in SCHEMES.values()]


COMMON: tuple[tuple[str, Param], ...] = (
    ("dctcp", Param("transport.dctcp_g", 1 / 1024, 1.0, 1 / 16, "DCTCP §3.1: g = 1/16; "
                    "Linux keeps g as a shift (dctcp_shift_g, 0 to 10): a power of two "
                    "from 1/1024 to 1", "DCTCP's gain for its estimate of the marked "
                    "share", scale="log", powers_of_two=True)),
    ("dynamic_threshold", Param("network.dt_alpha", 0.125, 8.0, 1.0, "Choudhury and "
                                "Hahne's dynamic threshold: α = 1", "the buffer's α: a "
                                "queue may take α × the free buffer", scale="log")),
)
"""Parameters of any scheme, tunable where the scenario uses what they set: DCTCP's
gain where a transport is DCTCP, the buffer's α under dynamic thresholds."""


def _uses(data: Mapping[str, Any], what: str) -> bool:
    if what == "dynamic_threshold":
        return bool(get_key(data, "network.buffer_policy") == what)
    transports = [data.get("transport") or {}] + [w.get("transport") or {}
                                                  for w in data.get("workloads", [])]
    return any(t.get("protocol") == what for t in transports if isinstance(t, dict))


def tunables(spec: str, data: Mapping[str, Any], base_dir: str = ".") -> tuple[Param, ...]:
    """What a search may tune of scheme or combination `spec` on the scenario `data`:
    its schemes' parameters, then those of :data:`COMMON` the scenario uses, each
    with the value it runs with there (the scenario's own, else the preset's or the
    paper's) as its default."""
    applied = apply(data, spec, base_dir)
    out: dict[str, Param] = {}
    declared = [p for s in parse(spec) for p in s.params]
    declared += [p for what, p in COMMON if _uses(applied, what)]
    for p in declared:
        if p.key in out:
            continue
        own = get_key(applied, p.key)
        p = p if own is None else read(p, own) or p
        out[p.key] = on_tick(p, get_key(applied, "vswitch.interval"))
    return tuple(out.values())
