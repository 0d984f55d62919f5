"""``tenantnet emulate``: the command-line side of :mod:`tenantnet.linux.emulation`.

``tenantnet emulate SCENARIO -o DIR [--scheme S] [--scale X]`` runs the scenario on
this machine's Linux networking and writes the emulated run's tables (as ``tenantnet
run`` does), its twin simulation's (``DIR/simulated``), ``rates.csv`` and ``fcts.csv``
(the two side by side) and ``report.html``; ``tenantnet emulate --cleanup`` removes
what a run that was killed left behind.
"""

from __future__ import annotations

import argparse
import html
import math
from pathlib import Path
from typing import TYPE_CHECKING

from ..jobs import progress
from ..linux import lab as linux_lab
from ..linux.emulation.kinds import DEFAULT_WIRE, POLICIES, VM_STACKS, Wire
from ..sim.scenario import Scenario
from .tools import add_force, check_out, fail, number_arg, publish, seed_arg

if TYPE_CHECKING:
    from ..linux.emulation.fidelity import Fidelity


def _table(df: object, cols: list[str], heads: list[str]) -> list[str]:
    # deferred for start-up: loads pandas
    import pandas as pd
    assert isinstance(df, pd.DataFrame)

    def cell(v: object) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.3f}"
        return str(v)
    rows = [[cell(r[c]) for c in cols] for _, r in df.iterrows()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(heads)]
    out = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]
    return out


def _diffs(df: object) -> object:
    # deferred for start-up: loads pandas
    import pandas as pd
    assert isinstance(df, pd.DataFrame)
    out = df.copy()
    out["diff"] = [f"{d:+.1f} %" if not math.isnan(d) else "" for d in
                   out["diff_pct"].astype(float)]
    return out


def print_side(rates: object, fcts: object) -> None:
    """The side-by-side tables on the terminal: per VM, per tenant, the FCTs."""
    # deferred for start-up: loads numpy, pandas, pyarrow
    import pandas as pd

    from ..linux.emulation.side import tenant_rates
    assert isinstance(rates, pd.DataFrame) and isinstance(fcts, pd.DataFrame)
    heads = ["simulated Gb/s", "emulated Gb/s", "emulated vs"]
    for line in _table(_diffs(rates), ["phase", "vm", "simulated_gbps", "emulated_gbps",
                                       "diff"], ["phase", "VM", *heads]):
        print(line)
    print()
    for line in _table(_diffs(tenant_rates(rates)), ["phase", "tenant", "simulated_gbps",
                                                     "emulated_gbps", "diff"],
                       ["phase", "tenant", *heads]):
        print(line)
    if len(fcts):
        print()
        for line in _table(fcts, ["tenant", "simulated_finished", "simulated_p50_ms",
                                  "emulated_finished", "emulated_p50_ms"],
                           ["tenant", "simulated", "FCT p50 (ms)", "emulated",
                            "FCT p50 (ms)"]):
            print(line)


def fidelity_html(f: Fidelity) -> str:
    """The run's fidelity for the report: the verdict, then the measures."""
    cls = "ok" if f.trusted else "warn"
    return (f'<h2>Can this run be trusted?</h2><p class="{cls}">{html.escape(f.verdict)}</p>'
            "<pre>" + "\n".join(html.escape(m) for m in f.measures()) + "</pre>")


