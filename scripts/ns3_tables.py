"""The ns-3 cross-check's measured tables (docs/guide/crosscheck.md), regenerated:
``python scripts/ns3_tables.py [incast] [long] [rack] [leafspine] [star] [seeds]``
prints each table as Markdown (every family when none is named). Needs ns-3's wheel and
a C++ compiler, as ``tenantnet crosscheck ns3`` does; ``--set KEY=VALUE`` sets a
``[transport]`` key in every scenario (e.g. ``--set loss_ssthresh=flight`` to see the
default's effect); ``--ns3-as-released`` runs ns-3 3.44 without the fixes to its SACK
recovery that the cross-check applies.

Each row runs one scenario through :func:`tenantnet.crosscheck.ns3.crosscheck`; cells read
tenantnet / ns-3. The incast and long flows run on the dumbbell of
``examples/incast-ns3.toml``; the leaf-spine is ``examples/leafspine-ns3.toml`` (about
a minute and a half of ns-3 a row), the star the same flows' recipe on 16 hosts under
one switch; ``seeds`` runs NewReno with SACK on both over seeds 1 to 8.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tenantnet.crosscheck.ns3 import crosscheck
from tenantnet.measure.stats import estimate
from tenantnet.sim.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = Scenario.from_file(ROOT / "examples" / "incast-ns3.toml").data()
LEAF_SPINE = Scenario.from_file(ROOT / "examples" / "leafspine-ns3.toml").data()

#: Each transport's dumbbell set-up: (protocol, flow size, buffer, ECN threshold).
INCAST = {"DCTCP": ("dctcp", "100KB", "200KB", "65pkt"),
          "NewReno": ("tcp", "200KB", "100KB", None)}
LONG = {"NewReno": ("tcp", "10MB", "100KB", None), "DCTCP": ("dctcp", "10MB", "200KB", "65pkt")}


def dumbbell(protocol: str, buffer: str, ecn: str | None, recovery: str,
             extra: dict[str, Any]) -> dict[str, Any]:
    d = copy.deepcopy(DUMBBELL)
    d["transport"].update(protocol=protocol, recovery=recovery, **extra)
    d["network"] = {"buffer": buffer, **({"ecn_threshold": ecn} if ecn else {})}
    d["simulation"]["duration"] = "2s"
    return d


def incast(n: int, how: tuple[str, str, str, str | None], recovery: str,
           extra: dict[str, Any]) -> dict[str, Any]:
    """N senders to right0 at once."""
    senders = [f"left{i}" for i in range(n)]
    return with_flows(n, how, recovery, extra, lambda size: [
        {"kind": "incast", "receiver": "right0", "size": size, "rounds": 1,
         "interval": "1ms", "senders": senders}])


def long_flows(n: int, how: tuple[str, str, str, str | None], recovery: str,
               extra: dict[str, Any]) -> dict[str, Any]:
    """N flows, left<i> to right<i>."""
    return with_flows(n, how, recovery, extra, lambda size: [
        {"kind": "fixed", "src": f"left{i}", "dst": [f"right{i}"], "size": size}
        for i in range(n)])


def with_flows(n: int, how: tuple[str, str, str, str | None], recovery: str,
               extra: dict[str, Any], workloads: Callable[[str], list[dict[str, Any]]]
               ) -> dict[str, Any]:
    protocol, size, buffer, ecn = how
    d = dumbbell(protocol, buffer, ecn, recovery, extra)
    d["topology"]["hosts_per_side"] = n
    d["workloads"] = workloads(size)
    return d


def leaf_spine(protocol: str, recovery: str, extra: dict[str, Any]) -> dict[str, Any]:
    d = copy.deepcopy(LEAF_SPINE)
    d["transport"].update(protocol=protocol, recovery=recovery, **extra)
    if protocol == "dctcp":
        # K for a 100 KB buffer: a fifth of it, where 65 packets would never mark
        d["network"]["ecn_threshold"] = "13pkt"
    return d


def star(protocol: str, recovery: str, extra: dict[str, Any]) -> dict[str, Any]:
    """The leaf-spine's scenario with its 16 hosts under one switch."""
    d = leaf_spine(protocol, recovery, extra)
    d["name"] = "star-websearch-ns3"
    topo = d["topology"]
    d["topology"] = {"kind": "star", "hosts": topo["leaves"] * topo["hosts_per_leaf"],
                     "link_rate": topo["link_rate"], "link_delay": topo["link_delay"]}
    return d


FIXES = {"upstream_fixes": True}
"""Whether ns-3 runs with its later SACK-recovery fixes (``--ns3-as-released``)."""


def cells(t: pd.DataFrame, cols: list[str], fmt: str) -> list[str]:
    return [f"{t.iloc[0][c]:{fmt}} / {t.iloc[1][c]:{fmt}}" for c in cols]


def run(d: dict[str, Any]) -> pd.DataFrame:
    print(f"  {d['name']}: {d['transport']}", file=sys.stderr, flush=True)
    return crosscheck(Scenario.from_dict(d), **FIXES)[0]


def row(t: pd.DataFrame, lead: list[str], times: list[str]) -> str:
    out = [*lead, *cells(t, times, ".2f" if "p99_ms" not in times else ".1f"),
           f"{int(t.iloc[0]['flows_with_timeouts'])} / {int(t.iloc[1]['flows_with_timeouts'])}",
           *cells(t, ["retransmits_per_flow"], ".1f"), *cells(t, ["drops"], "d")]
    return "| " + " | ".join(out) + " |"


