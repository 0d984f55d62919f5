"""``tenantnet qshare``: place tenants, bind them to queues, emit SONiC config.

A placement folder holds ``state.json`` (the topology and the ordered requests,
which replay to exactly the same datacenter), ``tenants.csv`` and ``links.csv``;
``bind`` adds ``binding.json``; ``emit-sonic`` turns that into one config_db JSON
per switch.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Annotated

import typer

from .qshare import FAT_TREE_16, Controller
from .sonic import config_db, validate

app = typer.Typer(no_args_is_help=True, help="QShare's controller: placement, queue binding, "
                  "switch configuration.")


def _die(msg: str) -> typer.Exit:
    typer.echo(f"error: {msg}", err=True)
    return typer.Exit(code=2)


def _read_tenants(path: Path) -> list[tuple[int, int, float | None]]:
    """(vms, guarantee bit/s, ha) rows of a tenants CSV: vms, guarantee_mbps[, ha]."""
    try:
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
    except OSError as e:
        raise _die(f"{path}: cannot read: {e.strerror}") from None
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            n = int(r["vms"])
            b = float(r["guarantee_mbps"])
            ha = float(r["ha"]) if r.get("ha") not in (None, "") else None
        except (KeyError, ValueError, TypeError):
            raise _die(f"{path}: line {i}: {r}: expected columns vms (an integer), "
                       "guarantee_mbps (a number) and optionally ha (0 <= f < 1)") from None
        if n < 1 or b <= 0 or (ha is not None and not 0 <= ha < 1):
            raise _die(f"{path}: line {i}: vms = {n}, guarantee_mbps = {b}, ha = {ha}: "
                       "expected vms >= 1, guarantee_mbps > 0, 0 <= ha < 1")
        out.append((n, round(b * 1e6), ha))
    return out


def _load(folder: Path) -> Controller:
    path = folder / "state.json"
    if not path.is_file():
        raise _die(f"{path}: not found; expected a folder written by `tenantnet qshare place`")
    try:
        return Controller.load(path)
    except (ValueError, KeyError) as e:
        raise _die(f"{path}: {e}") from None


def _write_tables(c: Controller, out: Path) -> None:
    with (out / "tenants.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "vms", "guarantee_mbps", "layer", "path_rank", "root", "servers",
                    "reserved_mbps",
                    "cq"])
        for tid, t in sorted(c.tenants().items()):
            w.writerow([tid, t["vms"], max(t["guarantee_bps"]) / 1e6, t["layer"], t["rank"],
                        t["root"],
                        " ".join(f"{s}:{k}" for s, k in t["servers"]), t["cb"] / 1e6, t["cq"]])
    with (out / "links.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["link", "upper", "lower", "capacity_gbps", "reserved_gbps", "tenants"])
        for i, (u, lo, cap, res, n) in enumerate(c.links()):
            w.writerow([i, u, lo, cap / 1e9, res / 1e9, n])


@app.command()
def place(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the placement.")],
    k: Annotated[int, typer.Option(help="Fat-tree radix.")] = 16,
    oversubscription: Annotated[int, typer.Option(help="Core oversubscription r:1.")] = 1,
    slots: Annotated[int, typer.Option(help="VM slots per server.")] = 100,
    link_rate: Annotated[str, typer.Option(help="Server link rate.")] = "10Gbps",
    fabric_rate: Annotated[str, typer.Option(help="Switch link rate.")] = "40Gbps",
    strategy: Annotated[str, typer.Option(help="balanced (Algorithm 1) or greedy.")] = "balanced",
    cq_weight: Annotated[float, typer.Option(help="Weight of c_q in the election.")] = 0.5,
    k_paths: Annotated[int, typer.Option(
        help="Random topologies: path ranks (k shortest paths) explored per level.")] = 3,
    tenants: Annotated[Path | None, typer.Option(
        help="CSV of requests: vms, guarantee_mbps[, ha].")] = None,
    fill: Annotated[int | None, typer.Option(
        help="Instead: fill with §7.3's random tenants from this seed.")] = None,
    ha: Annotated[float | None, typer.Option(help="HA survival ratio f for --fill.")] = None,
    topology: Annotated[Path | None, typer.Option(
        help="A TOML file whose [topology] table (any kind, e.g. jellyfish or graph) replaces the "
             "fat-tree options.")] = None,
) -> None:
    """Embed tenants (Algorithm 1) and write the placement."""
    if (tenants is None) == (fill is None):
        raise _die("give either --tenants FILE or --fill SEED")
    topo = FAT_TREE_16 | {"k": k, "oversubscription": oversubscription, "link_rate": link_rate,
                          "fabric_rate": fabric_rate}
    if topology is not None:
        import tomllib
        try:
            topo = tomllib.loads(topology.read_text(encoding="utf-8"))["topology"]
        except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
            raise _die(f"{topology}: expected a TOML file with a [topology] table ({e})") from None
    try:
        c = Controller(topo, slots=slots, strategy=strategy, cq_weight=cq_weight,
                       k_paths=k_paths,
                       source=str(topology) if topology else "options")
    except ValueError as e:
        raise _die(str(e)) from None
    rejected = 0
    if tenants is not None:
        reqs = _read_tenants(tenants)
        for n, b, f in reqs:
            rejected += c.place([b] * n, f) is None
    else:
        rejected = c.fill(fill or 0, ha=ha)["rejected"]
    out.mkdir(parents=True, exist_ok=True)
    c.save(out / "state.json")
    _write_tables(c, out)
    typer.echo(f"{len(c.tenants())} tenants placed, {rejected} rejected; {out}/state.json, "
               "tenants.csv, links.csv")


@app.command()
def bind(
    folder: Annotated[Path, typer.Argument(help="A folder `qshare place` wrote.")],
    usage: Annotated[Path | None, typer.Option(
        help="CSV: tenant, server, inbound_bps, outbound_bps (absent: every tenant at U = 1).")
    ] = None,
    k_price: Annotated[float, typer.Option("--k", help="Pricing constant k of Eq. 2.")] = 1.0,
    max_weight: Annotated[int, typer.Option(help="Weight range: 15 (paper), 100 (SONiC).")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of tie-breaking.")] = 1,
) -> None:
    """Bind tenants to queues for one control interval (Algorithm 2)."""
    c = _load(folder)
    ts = c.tenants()
    per: dict[int, list[tuple[str, float, float]]] = {}
    if usage is not None:
        try:
            for r in csv.DictReader(usage.open(encoding="utf-8")):
                per.setdefault(int(r["tenant"]), []).append(
                    (r["server"], float(r["inbound_bps"]), float(r["outbound_bps"])))
        except (OSError, KeyError, ValueError):
            raise _die(f"{usage}: expected a CSV with columns tenant, server, inbound_bps, "
                       "outbound_bps") from None
    try:
        scores = {tid: c.score(tid, per.get(tid, []) if usage is not None else None, k_price)
                  for tid in ts}
    except ValueError as e:
        raise _die(f"{usage}: {e}") from None
    prev = folder / "binding.json"
    held = json.loads(prev.read_text())["dedicated"] if prev.is_file() else []
    b = c.bind(scores, held, seed, max_weight)
    b["max_weight"] = max_weight
    b["scores"] = scores
    prev.write_text(json.dumps(b, indent=1) + "\n", encoding="utf-8")
    typer.echo(f"{len(b['dedicated'])} of {len(ts)} tenants hold dedicated queues; "
               f"DSCP values up to {max(b['dscp'].values(), default=0)}; {prev}")


@app.command("emit-sonic")
def emit_sonic(
    folder: Annotated[Path, typer.Argument(help="A folder with state.json and binding.json.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for <switch>.json files.")],
) -> None:
    """Write each switch's SONiC config_db QoS tables for the binding."""
    c = _load(folder)
    path = folder / "binding.json"
    if not path.is_file():
        raise _die(f"{path}: not found; run `tenantnet qshare bind {folder}` first")
    b = json.loads(path.read_text())
    if b.get("max_weight", 100) > 100:
        raise _die(f"{path}: max_weight = {b['max_weight']}: SONiC DWRR weights are 1-100")
    servers = set(c.core.servers())
    dbs = config_db(b, c.links(), servers)
    problems = {sw: validate(db) for sw, db in dbs.items()}
    bad = {sw: e for sw, e in problems.items() if e}
    if bad:
        sw, errs = next(iter(bad.items()))
        raise _die(f"{sw}: {len(errs)} SONiC rule violations, first: {errs[0]}")
    out.mkdir(parents=True, exist_ok=True)
    for sw, db in sorted(dbs.items()):
        (out / f"{sw}.json").write_text(json.dumps(db, indent=1, sort_keys=True) + "\n",
                                        encoding="utf-8")
    typer.echo(f"{len(dbs)} switch configs in {out}/ (validated against the SONiC YANG rules)")