def cmd_emulate(a: argparse.Namespace) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..linux.emulation import run as emu
    if a.cleanup:
        gone = linux_lab.cleanup(f"{linux_lab.PREFIX}{emu.TAG}-")
        print(f"removed {len(gone)} namespaces" + (f": {', '.join(gone)}" if gone else ""))
        return
    if a.scenario is None or a.out is None:
        fail("tenantnet emulate: give SCENARIO and -o DIR (or --cleanup)")
    # deferred for start-up: loads numpy, pandas, pyarrow
    from ..linux.emulation.side import fcts, rates
    check_out(a.out, a.force)
    why = linux_lab.why_not()
    if why:
        fail(f"tenantnet emulate needs network namespaces: {why}")
    sc = Scenario.from_file(a.scenario)
    with progress.showing(not a.quiet):
        e = emu.emulate(sc, a.scheme, None, a.scale, a.seed, progress.step, a.vm_stack,
                        wire_of(a))
        side, done = rates(e.emulated, e.simulated), fcts(e.emulated, e.simulated)

        def write(d: Path) -> None:
            emu.write(e, d)
            side.to_csv(d / "rates.csv", index=False)
            done.to_csv(d / "fcts.csv", index=False)
            # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
            from ..report.runs import write_report
            write_report({"emulated": e.emulated, "simulated": e.simulated},
                         d / "report.html", f"tenantnet emulate: {sc.data().get('name', '')}"
                         f" under {e.scheme} at scale {e.scale:g}",
                         extra=fidelity_html(e.fidelity))
        progress.step("writing results")
        publish(a.out, write, "tenantnet emulate", a.force)
    print(f"{e.scheme} emulated at scale {e.scale:g} ({e.transport}); beside the "
          "simulator's run of the same scaled scenario:")
    print_side(side, done)
    print()
    for line in e.fidelity.lines():
        print(line)
    print(f"results in {a.out}/ (the simulator's in {a.out / 'simulated'}/)")


def add_wire(p: argparse.ArgumentParser, default: Wire = DEFAULT_WIRE, why: str =
             "as `deploy linux` writes") -> None:
    """``--burst`` and ``--no-tso``: how the hosts put packets on the emulated wire
    (`default` and `why` in the help)."""
    p.add_argument("--burst", type=number_arg(1, 100_000), default=None, metavar="US",
                   help="every HTB class's burst, in microseconds at its rate (default "
                        f"{default.burst_s * 1e6:g}, {why}): a flow that starts on an "
                        "idle link sends that long's worth at once")
    p.add_argument("--no-tso", action="store_true",
                   help="the hosts' NICs cut TCP's offload packets into segments before "
                        "the switches, as a real NIC does (default: a veth passes them on "
                        "whole, up to 8 segments); the CPUs forward 8x the packets")


def wire_of(a: argparse.Namespace, default: Wire = DEFAULT_WIRE) -> Wire:
    """The :class:`Wire` the options ask for, `default`'s burst where none is given."""
    burst = default.burst_s if a.burst is None else round(a.burst) * 1e-6
    return Wire(burst_s=burst, tso=not a.no_tso)


def add_command(cmd: object) -> None:
    """Adds ``emulate`` to the top-level parser through `cmd`."""
    assert callable(cmd)
    p = cmd("emulate", cmd_emulate,
            "Run SCENARIO on this machine's Linux networking (network namespaces, veth "
            "links, HTB rates, the kernel's TCP) under a host scheme, beside the "
            "simulator's run of the same scaled scenario; the same tables as `run` "
            "writes, and the two side by side. Needs root.",
            "Rates are scaled (--scale) so that the CPUs are never the bottleneck; "
            "`tenantnet emulate --cleanup` removes the namespaces a killed run left.")
    p.add_argument("scenario", nargs="?", type=Path, default=None, metavar="SCENARIO",
                   help="scenario file (.toml, or .json)")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                   help="folder for the results (created, or replaced whole)")
    p.add_argument("--scheme", choices=POLICIES, default=None,
                   help="the host scheme (default: the scenario's vswitch.policy)")
    p.add_argument("--scale", type=number_arg(1e-6, 1), default=None, metavar="X",
                   help="multiply every rate by X (default: the fastest host NIC at "
                        "1 Gb/s)")
    p.add_argument("--seed", type=seed_arg, metavar="N",
                   help="the seed (default the scenario's simulation.seed)")
    p.add_argument("--vm-stack", choices=VM_STACKS, default="host",
                   help="where a VM's sockets live: its host's namespace (default; a full "
                        "class holds its TCP back) or a namespace of its own behind a veth "
                        "(a full class drops its packets)")
    add_wire(p)
    p.add_argument("--cleanup", action="store_true",
                   help="remove the namespaces emulations left behind, and stop")
    add_force(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
