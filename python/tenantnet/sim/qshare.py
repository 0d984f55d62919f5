"""QShare's controller from Python: placement (Algorithm 1), queue binding
(Algorithm 2), the fluid model, and placement state that can be saved and replayed.

The work happens in the Rust core (``tenantnet._core.QShare``); placement is
deterministic, so a saved state (the topology and the ordered tenant requests)
rebuilds exactly the same datacenter.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import is_whole

FAT_TREE_16 = {"kind": "fat_tree", "k": 16, "link_rate": "10Gbps", "fabric_rate": "40Gbps"}
"""QShare §7.3's fabric: k = 16 fat-tree, 10 Gb/s servers, 40 Gb/s switch links."""


@dataclass
class Controller:
    """A datacenter under QShare's controller, with the requests that built it."""

    topology: dict[str, Any]
    slots: int = 100
    queues: int = 8
    strategy: str = "balanced"
    cq_weight: float = 0.5
    k_paths: int = 3
    replay: list[dict[str, Any]] = field(default_factory=list)
    """Requests to replay when it is built (a saved state's ``log``)."""
    core: Any = None
    source: str = field(default="<qshare>", compare=False)
    """Where the topology came from, named in errors."""

    def __post_init__(self) -> None:
        if self.core is None:
            try:
                self.core = _core.QShare(json.dumps(self.topology), self.slots, self.queues,
                                         self.strategy, self.cq_weight, self.k_paths,
                                         self.source)
            except (ValueError, OverflowError, TypeError) as e:
                raise ValueError(str(e)) from None
        for i, op in enumerate(self.replay):
            if op["op"] == "place":
                self.place(op["guarantees_bps"], op.get("ha"))
            elif op["op"] == "pin":
                self.pin(op["guarantees_bps"], [(s, k) for s, k in op["servers"]])
            elif op["op"] == "depart":
                self.depart(op["id"])
            else:
                raise ValueError(f"log[{i}].op = {op['op']!r}: "
                                 "expected \"place\", \"pin\" or \"depart\"")

    @property
    def log(self) -> list[dict[str, Any]]:
        """What changed the datacenter, in order, as the core recorded it: each
        admitted request (``op = "place"``, its guarantees, ``ha`` and ``id``), each
        pinned tenant (``op = "pin"``, its guarantees, ``servers`` as (name, VMs) and
        ``id``) and each departure (``op = "depart"``, ``id``). Replaying it rebuilds
        the datacenter."""
        out: list[dict[str, Any]] = self.core.log()
        return out

    @property
    def capacity(self) -> int:
        """VM slots of the whole datacenter."""
        return self.slots * len(self.core.servers())

    def place(self, guarantees_bps: list[int], ha: float | None = None) -> int | None:
        """Embeds a tenant (one guarantee per VM, whole bit/s of at least 1); its id, or
        None if rejected."""
        if not all(is_whole(g, 1, 2**63) for g in guarantees_bps):
            raise ValueError("guarantees_bps: expected whole numbers of bit/s, each at least 1")
        if ha is not None and not (isinstance(ha, int | float) and 0 <= ha < 1):
            raise ValueError(f"ha = {ha!r}: expected a number with 0 <= f < 1")
        tid: int | None = self.core.place(list(guarantees_bps), ha)
        return tid

    def pin(self, guarantees_bps: list[int], servers: list[tuple[str, int]]) -> int:
        """Embeds a tenant whose VMs' servers are given: ``servers`` lists (server
        name, VMs there) in VM order, e.g. Fig. 7(a)'s tenants with one VM on every
        server. It gets the lowest TR option holding all of them and its hose is
        reserved there as Algorithm 1 would; the high-availability limit does not
        apply. Its id; a ValueError names what does not fit (nothing changes)."""
        if not all(is_whole(g, 1, 2**63) for g in guarantees_bps):
            raise ValueError("guarantees_bps: expected whole numbers of bit/s, each at least 1")
        if not all(isinstance(s, str) and is_whole(k, 1, 2**32 - 1) for s, k in servers):
            raise ValueError("servers: expected (server name, VMs >= 1) pairs")
        try:
            tid: int = self.core.pin(list(guarantees_bps), list(servers))
        except (ValueError, OverflowError, TypeError) as e:
            raise ValueError(str(e)) from None
        return tid

    def place_homogeneous(self, vms: int, guarantee_bps: int,
                          ha: float | None = None) -> int | None:
        """Embeds a tenant of ``vms`` VMs guaranteed ``guarantee_bps`` each. A tenant
        with more VMs than the datacenter has slots is rejected at once (nothing is
        allocated for it, nothing logged: a rejection changes nothing)."""
        if vms > self.capacity:
            return None
        return self.place([guarantee_bps] * vms, ha)

    def depart(self, tid: int) -> bool:
        """Removes tenant ``tid``."""
        return bool(self.core.depart(tid))

    def fill(self, seed: int, mean_vms: float = 49.0, ha: float | None = None,
             give_up: int = 100) -> dict[str, Any]:
        """Random §7.3 tenants until ``give_up`` consecutive rejections. A drawn tenant
        with more VMs than the free slots is rejected without being built."""
        if not (isinstance(mean_vms, int | float) and math.isfinite(mean_vms) and mean_vms > 0):
            raise ValueError(f"mean_vms = {mean_vms!r}: expected a positive number")
        if not (isinstance(give_up, int) and give_up >= 1):
            raise ValueError(f"give_up = {give_up!r}: expected a whole number >= 1")
        if ha is not None and not (isinstance(ha, int | float) and 0 <= ha < 1):
            raise ValueError(f"ha = {ha!r}: expected a number with 0 <= f < 1")
        out: dict[str, Any] = self.core.fill(seed, mean_vms, None, ha, give_up)
        return out

    def tenants(self) -> dict[int, dict[str, Any]]:
        """Embedded tenants by id: vms, guarantee_bps, root, layer, rank (the path rank of
        its TR in a random topology), servers, paths (each server's link ids up to the
        root), links, cb, cq."""
        return dict(self.core.tenants())

    def servers(self) -> list[str]:
        """Server names, in the order of the core's server ids."""
        return list(self.core.servers())

    def describe(self) -> str:
        """The topology in words (``k = 16 fat-tree, 1024 servers, …``)."""
        return str(self.core.topology)

    def gain_at(self, r_in: float, seed: int, sharing: str = "per-link",
                server_port_bps: int | None = None
                ) -> tuple[list[float], list[float], list[float]]:
        """The fluid model with a fraction ``r_in`` of tenants inactive (drawn with
        ``seed``): each active tenant's gain over its guarantee, and each link's
        utilisation under QShare and under static reservation. ``sharing`` is
        ``per-link`` or ``max-min``; ``server_port_bps`` widens server ports."""
        g, uq, us = self.core.gain_at(r_in, seed, sharing, server_port_bps)
        return list(g), list(uq), list(us)

    def churn(self, lambda_per_s: float, lifetime_s: float, horizon_s: float, every_s: float,
              seed: int, mean_vms: float = 49.0, ha: float | None = None
              ) -> list[tuple[float, int, float, float, int]]:
        """§7.3.1's arrival-departure process on this datacenter: Poisson arrivals at
        ``lambda_per_s``, constant lifetimes; ``(t, tenants, slot_use, rnd, rejected)``
        every ``every_s`` seconds."""
        return list(self.core.churn(lambda_per_s, lifetime_s, horizon_s, every_s, seed,
                                    mean_vms, ha))

    def links(self) -> list[tuple[str, str, int, int, int]]:
        """Links by id: (upper node, lower node, capacity, reserved, tenants)."""
        return list(self.core.links())

    def scarcity(self, intervals: int = 20, seed: int = 1) -> dict[str, Any]:
        """Table 1's measures of the current placement (RNL, RND, RNI and more)."""
        out: dict[str, Any] = json.loads(self.core.scarcity(intervals, seed))
        return out

    def score(self, tid: int, usage: list[tuple[str, float, float]] | None = None,
              k: float = 1.0) -> float:
        """S_T of Eq. 2 with U_T of Eq. 1 from ``usage`` [(server, inbound, outbound)];
        without usage the tenant counts as fully busy (U = 1)."""
        return float(self.core.score(tid, usage, k))

    def bind(self, scores: dict[int, float], held: list[int] | None = None, seed: int = 1,
             max_weight: int = 15) -> dict[str, Any]:
        """One control interval of Algorithm 2 and the resulting queue configuration."""
        return dict(self.core.bind(scores, held or [], seed, max_weight))

    def switch_ports(self, binding: dict[str, Any]
                     ) -> list[tuple[str, str, str, list[int], list[tuple[int, int]]]]:
        """Each switch port of a binding (:meth:`bind`'s result): (switch, port name,
        peer, DSCP -> queue for DSCP 0-63, [(queue, weight)]). Raises ValueError if
        the binding names a link this datacenter lacks."""
        dscp = {int(t): int(d) for t, d in binding["dscp"].items()}
        ports = [(int(link), [(int(q), [int(t) for t in ts], int(w)) for q, ts, w in queues])
                 for link, queues in binding["ports"]]
        return list(self.core.switch_ports(ports, dscp))

    def state(self) -> dict[str, Any]:
        """What :meth:`load` needs to rebuild this datacenter exactly."""
        return {"topology": self.topology, "slots": self.slots, "queues": self.queues,
                "strategy": self.strategy, "cq_weight": self.cq_weight,
                "k_paths": self.k_paths, "log": self.log}

    def save(self, path: Path) -> None:
        """Writes :meth:`state` as JSON."""
        path.write_text(json.dumps(self.state(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Controller:
        """Rebuilds a saved datacenter by replaying its requests."""
        return cls.from_state(json.loads(path.read_text(encoding="utf-8")), str(path))

    @classmethod
    def from_state(cls, d: Any, source: str = "<state>") -> Controller:
        """Rebuilds a datacenter from what :meth:`state` returned; raises ValueError
        naming the first key of the wrong shape."""
        _check_state(d)
        return cls(d["topology"], d["slots"], d["queues"], d["strategy"], d["cq_weight"],
                   d.get("k_paths", 3), d["log"], source=source)


def _check_state(d: Any) -> None:
    """Raises ValueError at the first key of a saved state that has the wrong shape."""
    if not isinstance(d, dict):
        raise ValueError("expected a JSON object with topology, slots, queues, strategy, "
                         "cq_weight and log")
    checks: list[tuple[str, bool, str]] = [
        ("topology", isinstance(d.get("topology"), dict), "a table with a kind"),
        ("slots", is_whole(d.get("slots"), 1, 2**32 - 1), "a whole number >= 1"),
        ("queues", is_whole(d.get("queues"), 1, 64), "a whole number from 1 to 64"),
        ("strategy", d.get("strategy") in ("balanced", "greedy"), '"balanced" or "greedy"'),
        ("cq_weight", isinstance(d.get("cq_weight"), int | float)
         and not isinstance(d.get("cq_weight"), bool) and 0 <= d["cq_weight"] <= 1,
         "a number from 0 to 1"),
        ("k_paths", is_whole(d.get("k_paths", 3), 1, 16), "a whole number from 1 to 16"),
        ("log", isinstance(d.get("log"), list), "a list of place and depart operations"),
    ]
    for key, ok, what in checks:
        if not ok:
            raise ValueError(f"{key} = {json.dumps(d.get(key))[:80]}: expected {what}")
    for i, op in enumerate(d["log"]):
        good = isinstance(op, dict) and (
            (op.get("op") == "place" and isinstance(op.get("guarantees_bps"), list)
             and len(op["guarantees_bps"]) > 0
             and all(is_whole(g, 1, 2**63) for g in op["guarantees_bps"])
             and (op.get("ha") is None or (isinstance(op["ha"], int | float)
                                           and 0 <= op["ha"] < 1)))
            or (op.get("op") == "depart" and is_whole(op.get("id"), 0, 2**32 - 1)))
        if not good:
            raise ValueError(f"log[{i}] = {json.dumps(op)[:80]}: expected "
                             '{"op": "place", "guarantees_bps": [bit/s, ...], "ha": null or '
                             '0 <= f < 1} or {"op": "depart", "id": a tenant id}')
