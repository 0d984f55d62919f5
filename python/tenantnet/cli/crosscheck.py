"""The ``crosscheck`` command: :mod:`tenantnet.crosscheck.ns3` against ns-3,
:mod:`tenantnet.crosscheck.linux` against this machine's kernel (imported when the
command runs: building the parser loads no pandas)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..jobs import progress
from ..linux import lab as linux_lab
from ..linux.emulation.kinds import CROSSCHECK_WIRE
from ..sim.scenario import Scenario
from .emulate import add_wire, wire_of
from .tools import (
    CliError,
    add_force,
    check_out,
    checked_scenario,
    count_arg,
    fail,
    number_arg,
    publish,
)


def cmd_crosscheck(a: argparse.Namespace) -> None:
    """``tenantnet crosscheck ns3 SCENARIO`` or ``tenantnet crosscheck linux
    [SCENARIO ...]`` ``[--out DIR]``."""
    if a.simulator == "linux":
        if a.ns3_as_released:
            fail("--ns3-as-released is for `crosscheck ns3`")
        crosscheck_linux(a)
        return
    if len(a.scenario) != 1:
        fail("tenantnet crosscheck ns3: give one SCENARIO")
    if a.repeats is not None or a.scale is not None or a.burst is not None or a.no_tso:
        fail("--repeats, --scale, --burst and --no-tso are for `crosscheck linux`")
    # deferred for start-up: loads numpy, pandas, pyarrow
    from ..crosscheck.ns3 import CrosscheckError, crosscheck, report
    path = a.scenario[0]
    try:
        table, s, flows = crosscheck(_scenario(path),
                                     progress=lambda m: print(m, file=sys.stderr, flush=True),
                                     upstream_fixes=not a.ns3_as_released)
    except CrosscheckError as e:
        raise CliError(f"{path}: {e}") from None
    print(report(table, s))
    if a.out is not None:
        def write(d: Path) -> None:
            table.to_csv(d / "crosscheck.csv", index=False)
            flows.to_csv(d / "flows.csv", index=False)

        publish(a.out, write, f"tenantnet crosscheck ns3 {path}", a.force)


def crosscheck_linux(a: argparse.Namespace) -> None:
    """``tenantnet crosscheck linux``: every scenario (the built-in cases when none is
    given) emulated `--repeats` times beside the simulator."""
    # deferred for start-up: loads numpy, pandas, pyarrow
    from ..crosscheck import linux as xl
    if a.out is not None:
        check_out(a.out, a.force)
    xl.check_repeats(a.repeats or xl.REPEATS)
    for p in a.scenario:
        checked_scenario(p)
    why = linux_lab.why_not()
    if why:
        fail(f"tenantnet crosscheck linux needs network namespaces: {why}")
    with progress.showing(not a.quiet):
        cases = xl.crosscheck_linux(list(a.scenario), a.repeats or xl.REPEATS, a.scale,
                                    progress.step, wire_of(a, CROSSCHECK_WIRE))
        table, flows = xl.table(cases), xl.every_flow(cases)
        if a.out is not None:
            def write(d: Path) -> None:
                table.to_csv(d / "crosscheck.csv", index=False)
                flows.to_csv(d / "flows.csv", index=False)
                xl.plot(cases, d / "fct.png")

            progress.step("writing results")
            publish(a.out, write, "tenantnet crosscheck linux", a.force)
    print(xl.report(table))
    if a.out is not None:
        print(f"results in {a.out}/: crosscheck.csv, flows.csv (every flow of every "
              "repeat), fct.png")


def add_command(cmd: Callable[..., Any]) -> None:
    """Registers ``crosscheck`` with the CLI's command factory."""
    p = cmd("crosscheck", cmd_crosscheck, "Run SCENARIO in tenantnet and in another "
            "simulator (ns-3: `pip install --no-deps ns3`) or on this machine's kernel "
            "(linux: emulated in network namespaces, needs root), and compare flow "
            "completion times and loss recovery flow by flow.")
    p.add_argument("simulator", choices=["ns3", "linux"],
                   help="what to check against: ns-3, or the Linux kernel")
    p.add_argument("scenario", type=Path, metavar="SCENARIO", nargs="*",
                   help="ns3: a dumbbell scenario (one incast, or long flows left<i> to "
                   "right<i>) or a leaf_spine or star one (any sized TCP flows, replayed "
                   "on tenantnet's paths); linux: any scenarios `tenantnet emulate` runs "
                   "(default: the built-in cases: incasts, long flows, leaf-spines)")
    p.set_defaults(intermixed="scenario")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                   help="also write the table (crosscheck.csv) and every flow on both "
                        "sides (flows.csv) into DIR; linux adds the FCTs' plot (fct.png)")
    p.add_argument("--repeats", type=count_arg, default=None, metavar="N",
                   help="linux: emulations per scenario, whose spread is the yardstick "
                        "(default 5, at least 2)")
    p.add_argument("--scale", type=number_arg(1e-6, 1), default=None, metavar="X",
                   help="linux: multiply every rate by X (default: the fastest host NIC "
                        "at 1 Gb/s, as `emulate`)")
    p.add_argument("--ns3-as-released", action="store_true",
                   help="ns3: run ns-3 3.44's SACK recovery as released, without the four "
                   "fixes its development tree made since (ns-3 #1190, #1282, #1350, #1351), "
                   "which the cross-check applies by default")
    add_wire(p, CROSSCHECK_WIRE, "for linux: about one offload packet at 1 Gb/s")
    add_force(p)
    p.add_argument("-q", "--quiet", action="store_true",
                   help="linux: no progress display")


def _scenario(path: Path) -> Any:
    """SCENARIO: one without a topology kind is checked as ``validate`` checks it (the
    core names what is missing); one with a kind the cross-check does not model is
    refused by the cross-check, naming the kind."""
    sc = Scenario.from_file(path)
    if not isinstance(sc.data().get("topology"), dict) or \
            sc.data()["topology"].get("kind") is None:
        checked_scenario(path)
    return sc
