"""``tenantnet deploy``: configuration that enforces a compared scheme on real equipment.

``deploy linux SCENARIO --host H --scheme S --dev DEV (--dry-run | --apply)`` prints or
sets the traffic control of host H's uplink for a host scheme
(:mod:`tenantnet.linux.tc`); for MBFQ, ``--apply`` then runs its agent
(:mod:`tenantnet.linux.emulation.agent`, the code an emulation runs) in the foreground.

``deploy sonic SCENARIO --scheme S -o DIR`` writes one SONiC config_db JSON per switch
of the scenario with the scheme's switch pieces applied (queues, scheduler, DSCP map,
ECN, buffers: :mod:`tenantnet.sonic.fabric`), each checked by the SONiC rule
validator (:func:`tenantnet.sonic.configdb.validate`) before anything is written. A scheme SONiC
cannot express is refused in one line saying why.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..linux.emulation.agent import Agent
from ..linux.tc import host_scheme, plan
from ..sonic.configdb import first_violation
from ..sonic.fabric import sonic_configs, write_config_dbs
from .tools import add_force, checked_scenario, fail, number_arg, publish


def publish_sonic(dbs: dict[str, dict[str, object]], out: Path, by: str, force: bool = False,
                  notes: list[str] | tuple[str, ...] = ()) -> None:
    """Validates every switch's config_db (the first violation fails the command, nothing
    written) and writes ``<switch>.json`` each, and ``NOTES.md`` if there are `notes`,
    into the folder `out` whole."""
    bad = first_violation(dbs)
    if bad:
        fail(bad)

    publish(out, lambda d: write_config_dbs(dbs, d, notes), by, force)


def cmd_sonic(a: argparse.Namespace) -> None:
    """Write the scheme's SONiC config_db per switch."""
    sc = checked_scenario(a.scenario)
    try:
        dbs, notes = sonic_configs(sc, a.scheme)
    except ValueError as e:
        text = str(e)
        what = f"scheme {a.scheme}" if a.scheme else "as it is"
        fail(text if text.startswith(f"{a.scenario}:") else f"{a.scenario}: {what}: "
             f"{text}")
    publish_sonic(dbs, a.out, "tenantnet deploy sonic", a.force, notes)
    print(f"{len(dbs)} switch configs for {a.scheme or 'the scenario as it is'} in "
          f"{a.out}/ (validated against the SONiC YANG rules)")
    for n in notes:
        print(f"note: {n}")


def cmd_linux(a: argparse.Namespace) -> None:
    """Print or apply a host scheme's tc configuration."""
    addrs: dict[str, str] = {}
    for item in a.addr:
        vm, sep, ip = item.partition("=")
        if not sep or not vm or not ip:
            fail(f"--addr {item}: expected VM=IPV4, e.g. --addr web/h0=10.0.0.2")
        addrs[vm] = ip
    sc = checked_scenario(a.scenario)
    scheme = a.scheme or host_scheme(sc.data())
    if a.seconds is not None and not (a.apply and scheme == "mbfq"):
        fail("--for applies to --apply under mbfq only (how long its agent runs)")
    p = plan(sc, a.scheme, a.host, a.dev, addrs)
    if not a.apply:
        print("\n".join(p.commands()))
        if scheme == "mbfq":
            print("# then MBFQ's agent sets each VM class's rate every macro-interval: "
                  "the same command with --apply instead of --dry-run runs it")
        return
    p.apply(a.netns)
    where = f" in {a.netns}" if a.netns else ""
    print(f"applied {scheme} on {a.dev}{where}: {len(p.vms)} VM classes", flush=True)
    if scheme == "mbfq":
        print(f"MBFQ's agent runs on {a.dev}{where}"
              + (f" for {a.seconds:g} s" if a.seconds else " until interrupted (Ctrl-C)"),
              flush=True)
        say = (lambda s: print(s, flush=True)) if a.verbose else None
        Agent(a.netns, p, p.mbfq, record=False, say=say).run_here(a.seconds)


def add_commands(deploy: argparse.ArgumentParser) -> None:
    """Adds ``sonic`` and ``linux`` under ``tenantnet deploy``."""
    fmt = argparse.RawDescriptionHelpFormatter
    sub = deploy.add_subparsers(metavar="TARGET", required=True)
    p = sub.add_parser(
        "sonic", help="Write each switch's SONiC config_db for a scheme's switch pieces.",
        description="Write each switch's SONiC config_db (queues, scheduler, DSCP map, "
        "ECN, buffers) for SCENARIO under a scheme, checked against the SONiC YANG "
        "rules; a scheme SONiC cannot express is refused, saying why.",
        formatter_class=fmt)
    p.add_argument("scenario", type=Path, metavar="SCENARIO", help="a scenario file")
    p.add_argument("--scheme", default=None, metavar="S",
                   help="the scheme (or combination joined with '+') whose switch pieces "
                        "to write, as `tenantnet schemes` lists them (default: the "
                        "scenario as it is, such as the recommended.json `tenantnet "
                        "advise` writes)")
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR",
                   help="folder for the configs (created, or replaced whole)")
    add_force(p)
    p.set_defaults(func=cmd_sonic)
    p = sub.add_parser(
        "linux", help="Print or apply a host scheme's traffic control for one host.",
        description="The tc configuration of host HOST's uplink under a host scheme "
        "(none: the NIC's bfifo; static: an HTB class per VM at its guarantee, by source "
        "address; mbfq: the same classes with MBFQ's agent setting their rates, run by "
        "--apply): printed as tc commands (--dry-run) or set over netlink (--apply, "
        "needs pyroute2: pip install 'tenantnet[linux]').", formatter_class=fmt)
    p.add_argument("scenario", type=Path, metavar="SCENARIO", help="a scenario file")
    p.add_argument("--host", required=True, help="the scenario's host to configure")
    p.add_argument("--scheme", default=None, choices=("none", "static", "mbfq"),
                   help="the host scheme (default: the scenario's own host policy with "
                        "its settings as they are, such as the recommended.json "
                        "`tenantnet advise` writes)")
    p.add_argument("--dev", required=True, help="the host's uplink network device")
    p.add_argument("--addr", action="append", default=[], metavar="VM=IPV4",
                   help="a VM's source address (one per VM of the host, for static and mbfq)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--dry-run", action="store_true", help="print the tc commands")
    how.add_argument("--apply", action="store_true", help="set the configuration")
    p.add_argument("--netns", default=None, metavar="NS",
                   help="with --apply: the network namespace DEV is in")
    p.add_argument("--for", dest="seconds", type=number_arg(0.001, 1e9), default=None,
                   metavar="SECONDS",
                   help="with --apply --scheme mbfq: run the agent this long (default: "
                        "until interrupted)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="with --scheme mbfq: print each of the agent's decisions")
    p.set_defaults(func=cmd_linux)
