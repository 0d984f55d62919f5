"""``tenantnet qshare``: place tenants, bind them to queues, emit SONiC config.

A placement folder holds ``state.json`` (the topology and the ordered requests,
which replay to exactly the same datacenter), ``tenants.csv`` and ``links.csv``;
``bind`` adds ``binding.json``; ``emit-sonic`` turns that into one config_db JSON
per switch. Every input is checked before anything is written.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import tomllib
from pathlib import Path
from typing import Any

from ..errors import is_whole
from ..jobs import progress
from ..jobs.outdir import add_to
from ..sim.qshare import FAT_TREE_16, Controller
from ..sonic.configdb import config_db
from .deploy import publish_sonic
from .tools import count_arg, fail, int_arg, number_arg, publish, read_text, seed_arg


def csv_rows(path: Path, columns: list[str]) -> list[tuple[int, dict[str, str]]]:
    """(line, row) of a CSV whose header has ``columns``; rows must be complete."""
    rows = list(csv.DictReader(io.StringIO(read_text(path))))
    out = []
    for i, r in enumerate(rows, start=2):
        missing = [c for c in columns if r.get(c) in (None, "")]
        if missing:
            fail(f"{path}: line {i}: no value for {', '.join(missing)}; expected columns "
                 f"{', '.join(columns)}")
        out.append((i, r))
    return out


def read_tenants(path: Path) -> list[tuple[int, int, float | None]]:
    """(vms, guarantee bit/s, ha) rows of a tenants CSV: vms, guarantee_mbps[, ha]."""
    expect = ("expected columns vms (a whole number, vms >= 1), guarantee_mbps (Mb/s, "
              "1e-6 <= guarantee_mbps <= 1e9) and optionally ha (0 <= ha < 1)")
    out = []
    for i, r in csv_rows(path, ["vms", "guarantee_mbps"]):
        try:
            n = int(r["vms"])
            b = float(r["guarantee_mbps"])
            ha = float(r["ha"]) if r.get("ha") not in (None, "") else None
        except ValueError:
            fail(f"{path}: line {i}: {dict(r)}: {expect}")
        bps = round(b * 1e6) if math.isfinite(b) else 0
        if n < 1 or not 1 <= bps <= 10**15 or (ha is not None and not 0 <= ha < 1):
            fail(f"{path}: line {i}: vms = {n}, guarantee_mbps = {b}, ha = {ha}: {expect}")
        out.append((n, bps, ha))
    return out


def load(folder: Path) -> Controller:
    """The controller a placement folder holds."""
    path = folder / "state.json"
    if not path.is_file():
        fail(f"{path}: not found; expected a folder written by `tenantnet qshare place`")
    try:
        state = json.loads(read_text(path))
    except ValueError as e:
        fail(f"{path}: not valid JSON: {e}")
    try:
        return Controller.from_state(state, source=str(path))
    except ValueError as e:
        fail(f"{path}: {e}")


def read_binding(folder: Path) -> dict[str, Any] | None:
    """``binding.json`` of the last control interval, if there is one."""
    path = folder / "binding.json"
    if not path.exists():
        return None
    try:
        b = json.loads(read_text(path))
    except ValueError as e:
        fail(f"{path}: not valid JSON: {e}")
    ok = (isinstance(b, dict) and isinstance(b.get("dedicated"), list)
          and all(is_whole(t, 0, 2**32 - 1) for t in b["dedicated"])
          and isinstance(b.get("ports"), list) and isinstance(b.get("dscp"), dict))
    if not ok:
        fail(f"{path}: expected what `tenantnet qshare bind` writes: an object with "
             "dedicated (a list of tenant ids), dscp and ports")
    return dict(b)


def write_tables(c: Controller, out: Path) -> None:
    with (out / "tenants.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "vms", "guarantee_mbps", "layer", "path_rank", "root", "servers",
                    "reserved_mbps", "cq"])
        for tid, t in sorted(c.tenants().items()):
            w.writerow([tid, t["vms"], max(t["guarantee_bps"]) / 1e6, t["layer"], t["rank"],
                        t["root"], " ".join(f"{s}:{k}" for s, k in t["servers"]),
                        t["cb"] / 1e6, t["cq"]])
    with (out / "links.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["link", "upper", "lower", "capacity_gbps", "reserved_gbps", "tenants"])
        for i, (u, lo, cap, res, n) in enumerate(c.links()):
            w.writerow([i, u, lo, cap / 1e9, res / 1e9, n])


def topology_of(a: argparse.Namespace) -> dict[str, Any]:
    if a.topology is None:
        return FAT_TREE_16 | {"k": a.k, "oversubscription": a.oversubscription,
                              "link_rate": a.link_rate, "fabric_rate": a.fabric_rate}
    try:
        doc = tomllib.loads(read_text(a.topology))
    except tomllib.TOMLDecodeError as e:
        fail(f"{a.topology}: not valid TOML: {e}")
    topo = doc.get("topology")
    if not isinstance(topo, dict):
        fail(f"{a.topology}: expected a [topology] table")
    try:
        json.dumps(topo)
    except TypeError as e:
        fail(f"{a.topology}: topology holds a value that is not a string, number, boolean, "
             f"list or table ({e})")
    return topo


def cmd_place(a: argparse.Namespace) -> None:
    """Embed tenants (Algorithm 1) and write the placement."""
    if (a.tenants is None) == (a.fill is None):
        fail("give either --tenants FILE or --fill SEED")
    reqs = read_tenants(a.tenants) if a.tenants is not None else []
    try:
        c = Controller(topology_of(a), slots=a.slots, strategy=a.strategy,
                       cq_weight=a.cq_weight, k_paths=a.k_paths,
                       source=str(a.topology) if a.topology else "options")
    except ValueError as e:
        fail(str(e))
    rejected = 0
    with progress.showing(not a.quiet):
        if a.tenants is not None:
            for i, (n, b, f) in enumerate(reqs, start=1):
                progress.step(f"placing tenant {i}/{len(reqs)}")
                rejected += c.place_homogeneous(n, b, f) is None
        else:
            progress.step(f"filling {c.describe()} with random tenants (seed {a.fill})")
            rejected = c.fill(a.fill, ha=a.ha)["rejected"]

        def write(d: Path) -> None:
            c.save(d / "state.json")
            write_tables(c, d)
        publish(a.out, write, "tenantnet qshare place")
    print(f"{len(c.tenants())} tenants placed, {rejected} rejected; {a.out}/state.json, "
          "tenants.csv, links.csv")


def read_usage(path: Path, c: Controller) -> dict[int, list[tuple[str, float, float]]]:
    """Per tenant: (server, inbound bit/s, outbound bit/s) rows of a usage CSV."""
    known = c.tenants()
    per: dict[int, list[tuple[str, float, float]]] = {}
    cols = ["tenant", "server", "inbound_bps", "outbound_bps"]
    for i, r in csv_rows(path, cols):
        try:
            tid, inb, outb = int(r["tenant"]), float(r["inbound_bps"]), float(r["outbound_bps"])
        except ValueError:
            fail(f"{path}: line {i}: {dict(r)}: expected a tenant id and two rates in bit/s")
        if tid not in known:
            fail(f"{path}: line {i}: tenant {tid} is not placed; expected one of "
                 f"{sorted(known)[:10]}{' …' if len(known) > 10 else ''}")
        if not (math.isfinite(inb) and math.isfinite(outb) and inb >= 0 and outb >= 0):
            fail(f"{path}: line {i}: inbound_bps = {inb}, outbound_bps = {outb}: expected "
                 "finite rates >= 0")
        per.setdefault(tid, []).append((r["server"], inb, outb))
    return per


def cmd_bind(a: argparse.Namespace) -> None:
    """Bind tenants to queues for one control interval (Algorithm 2)."""
    c = load(a.folder)
    ts = c.tenants()
    per = read_usage(a.usage, c) if a.usage is not None else None
    try:
        scores = {tid: c.score(tid, per.get(tid, []) if per is not None else None, a.k)
                  for tid in ts}
    except ValueError as e:
        fail(f"{a.usage}: {e}")
    prev = read_binding(a.folder)
    held = [t for t in (prev["dedicated"] if prev else []) if t in ts]
    b = c.bind(scores, held, a.seed, a.max_weight)
    b["max_weight"] = a.max_weight
    b["scores"] = scores
    add_to(a.folder, lambda d: (d / "binding.json").write_text(
        json.dumps(b, indent=1) + "\n", encoding="utf-8"), "tenantnet qshare bind")
    print(f"{len(b['dedicated'])} of {len(ts)} tenants hold dedicated queues; "
          f"DSCP values up to {max(b['dscp'].values(), default=0)}; {a.folder}/binding.json")


def cmd_emit_sonic(a: argparse.Namespace) -> None:
    """Write each switch's SONiC config_db QoS tables for the binding."""
    c = load(a.folder)
    b = read_binding(a.folder)
    if b is None:
        fail(f"{a.folder / 'binding.json'}: not found; run `tenantnet qshare bind "
             f"{a.folder}` first")
    mw = b.get("max_weight", 100)
    if not isinstance(mw, int) or not 1 <= mw <= 100:
        fail(f"{a.folder / 'binding.json'}: max_weight = {mw}: SONiC DWRR weights are 1-100")
    servers = set(c.servers())
    try:
        dbs = config_db(c.switch_ports(b))
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, AttributeError) as e:
        fail(f"{a.folder / 'binding.json'}: does not match state.json ({e!r}); bind again")
    publish_sonic(dbs, a.out, "tenantnet qshare emit-sonic")
    switches = len({n for link in c.links() for n in link[:2] if n not in servers})
    print(f"{len(dbs)} switch configs in {a.out}/ (validated against the SONiC YANG rules); "
          f"the other {switches - len(dbs)} switches carry no tenant and need no QoS change")


