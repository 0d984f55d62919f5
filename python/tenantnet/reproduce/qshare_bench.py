"""Issue 16's benchmark: QShare's controller rebinding a k = 8 fat-tree every 100 ms
against the same run with the binding held fixed (`tenantnet bench qshare-rebind`).

The fabric: 128 servers at 1 Gb/s with 10 VM slots each (§7's testbed servers), 8 WFQ
queues on every port and server NIC, the testbed's TCP and 1 MB ports. 64 tenants of
2 to 20 VMs (§7: "random sizes from 2 to 20 VMs"; seeded), each VM guaranteed 50 Mb/s,
placed by Algorithm 1 before traffic starts with survival ratio f = 0.9 (§4: at most
⌊0.1·N⌋ of a tenant's VMs, at least 1, on one server). Spread this wide, a server's
link carries more tenants than its port has queues and the binding changes; at
f = 0.5 Algorithm 1 keeps each tenant under one or two edge switches and all 64 stay
dedicated. Every VM runs a closed loop of enterprise-sized requests to random servers
of its tenant, dormant for U[0, 1] s after half of them (§7.1.2's unpredictable
demand), so scores and the binding change while it runs.

The fixed run holds the binding QShare chose at its first decision (100 ms) from
time 0 to the end: the same tenants dedicated, no decision after the first. Both
runs share the scenario otherwise; their traffic differs where the binding does."""

from __future__ import annotations

import random
from typing import Any

from .. import run

DURATION_S = 5.0
INTERVAL_S = 0.1
TENANTS = 64
GUARANTEE = "50Mbps"
HA = 0.9
SEED = 1


def sizes(seed: int = SEED) -> list[int]:
    """The 64 tenants' sizes, uniform on 2-20 VMs."""
    rng = random.Random(seed)
    return [rng.randint(2, 20) for _ in range(TENANTS)]


def scenario(interval_s: float = INTERVAL_S, dedicated: list[str] | None = None,
             duration_s: float = DURATION_S) -> dict[str, Any]:
    """The benchmark's scenario: the controller every `interval_s`, with `dedicated`
    tenants from the start."""
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from .qshare_packet import the_testbed
    testbed = the_testbed(1)  # its servers' TCP and its switch ports
    stop = f"{round(duration_s * 1e3)}ms"
    names = [f"T{i}" for i in range(1, TENANTS + 1)]
    return {
        "name": "qshare-rebind-k8",
        "simulation": {"duration": stop, "seed": SEED},
        "topology": {"kind": "fat_tree", "k": 8, "link_rate": "1Gbps"},
        "transport": testbed["transport"],
        "network": testbed["network"],
        "tenants": [{"name": n, "guarantee": GUARANTEE, "size": s}
                    for n, s in zip(names, sizes(), strict=True)],
        "qshare": {"interval": f"{round(interval_s * 1e3)}ms", "slots": 10, "ha": HA,
                   "dedicated": dedicated or []},
        "workloads": [{"kind": "closed_loop", "tenant": n, "cdf": "enterprise",
                       "servers": "random", "stop": stop} for n in names],
        "output": {"throughput": [], "queues": False},
    }


def first_binding() -> list[str]:
    """The tenants QShare dedicates at its first decision (100 ms) of the run."""
    r = run(scenario(duration_s=INTERVAL_S))
    t = r.qshare_tenants
    assert t is not None
    last = t[t["time_s"] == t["time_s"].max()]
    return [str(n) for n in last[last["dedicated"] == 1]["tenant"]]


def rebinds(t: Any) -> int:
    """How many times a tenant entered or left a dedicated queue after the first
    decision (the time-0 binding serves every tenant in the shared queue)."""
    wide = t.pivot_table(index="time_s", columns="tenant", values="dedicated", observed=True)
    return int((wide.diff().iloc[2:].abs() > 0).to_numpy().sum())
