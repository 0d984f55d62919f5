"""Makes ``trace.csv.gz``: a day's flow records of the web, search and cache tenants of
``network.toml``, as a collector would export them, for the "Your own network" guide.

Flow sizes come from the published distributions (web search for web and search, data
mining for cache; Alizadeh et al., SIGCOMM 2010, and Greenberg et al., SIGCOMM 2009,
as shipped with tenantnet), arrivals are Poisson, and the load changes over the run:
a quiet start, a peak, then an evening. tenantnet draws them itself (``poisson``
workloads over the same fabric and tenants) and writes what it drew as a trace
(``Scenario.write_trace``), which ``network.toml`` replays.

    python examples/your-network/make_trace.py [SECONDS]
"""

from __future__ import annotations

import sys
from pathlib import Path

import tenantnet

HERE = Path(__file__).resolve().parent
PHASES = [(0.0, 0.3, 0.5), (0.3, 0.7, 1.5), (0.7, 1.0, 0.8)]
"""(from, to, load factor) over the run, as fractions of its length."""
TENANTS = {"web": ("websearch", 0.2), "search": ("websearch", 0.05),
           "cache": ("datamining", 0.05)}
"""tenant: (size distribution, load at factor 1, as a fraction of its hosts' NICs)."""


def draws(seconds: float) -> tenantnet.Scenario:
    """The scenario whose flows are the trace: one ``poisson`` workload per tenant and
    phase, between the tenant's own VMs."""
    workloads = []
    for tenant, (cdf, load) in TENANTS.items():
        for a, b, factor in PHASES:
            workloads.append({"kind": "poisson", "tenant": tenant, "cdf": cdf,
                              "load": load * factor, "start": f"{a * seconds:.6f}s",
                              "stop": f"{b * seconds:.6f}s"})
    text = (HERE / "network.toml").read_text()
    head = text.split("[[workloads]]")[0]
    data = tenantnet.Scenario.from_toml(head, base_dir=HERE).data()
    data["workloads"] = workloads
    data["simulation"]["duration"] = f"{seconds}s"
    return tenantnet.Scenario.from_dict(data, source="make_trace.py", base_dir=HERE)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    out = HERE / "trace.csv.gz"
    n = draws(seconds).write_trace(out)
    print(f"{out}: {n} flows over {seconds} s")


if __name__ == "__main__":
    main()
