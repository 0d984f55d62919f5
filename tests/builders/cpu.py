"""The vswitch CPU model's test scenarios (C2QoS §III-IV): VMs on one host forwarded
by PMD cores at the bandwidth-CPU model's cycle costs (spec c2qos.md §1.4)."""

from __future__ import annotations

from typing import Any

import tenantnet
from helpers import simulate

HZ = 2.2e9


def cycles(size: int, factor: float = 1.0) -> float:
    """c(s, single flow) of the default costs (spec §1.4), times `factor`."""
    return (400 + 480 / 1436 * (size - 64) + 175 + 120) * factor


def scenario(rates: list[str], sizes: list[str], cpu: dict[str, Any] | None = None,
             vms: list[dict[str, Any]] | None = None, duration: str = "100ms",
             tcp: bool = False) -> dict[str, Any]:
    """VMs vm0.. on left0 send to a sink on right0 over a 100 Gb/s dumbbell, one
    workload each (UDP at `rates` in packets of `sizes`, or backlogged TCP)."""
    n = len(sizes)
    vms = vms or [{"name": f"vm{i}", "host": "left0", "guarantee": "1Gbps"} for i in range(n)]
    if tcp:
        work = [{"kind": "long_lived", "tenant": "T", "src": f"vm{i}", "dst": "sink"}
                for i in range(n)]
    else:
        work = [{"kind": "cbr", "tenant": "T", "src": f"vm{i}", "dst": "sink", "rate": r,
                 "packet_size": s} for i, (r, s) in enumerate(zip(rates, sizes, strict=True))]
    return {
        "simulation": {"duration": duration, "seed": 1},
        "topology": {"kind": "dumbbell", "hosts_per_side": 1, "link_rate": "100Gbps",
                     "link_delay": "1us"},
        "tenants": [{"name": "T", "guarantee": "1Gbps",
                     "vms": [*vms, {"name": "sink", "host": "right0"}]}],
        "vswitch": {"interval": "10ms", "cpu": cpu or {}},
        "workloads": work,
        "output": {"sample_interval": "10ms", "queues": False},
    }


def run(d: dict[str, Any]) -> tenantnet.Results:
    r, _ = simulate(d)
    cpu = r.summary["cpu"]
    assert cpu["cycle_conservation_ok"], cpu
    assert (cpu["cycles_forwarding"] + cpu["cycles_empty_polls"] + cpu["cycles_idle"]
            == cpu["cycles_clock"])
    return r


def per_second(r: tenantnet.Results, column: str, after: float = 0.02) -> dict[str, float]:
    """Each sending VM's mean of `column` per second after `after`."""
    v = r.vm_cpu[(r.vm_cpu["time_s"] > after + 1e-9) & (r.vm_cpu["vm"] != "sink")]
    return {str(k): float(x) / 0.01 for k, x in v.groupby("vm")[column].mean().items()}
