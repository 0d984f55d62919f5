"""``tenantnet compare`` and ``tenantnet sweep``: the command-line side."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..jobs import progress
from ..linux.lab import why_not
from ..measure.defaults import DEFAULT_SEEDS, SETTLE_S
from ..sim import schemes
from ..sim.scenario import Scenario
from .tools import add_force, check_out, count_arg, fail, number_arg, publish, seed_arg, size_arg


def scheme_list(text: str) -> list[str]:
    """``--schemes a,b,c+d``: the comma-separated list, each name or combination
    checked."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise argparse.ArgumentTypeError(f"{text!r}: expected schemes such as "
                                         "none,static,qshare+barberq")
    for s in specs:
        try:
            schemes.parse(s)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    if len(set(specs)) != len(specs):
        raise argparse.ArgumentTypeError(f"{text!r}: a scheme is named twice")
    return specs


WIDTH = 100
"""Lines of the verdict table's notes and legend wrap at this width."""


def _wrapped(text: str, indent: int) -> str:
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent=" " * indent,
                                    break_on_hyphens=False))


def print_verdicts(v: Any, label: str = "scheme") -> None:
    """The verdict table as text, a row per scheme (a property no scheme could be
    judged on left out, and said so; "≈ inconclusive:" as "≈", which the legend below
    says), then the notes that make a verdict less firm, wrapped."""
    # deferred for start-up: loads numpy
    from ..measure import verdicts
    props = [p for p in verdicts.NAMES if any(verdicts.symbol(x) for x in v[p])]

    def cell(x: Any) -> str:
        return str(x).replace("≈ inconclusive: ", "≈ ")
    width = max(len(label), *(len(str(s)) for s in v["scheme"]))
    cols = [max(len(p), *(len(cell(x)) for x in v[p])) for p in props]
    print((f"{label:<{width}}  " + "  ".join(f"{p:<{w}}" for p, w in zip(props, cols,
                                                                           strict=True))
           ).rstrip())
    for _, r in v.iterrows():
        if r["note"]:
            print(_wrapped(f"{r['scheme']:<{width}}  {r['note']}", width + 2))
        else:
            print(f"{r['scheme']:<{width}}  " + "  ".join(
                f"{cell(r[p]):<{w}}" for p, w in zip(props, cols, strict=True)).rstrip())
    if any("[" in str(x) for p in props for x in v[p]):
        print(_wrapped("each cell: the mean over seeds [its 95 % interval]; ✔ the whole "
                       "interval passes, ✘ none of it does, ≈ inconclusive: it straddles "
                       "the threshold, or cannot be told from it", 0))
    elif props:
        print(_wrapped("each cell: its run's figure; ✔ it passes, ✘ it does not, ≈ it "
                       "cannot be told from the threshold", 0))
    for p in verdicts.NAMES:
        if p not in props:
            print(f"({p}: nothing to judge in these runs)")
    # deferred for start-up: loads numpy, pandas, pyarrow
    from ..comparison.tables import group_warnings
    for w, names in group_warnings(v).items():
        print(_wrapped(f"note: {', '.join(names)}: {w}", 6))


def _judged(a: argparse.Namespace, make: Callable[[Path], Any],
            nothing: Callable[[Any], str]) -> Any:
    """Runs the comparison `make` builds into a fresh ``a.out`` (failing with
    `nothing`'s words if no scheme ran), writes its tables and report, and prints its
    verdicts."""
    kept: dict[str, Any] = {}
    with progress.showing(not a.quiet):
        def go(d: Path) -> None:
            c = make(d)
            if all(o.measures is None for o in c.outcomes):
                fail(nothing(c))
            c.write(d)
            kept["c"] = c
        publish(a.out, go, "tenantnet compare", a.force)
    print_verdicts(kept["c"].verdicts)
    return kept["c"]


def cmd_compare_emulated(a: argparse.Namespace, sc: Scenario) -> None:
    """``compare --emulate``: each scheme an emulation enforces, simulated and emulated
    side by side (:mod:`tenantnet.linux.emulation.verdicts`)."""
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..linux.emulation.verdicts import compare_emulated
    why = why_not()
    if why:
        fail(f"compare --emulate needs network namespaces: {why}")
    c = _judged(a, lambda d: compare_emulated(sc, a.schemes, d, a.scale, a.seed, a.settle,
                                          progress.step),
            lambda c: f"{a.scenario}: no scheme can be emulated: " + "; ".join(
                f"{s}: {w}" for s, w in c.skipped.items()))
    print("one run per scheme and side (the scenario's seed): no intervals")
    if c.trust:
        print(c.trust)
    print(f"report: {a.out / 'report.html'}")


def cmd_compare(a: argparse.Namespace) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..comparison.compare import compare
    if a.scale is not None and not a.emulate:
        fail("--scale applies to --emulate only")
    check_out(a.out, a.force)
    sc = Scenario.from_file(a.scenario)
    sc.validate(memory_budget=a.memory_budget, seed=a.seed)
    if a.emulate:
        cmd_compare_emulated(a, sc)
        return
    _judged(a, lambda d: compare(sc, a.schemes, d, a.jobs, a.seeds, a.seed, a.settle,
                                 a.memory_budget),
            lambda c: f"{a.scenario}: no scheme ran: " + "; ".join(
                f"{o.scheme}: {o.error}" for o in c.outcomes))
    if a.seeds == 1:
        print("one seed per scheme: no intervals, each verdict rests on one run "
              "(--seeds N for more)")
    print(f"report: {a.out / 'report.html'}")


