"""The DCTCP permutation against htsim, flow by flow (issue 13).

htsim (Broadcom/csg-htsim) is the reference packet-level simulator for datacenter
transport. Its DCTCP permutation and tenantnet's ``permutation`` scenario set up
the same network and traffic, but the simulators differ in five modelling choices
(README, "Host NICs and the ACK path"). This module runs the permutation with each
of htsim's choices alone, with all of them (``htsim-matched``) and with none
(tenantnet's defaults), and compares every run's per-flow rate distribution with
measured htsim runs by the two-sample Kolmogorov-Smirnov distance. htsim's own
run-to-run spread is the yardstick: each htsim run against the others pooled.

Rates are goodput over the whole run in Gb/s. htsim counts all 9000 bytes of a
packet as payload; tenantnet's packets carry 8960 bytes of payload and 40 of
header, so htsim's byte counts are scaled by 8960/9000 to compare like with like.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .api import advance
from .scenario import Scenario

#: htsim's runs of the k = 8 permutation measured on this project's machine kind.
REFERENCE = Path(__file__).parent / "reference" / "htsim-permutation-k8.json"

#: Each of htsim's modelling choices as a scenario override.
HTSIM_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "host_nic": {"network": {"host_nic": "ack_first"}},
    "host_ecn": {"network": {"host_ecn": False}},
    "ecn_mark": {"network": {"ecn_mark": "end"}},
    "ack_path": {"network": {"ack_path": "symmetric"}},
    "dctcp_alpha_init": {"transport": {"dctcp_alpha_init": 0.0}},
    "dctcp_cut": {"transport": {"dctcp_cut": "every_window"}},
}


#: A Linux host's choices where htsim and tenantnet's defaults both differ from it:
#: the default fq qdisc and TCP small queues at Linux 4.x's 256 KB.
LINUX_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "fq": {"network": {"host_nic": "fq"}},
    "small_queues": {"transport": {"limit_output_bytes": "256KB"}},
}


def merged(names: list[str],
           table: dict[str, dict[str, dict[str, Any]]] | None = None,
           ) -> dict[str, dict[str, Any]]:
    """The overrides of the named settings (htsim's by default), merged by section."""
    out: dict[str, dict[str, Any]] = {}
    for n in names:
        for section, kv in (table or HTSIM_SETTINGS)[n].items():
            out.setdefault(section, {}).update(kv)
    return out


def variants() -> dict[str, dict[str, dict[str, Any]]]:
    """Settings compared: tenantnet's defaults, each htsim choice alone, all of them,
    all of them but the window cut (the setting that matters), and a Linux host's
    small queues alone and with fq."""
    names = list(HTSIM_SETTINGS)
    out: dict[str, dict[str, dict[str, Any]]] = {"tenantnet-defaults": {}}
    out.update({f"+{n}": merged([n]) for n in names})
    out["htsim-matched"] = merged(names)
    out["htsim-matched-but-dctcp_cut"] = merged([n for n in names if n != "dctcp_cut"])
    out["+small_queues"] = merged(["small_queues"], LINUX_SETTINGS)
    out["linux-host"] = merged(list(LINUX_SETTINGS), LINUX_SETTINGS)
    return out


def load_reference(path: Path) -> tuple[dict[str, Any], list[list[float]]]:
    """htsim's runs: their description and each run's per-flow goodput in Gb/s."""
    try:
        ref = json.loads(path.read_text())
        scale = 8960 / ref["packet_bytes"] * 8 / ref["duration_s"] / 1e9
        runs = [[b * scale for b in r["flow_bytes"]] for r in ref["runs"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not an htsim reference file ({e})") from None
    if len(runs) < 2 or any(not r for r in runs):
        raise ValueError(f"{path}: expected at least two runs, each with flows")
    return ref, runs


def quantile(xs: list[float], q: float) -> float:
    """The q-quantile of xs by the nearest rank."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def distribution(rates: list[float]) -> dict[str, float]:
    """The summary the issue asks for: min, p10, median, p90, max, fraction < 1 Gb/s."""
    return {
        "mean": round(sum(rates) / len(rates), 3),
        "min": round(min(rates), 3),
        "p10": round(quantile(rates, 0.1), 3),
        "median": round(quantile(rates, 0.5), 3),
        "p90": round(quantile(rates, 0.9), 3),
        "max": round(max(rates), 3),
        "below_1gbps": round(sum(r < 1 for r in rates) / len(rates), 4),
        "above_9gbps": round(sum(r > 9 for r in rates) / len(rates), 4),
    }


def ks(a: list[float], b: list[float]) -> float:
    """The two-sample Kolmogorov-Smirnov distance: the largest gap between the
    empirical distribution functions of a and b."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] == x:
            i += 1
        while j < len(b) and b[j] == x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def htsim_spread(runs: list[list[float]]) -> tuple[float, float]:
    """htsim against itself: the KS distance of each run to the others pooled."""
    d = [ks(r, [x for j, s in enumerate(runs) if j != i for x in s])
         for i, r in enumerate(runs)]
    return min(d), max(d)


def run_permutation(k: int, seed: int, overrides: dict[str, dict[str, Any]]) -> list[float]:
    """Each flow's goodput (Gb/s) in the permutation at fat-tree k with these overrides."""
    d = Scenario.builtin("permutation").data()
    d["topology"]["k"] = k
    d["simulation"]["seed"] = seed
    d["name"] = f"permutation-k{k}"
    for section, kv in overrides.items():
        d.setdefault(section, {}).update(kv)
    sim = Scenario.from_dict(d, f"<crosscheck k = {k}, seed {seed}>").simulation()
    advance(sim)
    return sim.summary()[1]


def report(k: int, seeds: int, reference: Path,
           only: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """One row for htsim, then one per variant as it finishes: distribution, KS
    distance of the pooled runs and of each run to htsim's pooled runs, and whether
    each run is within htsim's own spread."""
    ref, runs = load_reference(reference)
    pool = [x for r in runs for x in r]
    lo, hi = htsim_spread(runs)
    yield {
        "variant": "htsim", "runs": len(runs), "flows": len(pool),
        **distribution(pool), "ks_run_range": [round(lo, 3), round(hi, 3)],
        "htsim_commit": ref.get("htsim_commit"),
    }
    for name, ov in variants().items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        mine = [run_permutation(k, s, ov) for s in range(1, seeds + 1)]
        flat = [x for r in mine for x in r]
        per_run = [round(ks(r, pool), 3) for r in mine]
        yield {
            "variant": name, "overrides": ov, "runs": seeds, "flows": len(flat),
            **distribution(flat),
            "ks_pooled": round(ks(flat, pool), 3),
            "ks_runs": per_run,
            "within_htsim_spread": max(per_run) <= hi,
            "wall_s": round(time.perf_counter() - t0, 1),
        }
