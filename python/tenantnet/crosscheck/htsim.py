"""The DCTCP permutation against htsim, flow by flow.

htsim (Broadcom/csg-htsim) is the reference packet-level simulator for datacenter
transport. Its DCTCP permutation and tenantnet's ``permutation`` scenario set up
the same network and traffic, but the simulators differ in seven modelling choices
(:data:`HTSIM_SETTINGS`; the guide's "Host NICs and the ACK path"). This module runs
the permutation with each of htsim's choices alone, with all of them
(``htsim-matched``), with all but each one, and with none (tenantnet's defaults),
and compares every run's per-flow rates with measured htsim runs (40 at k = 8, 12 at
k = 12): by the two-sample Kolmogorov-Smirnov distance, with htsim's own run-to-run
spread as the yardstick (each htsim run against the others pooled), and by three
tails with their intervals over runs (:func:`tails`), one of them relative to each
flow's max-min fair share on its own path (:func:`maxmin_shares`), which takes the
luck of the path draw out of the comparison.

Rates are goodput over the whole run in Gb/s. htsim counts all 9000 bytes of a
packet as payload; tenantnet's packets carry 8960 bytes of payload and 40 of
header, so htsim's byte counts are scaled by 8960/9000 to compare like with like.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..measure import stats
from ..sim.api import advance
from ..sim.scenario import Scenario

#: htsim's runs of the permutation measured on this project's machine kind, by k.
REFERENCES = {k: Path(__file__).parents[1] / "reference" / f"htsim-permutation-k{k}.json"
              for k in (8, 12)}

#: The k = 8 runs, the default.
REFERENCE = REFERENCES[8]

#: The tails judged, over each flow's goodput (Gb/s) or, for ``below_half_share``,
#: its goodput over its max-min fair share on its own path: the share takes out the
#: luck of the path draw (how many flows collide on a link), leaving the transport.
TAILS: dict[str, tuple[bool, Callable[[float], bool]]] = {
    "below_1gbps": (False, lambda x: x < 1),
    "above_9gbps": (False, lambda x: x > 9),
    "below_half_share": (True, lambda x: x < 0.5),
}

#: Each of htsim's modelling choices as a scenario override.
HTSIM_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "host_nic": {"network": {"host_nic": "ack_first"}},
    "host_ecn": {"network": {"host_ecn": False}},
    "ecn_mark": {"network": {"ecn_mark": "end"}},
    "ack_path": {"network": {"ack_path": "symmetric"}},
    "dctcp_alpha_init": {"transport": {"dctcp_alpha_init": 0.0}},
    "dctcp_cut": {"transport": {"dctcp_cut": "every_window"}},
    "dctcp_window": {"transport": {"dctcp_window": "acks"}},
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
    all of them but each one (the choices that matter show by their absence), and
    a Linux host's small queues alone and with fq."""
    names = list(HTSIM_SETTINGS)
    out: dict[str, dict[str, dict[str, Any]]] = {"tenantnet-defaults": {}}
    out.update({f"+{n}": merged([n]) for n in names})
    out["htsim-matched"] = merged(names)
    out.update({f"htsim-matched-but-{n}": merged([m for m in names if m != n])
                for n in names})
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


def reference_shares(ref: dict[str, Any]) -> list[list[float]] | None:
    """Each htsim flow's max-min fair share on its own path (Gb/s), per run, where
    the reference file has them (``scripts/htsim_reference.py`` writes them)."""
    try:
        shares = [r["flow_fair_gbps"] for r in ref["runs"]]
    except KeyError:
        return None
    if [len(x) for x in shares] != [len(r["flow_bytes"]) for r in ref["runs"]]:
        raise ValueError("htsim reference: flow_fair_gbps and flow_bytes differ in length")
    return shares