def incast_table(extra: dict[str, Any]) -> Iterator[str]:
    yield "| transport | N | SACK | median | p90 | max | flows with an RTO | " \
          "retransmissions a flow | drops |"
    yield "|---|---|---|---|---|---|---|---|---|"
    for name, how in INCAST.items():
        for n in (8, 16, 32, 64):
            for rec, label in (("newreno", "none"), ("sack", "SACK")):
                t = run(incast(n, how, rec, extra))
                yield row(t, [name, str(n), label], ["median_ms", "p90_ms", "max_ms"])


def long_table(extra: dict[str, Any]) -> Iterator[str]:
    yield "| transport | N | SACK | median | p99 | flows with an RTO | " \
          "retransmissions a flow | drops |"
    yield "|---|---|---|---|---|---|---|---|"
    for name, how in LONG.items():
        for n in (2, 4, 8):
            for rec, label in (("newreno", "none"), ("sack", "SACK")):
                t = run(long_flows(n, how, rec, extra))
                yield row(t, [name, str(n), label], ["median_ms", "p99_ms"])


def rack_table(extra: dict[str, Any]) -> Iterator[str]:
    yield "| transport | N | median | p90 | flows with an RTO |"
    yield "|---|---|---|---|---|"
    for name, how in INCAST.items():
        for n in (8, 16, 32, 64):
            t = run(incast(n, how, "rack", extra))
            to = f"{int(t.iloc[0]['flows_with_timeouts'])} / " \
                 f"{int(t.iloc[1]['flows_with_timeouts'])}"
            yield "| " + " | ".join([name, str(n), *cells(t, ["median_ms", "p90_ms"], ".2f"),
                                     to]) + " |"


def fabric_table(fabric: Callable[[str, str, dict[str, Any]], dict[str, Any]],
                 extra: dict[str, Any]) -> Iterator[str]:
    yield "| transport | recovery | median | p99 | small flows' median / p99 slowdown | " \
          "flows with an RTO | retransmissions a flow | drops | KS |"
    yield "|---|---|---|---|---|---|---|---|---|"
    for name, protocol, recoveries in (("NewReno", "tcp", ("newreno", "reno_sack", "sack",
                                                           "rack")),
                                       ("DCTCP", "dctcp", ("newreno", "sack", "rack"))):
        for rec in recoveries:
            t = run(fabric(protocol, rec, extra))
            o, n = t.iloc[0], t.iloc[1]
            slow = (f"{o['small_median_slowdown']:.2f} / {n['small_median_slowdown']:.2f}, "
                    f"{o['small_p99_slowdown']:.0f} / {n['small_p99_slowdown']:.0f}")
            yield "| " + " | ".join([
                name, rec, *cells(t, ["median_ms"], ".3f"), *cells(t, ["p99_ms"], ".1f"), slow,
                f"{int(o['flows_with_timeouts'])} / {int(n['flows_with_timeouts'])}",
                *cells(t, ["retransmits_per_flow"], ".1f"), *cells(t, ["drops"], "d"),
                f"{t.iloc[2]['ks']:.3f}"]) + " |"


def leafspine_table(extra: dict[str, Any]) -> Iterator[str]:
    yield from fabric_table(leaf_spine, extra)


def star_table(extra: dict[str, Any]) -> Iterator[str]:
    yield from fabric_table(star, extra)


def seeds_table(extra: dict[str, Any]) -> Iterator[str]:
    """NewReno with SACK on the leaf-spine and the star, seeds 1 to 8, then each
    column's mean difference with its 95 % t-interval."""
    yield "| fabric | seed | median (ms) | p99 (ms) | small flows' median slowdown | " \
          "flows with an RTO | drops |"
    yield "|---|---|---|---|---|---|---|"
    for label, fabric in (("leaf-spine", leaf_spine), ("star", star)):
        gaps: list[list[float]] = []
        for seed in range(1, 9):
            d = fabric("tcp", "sack", extra)
            d["simulation"]["seed"] = seed
            t = run(d)
            o, n = t.iloc[0], t.iloc[1]
            rel = [o[c] / n[c] - 1 for c in ("median_ms", "p99_ms", "small_median_slowdown")]
            gaps.append(rel)
            yield "| " + " | ".join([
                label, str(seed),
                *(f"{o[c]:{f}} / {n[c]:{f}} ({g:+.0%})" for c, f, g in zip(
                    ("median_ms", "p99_ms", "small_median_slowdown"), (".3f", ".1f", ".2f"),
                    rel, strict=True)),
                f"{int(o['flows_with_timeouts'])} / {int(n['flows_with_timeouts'])}",
                f"{int(o['drops'])} / {int(n['drops'])}"]) + " |"
        means = [estimate(column) for column in zip(*gaps, strict=True)]
        yield "| " + " | ".join([label, "mean", *(f"{e.mean:+.0%} ± {(e.hi - e.lo) / 2:.0%}"
                                                  for e in means), "", ""]) + " |"


TABLES: dict[str, Callable[[dict[str, Any]], Iterator[str]]] = {
    "incast": incast_table, "long": long_table, "rack": rack_table,
    "leafspine": leafspine_table, "star": star_table, "seeds": seeds_table}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tables", nargs="*", metavar="TABLE",
                   help=f"one of {', '.join(TABLES)} (default: all)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a [transport] key set in every scenario")
    p.add_argument("--ns3-as-released", action="store_true",
                   help="ns-3 3.44's SACK recovery without its later fixes")
    a = p.parse_args()
    FIXES["upstream_fixes"] = not a.ns3_as_released
    unknown = [t for t in a.tables if t not in TABLES]
    if unknown:
        p.error(f"table {unknown[0]!r}: expected one of {', '.join(TABLES)}")
    extra = dict(kv.split("=", 1) for kv in a.set)
    for name in a.tables or list(TABLES):
        print(f"\n{name}\n")
        for line in TABLES[name](extra):
            print(line, flush=True)


if __name__ == "__main__":
    main()
