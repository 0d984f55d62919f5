"""Pair guarantees from hose guarantees on Trinity's testbed: A1 (300 Mb/s) sends to
A2 and A3, B1 -> B2 over ten connections."""

from __future__ import annotations

from typing import Any

from tenantnet.reproduce.trinity import the_testbed


def scenario(policy: str, source: str = "hose") -> dict[str, Any]:
    def vm(n: str, h: str) -> dict[str, str]:
        return {"name": n, "host": h}
    return {
        "simulation": {"duration": "1s", "seed": 1},
        **the_testbed(3),
        "tenants": [
            {"name": "A", "guarantee": "300Mbps",
             "vms": [vm("A1", "left0"), vm("A2", "right0"), vm("A3", "right1")]},
            {"name": "B", "guarantee": "300Mbps", "vms": [vm("B1", "left1"), vm("B2", "right2")]},
        ],
        "vswitch": {"policy": policy, "pair_guarantees": source},
        "workloads": [
            {"kind": "long_lived", "tenant": "A", "src": "A1", "dst": "A2"},
            {"kind": "long_lived", "tenant": "A", "src": "A1", "dst": "A3"},
            {"kind": "long_lived", "tenant": "B", "src": "B1", "dst": "B2",
             "flows_per_pair": 10},
        ],
        "output": {"throughput": [], "queues": False},
    }