def tails(rates: list[list[float]], shares: list[list[float]] | None,
          against: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every tail of :data:`TAILS` over these runs (those over shares only with
    shares), each with its intervals (:func:`tail`); with `against` (htsim's
    tails), the interval of the difference and whether it holds zero."""
    out: dict[str, Any] = {}
    for name, (relative, below) in TAILS.items():
        if relative and shares is None:
            continue
        xs = ([[r / f for r, f in zip(rr, ff, strict=True)]
               for rr, ff in zip(rates, shares or [], strict=True)] if relative else rates)
        t = tail(xs, below)
        if against is not None and name in against:
            lo, hi = tail_difference(t, against[name])
            t["difference"] = (lo, hi)
            t["agrees"] = lo <= 0 <= hi
        out[name] = t
    return out


def rounded_tails(t: dict[str, Any]) -> dict[str, Any]:
    """:func:`tails` for a JSON line: percentages to two decimals, no per-run list."""
    def pct(v: float) -> float:
        return round(100 * v, 2)
    return {name: {"count": x["count"], "flows": x["flows"], "pct": pct(x["fraction"]),
                   "wilson_pct": [pct(v) for v in x["wilson"]],
                   "runs_pct": [pct(v) for v in x["runs"]],
                   **({"difference_pct": [pct(v) for v in x["difference"]],
                       "agrees": x["agrees"]} if "difference" in x else {})}
            for name, x in t.items()}


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
        **{name: round(sum(map(test, rates)) / len(rates), 4)
           for name, (relative, test) in TAILS.items() if not relative},
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


def maxmin_shares(paths: list[list[str]], capacity_gbps: float = 10.0) -> list[float]:
    """Each flow's max-min fair rate in Gb/s, every link `capacity_gbps`, by
    progressive filling: the link with the smallest equal share of what is left
    fixes its unfixed flows at that share, until every flow is fixed. A flow's path
    is the list of its links' names (any names, the same link the same name)."""
    on: dict[str, set[int]] = {}
    for i, p in enumerate(paths):
        for link in p:
            on.setdefault(link, set()).add(i)
    left = dict.fromkeys(on, capacity_gbps)
    share = [math.nan] * len(paths)
    while on:
        link = min(on, key=lambda x: (left[x] / len(on[x]), x))
        r = left[link] / len(on[link])
        for f in sorted(on[link]):
            share[f] = r
            for x in paths[f]:
                left[x] -= r
                on[x].discard(f)
        on = {x: fs for x, fs in on.items() if fs}
    return share


def wilson(x: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a binomial fraction x / n."""
    z = 1.959964
    if n == 0:
        return (0.0, 1.0)
    p, d = x / n, 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def tail(runs: list[list[float]], below: Callable[[float], bool]) -> dict[str, Any]:
    """The fraction of flows for which `below` holds, over runs pooled: the count,
    the fraction, its Wilson interval (flows taken as independent) and the 95 %
    t-interval over runs (each run one sample: flows in a run share links, so the
    runs, not the flows, are independent). The per-run fractions come too."""
    counts = [sum(map(below, r)) for r in runs]
    per_run = [c / len(r) for c, r in zip(counts, runs, strict=True)]
    x, n = sum(counts), sum(len(r) for r in runs)
    e = stats.estimate(per_run, bounds=(0.0, 1.0))
    return {"count": x, "flows": n, "fraction": x / n, "wilson": wilson(x, n),
            "runs": (e.lo, e.hi), "per_run": per_run}


def tail_difference(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """The 95 % Welch interval of the difference of two tails' per-run means (a - b):
    runs as the samples, unequal variances, Welch-Satterthwaite degrees of freedom."""
    xa, xb = a["per_run"], b["per_run"]
    if len(xa) < 2 or len(xb) < 2:
        raise ValueError("expected at least two runs on each side")
    va = statistics.variance(xa) / len(xa)
    vb = statistics.variance(xb) / len(xb)
    d = statistics.fmean(xa) - statistics.fmean(xb)
    if va + vb == 0:
        return (d, d)
    df = (va + vb) ** 2 / (va ** 2 / (len(xa) - 1) + vb ** 2 / (len(xb) - 1))
    h = stats.t975(max(1, math.floor(df))) * math.sqrt(va + vb)
    return (d - h, d + h)


def htsim_spread(runs: list[list[float]]) -> tuple[float, float]:
    """htsim against itself: the KS distance of each run to the others pooled."""
    d = [ks(r, [x for j, s in enumerate(runs) if j != i for x in s])
         for i, r in enumerate(runs)]
    return min(d), max(d)


def run_permutation(k: int, seed: int, overrides: dict[str, dict[str, Any]],
                    ) -> tuple[list[float], list[float]]:
    """Each flow's goodput (Gb/s) in the permutation at fat-tree k with these
    overrides, and its max-min fair share on the path its hash chose."""
    d = Scenario.builtin("permutation").data()
    d["topology"]["k"] = k
    d["simulation"]["seed"] = seed
    d["name"] = f"permutation-k{k}"
    for section, kv in overrides.items():
        d.setdefault(section, {}).update(kv)
    sim = Scenario.from_dict(d, f"<crosscheck k = {k}, seed {seed}>").simulation()
    shares = maxmin_shares(sim.flow_paths)
    advance(sim)
    return sim.summary()[1], shares


def report(k: int, seeds: int, reference: Path,
           only: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """One row for htsim, then one per variant as it finishes: distribution, KS
    distance of the pooled runs and of each run to htsim's pooled runs, whether
    each run is within htsim's own spread, and the tails with their intervals
    and whether each agrees with htsim's (:func:`tails`)."""
    ref, runs = load_reference(reference)
    shares = reference_shares(ref)
    pool = [x for r in runs for x in r]
    lo, hi = htsim_spread(runs)
    theirs = tails(runs, shares)
    yield {
        "variant": "htsim", "runs": len(runs), "flows": len(pool),
        **distribution(pool), "ks_run_range": [round(lo, 3), round(hi, 3)],
        "tails": rounded_tails(theirs), "htsim_commit": ref.get("htsim_commit"),
    }
    for name, ov in variants().items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        mine = [run_permutation(k, s, ov) for s in range(1, seeds + 1)]
        rates = [r for r, _ in mine]
        flat = [x for r in rates for x in r]
        per_run = [round(ks(r, pool), 3) for r in rates]
        ours = tails(rates, [f for _, f in mine] if shares else None,
                     theirs if seeds >= 2 else None)
        yield {
            "variant": name, "overrides": ov, "runs": seeds, "flows": len(flat),
            **distribution(flat),
            "ks_pooled": round(ks(flat, pool), 3),
            "ks_runs": per_run,
            "within_htsim_spread": max(per_run) <= hi,
            "tails": rounded_tails(ours),
            "wall_s": round(time.perf_counter() - t0, 1),
        }