def add_commands(qs: argparse.ArgumentParser) -> None:
    """Adds place, bind and emit-sonic under ``tenantnet qshare``."""
    fmt = argparse.RawDescriptionHelpFormatter
    sub = qs.add_subparsers(metavar="COMMAND", required=True)
    p = sub.add_parser("place", help="Embed tenants (Algorithm 1) and write the placement.",
                       description="Embed tenants (Algorithm 1) and write the placement: "
                       "state.json, tenants.csv, links.csv.", formatter_class=fmt)
    p.set_defaults(func=cmd_place)
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR",
                   help="folder for the placement")
    p.add_argument("--k", type=count_arg, default=16, help="fat-tree radix (default 16)")
    p.add_argument("--oversubscription", type=count_arg, default=1, metavar="R",
                   help="core oversubscription R:1 (default 1)")
    p.add_argument("--slots", type=count_arg, default=100, metavar="N",
                   help="VM slots per server (default 100)")
    p.add_argument("--link-rate", default="10Gbps", metavar="RATE",
                   help="server link rate (default 10Gbps)")
    p.add_argument("--fabric-rate", default="40Gbps", metavar="RATE",
                   help="switch link rate (default 40Gbps)")
    p.add_argument("--strategy", choices=["balanced", "greedy"], default="balanced",
                   help="balanced (Algorithm 1, default) or greedy")
    p.add_argument("--cq-weight", type=number_arg(0, 1), default=0.5, metavar="W",
                   help="weight of c_q in the election, 0 to 1 (default 0.5)")
    p.add_argument("--k-paths", type=int_arg(1, 16), default=3, metavar="K",
                   help="random topologies: path ranks (k shortest paths) explored per "
                        "level, 1 to 16 (default 3)")
    p.add_argument("--tenants", type=Path, metavar="CSV",
                   help="requests: columns vms, guarantee_mbps[, ha]")
    p.add_argument("--fill", type=seed_arg, metavar="SEED",
                   help="instead: fill with §7.3's random tenants from this seed")
    p.add_argument("--ha", type=number_arg(0, 1, hi_open=True), metavar="F",
                   help="HA survival ratio f for --fill, 0 <= f < 1")
    p.add_argument("--topology", type=Path, metavar="FILE",
                   help="a TOML file whose [topology] table (any kind, e.g. jellyfish or "
                        "graph) replaces the fat-tree options")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p = sub.add_parser("bind", help="Bind tenants to queues for one control interval "
                       "(Algorithm 2).", description="Bind tenants to queues for one control "
                       "interval (Algorithm 2); writes DIR/binding.json.", formatter_class=fmt)
    p.set_defaults(func=cmd_bind)
    p.add_argument("folder", type=Path, metavar="DIR", help="a folder `qshare place` wrote")
    p.add_argument("--usage", type=Path, metavar="CSV",
                   help="columns tenant, server, inbound_bps, outbound_bps (absent: every "
                        "tenant at U = 1)")
    p.add_argument("--k", type=number_arg(0, 1e18, lo_open=True), default=1.0,
                   help="pricing constant k of Eq. 2, > 0 (default 1)")
    p.add_argument("--max-weight", type=count_arg, default=100, metavar="W",
                   help="weight range 1-W: 15 (paper), 100 (SONiC, default)")
    p.add_argument("--seed", type=seed_arg, default=1, help="seed of tie-breaking (default 1)")
    p = sub.add_parser("emit-sonic", help="Write each switch's SONiC config_db QoS tables.",
                       description="Write each switch's SONiC config_db QoS tables for the "
                       "binding, checked against the SONiC YANG rules.", formatter_class=fmt)
    p.set_defaults(func=cmd_emit_sonic)
    p.add_argument("folder", type=Path, metavar="DIR",
                   help="a folder with state.json and binding.json")
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR",
                   help="folder for <switch>.json files")
