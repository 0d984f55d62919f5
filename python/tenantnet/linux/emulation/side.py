"""The emulated and the simulated run side by side: each VM's data rate per phase, and
the flows' completion times by size.

Phases are the spans between the times the long-lived demand changes (a long-lived
flow's start or stop), so that each is a steady state of demand; each is judged whole,
the time a scheme needs to react included.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ...sim.results import Results


def phases(r: Results) -> list[tuple[float, float]]:
    """The (start, end) of every phase of the run `r` (module doc)."""
    end = float(r.summary["simulated_s"])
    f = r.flows[r.flows["size_bytes"].isna()]
    cuts = {0.0, end}
    cuts |= {round(float(t), 9) for t in f["start_s"].astype(float) if 0 < t < end}
    cuts |= {round(float(t), 9) for t in f["stop_s"].dropna().astype(float) if 0 < t < end}
    ts = sorted(cuts)
    return list(itertools.pairwise(ts))


def _phase_rates(r: Results, spans: list[tuple[float, float]]) -> pd.DataFrame:
    tp = r.throughput[r.throughput["scope"] == "vm_data"]
    t = tp["time_s"].astype(float).to_numpy()
    rows = []
    for a, b in spans:
        m = (t > a + 1e-9) & (t <= b + 1e-9)
        g = tp[m].groupby(["id", "tenant"], observed=True)["gbps"].mean()
        rows += [{"phase": f"{a:g}-{b:g} s", "vm": str(vm), "tenant": str(tenant),
                  "gbps": float(v)} for (vm, tenant), v in g.items()]
    return pd.DataFrame(rows, columns=["phase", "vm", "tenant", "gbps"])


SHOWN = 0.0005
"""The least rate (Gb/s) a row shows: one that reads 0.001 with the tables' three
decimals."""


def rates(emulated: Results, simulated: Results) -> pd.DataFrame:
    """A row per phase and VM: phase, vm, tenant, simulated_gbps, emulated_gbps and
    diff_pct (emulated against simulated, in %; empty where the simulated rate is
    under 0.01 Gb/s, where a percentage says little)."""
    spans = phases(simulated)
    s = _phase_rates(simulated, spans).rename(columns={"gbps": "simulated_gbps"})
    e = _phase_rates(emulated, spans).rename(columns={"gbps": "emulated_gbps"})
    out = s.merge(e, on=["phase", "vm", "tenant"], how="outer", sort=False)
    # a VM whose rate in a phase reads 0.000 in both runs says nothing; the rows the
    # simulated run shows are shown whatever the emulation's noise
    out = out[(out["simulated_gbps"].fillna(0) >= SHOWN) |
              (out["emulated_gbps"].fillna(0) >= SHOWN)].reset_index(drop=True)
    return _with_diff(out)


def _with_diff(out: pd.DataFrame) -> pd.DataFrame:
    """`out` with diff_pct: emulated against simulated, in %; empty where the
    simulated rate is under 0.01 Gb/s, where a percentage says little."""
    sim = out["simulated_gbps"].to_numpy(dtype=float)
    emu = out["emulated_gbps"].to_numpy(dtype=float)
    out["diff_pct"] = np.where(sim >= 0.01, 100 * (emu / np.where(sim > 0, sim, 1) - 1),
                               np.nan)
    return out


def tenant_rates(side: pd.DataFrame) -> pd.DataFrame:
    """:func:`rates` summed per phase and tenant."""
    g = side.groupby(["phase", "tenant"], sort=False)[["simulated_gbps", "emulated_gbps"]]
    return _with_diff(g.sum().reset_index())


def fcts(emulated: Results, simulated: Results) -> pd.DataFrame:
    """A row per tenant with sized flows: how many finished in each run and their FCT
    medians and p99 (ms)."""
    rows = []
    for tenant in sorted(set(simulated.flows.dropna(subset=["size_bytes"])["tenant"]
                             .astype(str))):
        row: dict[str, object] = {"tenant": tenant}
        for name, r in (("simulated", simulated), ("emulated", emulated)):
            f = r.flows[(r.flows["tenant"].astype(str) == tenant) & r.flows["size_bytes"]
                        .notna()]
            done = f["fct_s"].dropna().astype(float) * 1e3
            row[f"{name}_finished"] = f"{len(done)} of {len(f)}"
            row[f"{name}_p50_ms"] = float(done.median()) if len(done) else np.nan
            row[f"{name}_p99_ms"] = float(done.quantile(0.99)) if len(done) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
