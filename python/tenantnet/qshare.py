"""QShare's controller from Python: placement (Algorithm 1), queue binding
(Algorithm 2), the fluid model, and placement state that can be saved and replayed.

The work happens in the Rust core (``tenantnet._core.QShare``); placement is
deterministic, so a saved state (the topology and the ordered tenant requests)
rebuilds exactly the same datacenter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core

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
    log: list[dict[str, Any]] = field(default_factory=list)
    core: Any = None
    source: str = field(default="<qshare>", compare=False)
    """Where the topology came from, named in errors."""

    def __post_init__(self) -> None:
        if self.core is None:
            try:
                self.core = _core.QShare(json.dumps(self.topology), self.slots, self.queues,
                                         self.strategy, self.cq_weight, self.k_paths,
                                         self.source)
            except (ValueError, OverflowError) as e:
                raise ValueError(str(e)) from None
        replay, self.log = self.log, []
        for op in replay:
            if op["op"] == "place":
                self.place(op["guarantees_bps"], op.get("ha"))
            else:
                self.depart(op["id"])

    def place(self, guarantees_bps: list[int], ha: float | None = None) -> int | None:
        """Embeds a tenant (one guarantee per VM, bit/s); its id, or None if rejected."""
        tid: int | None = self.core.place(list(guarantees_bps), ha)
        self.log.append({"op": "place", "guarantees_bps": list(guarantees_bps), "ha": ha,
                         "id": tid})
        return tid

    def depart(self, tid: int) -> bool:
        """Removes tenant ``tid``."""
        self.log.append({"op": "depart", "id": tid})
        return bool(self.core.depart(tid))

    def fill(self, seed: int, mean_vms: float = 49.0, ha: float | None = None,
             give_up: int = 100) -> dict[str, Any]:
        """Random §7.3 tenants until ``give_up`` consecutive rejections."""
        before = set(self.tenants())
        out: dict[str, Any] = self.core.fill(seed, mean_vms, None, ha, give_up)
        # rejected requests change nothing, so replaying the admitted ones suffices
        for tid, t in sorted(self.tenants().items()):
            if tid not in before:
                self.log.append({"op": "place", "guarantees_bps": t["guarantee_bps"], "ha": ha,
                                 "id": tid})
        return out

    def tenants(self) -> dict[int, dict[str, Any]]:
        """Embedded tenants by id: vms, guarantee_bps, root, layer, rank (the path rank of
        its TR in a random topology), servers, paths (each server's link ids up to the
        root), links, cb, cq."""
        return dict(self.core.tenants())

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
        d = json.loads(path.read_text(encoding="utf-8"))
        return cls(d["topology"], d["slots"], d["queues"], d["strategy"], d["cq_weight"],
                   d.get("k_paths", 3), d["log"], source=str(path))