def cmd_sweep(a: argparse.Namespace) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..comparison.sweep import read_grid, sweep
    sc = Scenario.from_file(a.scenario)
    grid = read_grid(a.grid)
    check_out(a.out, a.force)
    with progress.showing(not a.quiet):
        df = sweep(sc, grid, a.out, a.schemes, a.jobs, a.backend, a.address, a.settle,
                   a.memory_budget, a.force, a.max_events)
    for _, r in df[df["status"] == "did not act"].iterrows():
        print(f"note: point {r['point']} ({r['scheme']}) did not act, not averaged: "
              f"{r['engagement']}", file=sys.stderr)
    failed = df[df["status"] == "failed"]
    for _, r in failed.iterrows():
        print(f"warning: point {r['point']} ({r['scheme']}) failed: {r['error']}",
              file=sys.stderr)
    print(f"{len(df)} points ({len(failed)} failed; run the same command again to retry "
          f"them) in {a.out / 'sweep.parquet'}" if len(failed) else
          f"{len(df)} points in {a.out / 'sweep.parquet'}")


def add_scenario_args(p: argparse.ArgumentParser, schemes: str, out: str) -> None:
    """SCENARIO, ``--schemes`` and ``-o DIR``, as the commands that run a scenario under
    several schemes take them (`schemes` and `out` their help)."""
    p.add_argument("scenario", type=Path, metavar="SCENARIO",
                   help="scenario file (.toml, or .json)")
    p.add_argument("--schemes", type=scheme_list, default=None, metavar="A,B,C+D",
                   help=schemes)
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help=out)


def add_commands(cmd: Callable[..., argparse.ArgumentParser]) -> None:
    """Adds ``compare`` (and ``sweep``) to the top-level parser through `cmd`."""
    p = cmd("compare", cmd_compare,
            "Run SCENARIO under every isolation scheme that applies and several seeds (in "
            "parallel) and judge them: per-tenant guarantees and spare share, work "
            "conservation, short-flow latency, fairness, each a mean with its 95 % "
            "interval; a verdict-first report plus Parquet and CSV tables.",
            "Run `tenantnet schemes SCENARIO` to see which schemes apply and what each "
            "sets.")
    add_scenario_args(p, "schemes or combinations to run (default: every scheme that "
                         "applies)",
                      "folder for the report, the tables and each scheme's results")
    p.add_argument("-j", "--jobs", type=count_arg, default=None, metavar="N",
                   help="runs at once (default: one per core)")
    p.add_argument("--seeds", type=count_arg, default=DEFAULT_SEEDS, metavar="N",
                   help="runs per scheme, each with its own seed: every figure is their "
                        f"mean with a 95 %% interval (default {DEFAULT_SEEDS})")
    p.add_argument("--seed", type=seed_arg, metavar="N",
                   help="the first seed (default the scenario's simulation.seed); the "
                        "others follow it")
    p.add_argument("--settle", type=number_arg(0, 1e6), default=SETTLE_S,
                   metavar="SECONDS",
                   help="judge guarantees and fairness once a tenant's VM has had demand "
                        f"this long (default {SETTLE_S:g})")
    p.add_argument("--emulate", action="store_true",
                   help="also run each scheme that Linux can enforce (none, static, mbfq) "
                        "on this machine's Linux in network namespaces, beside the "
                        "simulator's run of the same scaled scenario (needs root; see "
                        "`tenantnet emulate`); one run each, the others listed with why not")
    p.add_argument("--scale", type=number_arg(1e-6, 1), default=None, metavar="X",
                   help="with --emulate: multiply every rate by X (default: the fastest "
                        "host NIC at 1 Gb/s)")
    add_force(p)
    p.add_argument("--memory-budget", type=size_arg, metavar="SIZE",
                   help="most memory each run may use (default 8GiB)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p = cmd("sweep", cmd_sweep,
            "Run SCENARIO over the cartesian product of a grid's parameter values, seeds "
            "and schemes, locally or on Ray; one Parquet dataset out, a row per point. "
            "Resumable: finished points are skipped when the same command runs again.",
            "GRID is TOML: `seeds = [1, 2]`, `schemes = [\"none\", \"mbfq\"]` and a "
            "[parameters] table of dotted scenario keys, each a list of values, e.g. "
            "\"workloads[2].load\" = [0.04, 0.08].")
    add_scenario_args(p, "schemes (default: the grid's, else every scheme that applies)",
                      "folder of the dataset (points/, sweep.parquet, sweep.csv, "
                      "sweep.png); points already in it are not run again")
    p.add_argument("--grid", type=Path, required=True, metavar="GRID",
                   help="the grid (TOML)")
    p.add_argument("-j", "--jobs", type=count_arg, default=None, metavar="N",
                   help="runs at once (default: one per core; with Ray on a local "
                        "instance, its CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local process pool (default) or a Ray cluster "
                        "(pip install 'tenantnet[ray]')")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="Ray cluster to join, e.g. ray://head:10001 (default: start a "
                        "local instance)")
    p.add_argument("--settle", type=number_arg(0, 1e6), default=SETTLE_S,
                   metavar="SECONDS", help=f"as for compare (default {SETTLE_S:g})")
    p.add_argument("--max-events", type=number_arg(1, 1e18), default=1e12, metavar="N",
                   help="most events all the sweep's runs together may be estimated to "
                        "need (default 1e12, about two days on one core)")
    add_force(p)
    p.add_argument("--memory-budget", type=size_arg, metavar="SIZE",
                   help="most memory each run may use (default 8GiB)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
