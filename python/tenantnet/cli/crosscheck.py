"""The ``crosscheck`` command (:mod:`tenantnet.crosscheck.ns3` does the work, imported when
the command runs: building the parser loads no pandas)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..sim.scenario import Scenario
from .tools import CliError, add_force, checked_scenario, publish


def cmd_crosscheck(a: argparse.Namespace) -> None:
    """``tenantnet crosscheck ns3 SCENARIO [--out DIR]``."""
    # deferred for start-up: loads numpy, pandas, pyarrow
    from ..crosscheck.ns3 import CrosscheckError, crosscheck, report
    try:
        table, s, flows = crosscheck(_scenario(a.scenario),
                                     progress=lambda m: print(m, file=sys.stderr, flush=True))
    except CrosscheckError as e:
        raise CliError(f"{a.scenario}: {e}") from None
    print(report(table, s))
    if a.out is not None:
        def write(d: Path) -> None:
            table.to_csv(d / "crosscheck.csv", index=False)
            flows.to_csv(d / "flows.csv", index=False)

        publish(a.out, write, f"tenantnet crosscheck ns3 {a.scenario}", a.force)


def add_command(cmd: Callable[..., Any]) -> None:
    """Registers ``crosscheck`` with the CLI's command factory."""
    p = cmd("crosscheck", cmd_crosscheck, "Run SCENARIO in tenantnet and in another "
            "simulator (ns-3: `pip install --no-deps ns3`) and compare flow completion "
            "times and loss recovery flow by flow.")
    p.add_argument("simulator", choices=["ns3"], help="the other simulator")
    p.add_argument("scenario", type=Path, metavar="SCENARIO",
                   help="a dumbbell scenario (one incast, or long flows left<i> to right<i>) or "
                   "a leaf_spine one (any sized TCP flows, replayed on tenantnet's paths)")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                   help="also write the table (crosscheck.csv) and every flow in both "
                        "simulators (flows.csv) into DIR")
    add_force(p)


def _scenario(path: Path) -> Any:
    """SCENARIO: one without a topology kind is checked as ``validate`` checks it (the
    core names what is missing); one with a kind the cross-check does not model is
    refused by the cross-check, naming the kind."""
    sc = Scenario.from_file(path)
    if not isinstance(sc.data().get("topology"), dict) or \
            sc.data()["topology"].get("kind") is None:
        checked_scenario(path)
    return sc
