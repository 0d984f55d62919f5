"""The documentation's table of every claim (docs/guide/claims.md), refreshed:

    python scripts/claims_table.py --run DIR     # every reproduction into DIR/<name>,
                                                 # then the tables and the page
    python scripts/claims_table.py --from DIR    # the same from runs already in DIR
    python scripts/claims_table.py --check       # exit 1 if the page is not what the
                                                 # stored tables give

Each reproduction's ``*_vs_paper.csv`` is copied into ``docs/claims/`` and the page is
rendered from those copies and the catalog of the papers' figures and tables
(``tenantnet.reproduce.catalog``). ``--run`` runs every reproduction once (about 20
minutes on 2 cores; the longest are barberq-fig3, -fig4 and qshare-fig8, a few
minutes each), in the order of the catalog, with a line on stderr for each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tenantnet.reproduce.catalog import ITEMS
from tenantnet.reproduce.claims_page import csv_name, render

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "claims"
PAGE = ROOT / "docs" / "guide" / "claims.md"


def names() -> list[str]:
    """Every reproduction the catalog names, once, in its order."""
    return list(dict.fromkeys(n for i in ITEMS for n in i.reproductions))


def run_all(out: Path) -> None:
    """Runs every reproduction into `out`/<name>."""
    todo = names()
    for k, name in enumerate(todo, 1):
        t0 = time.monotonic()
        print(f"[{k}/{len(todo)}] tenantnet reproduce {name} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "tenantnet", "reproduce", name, "--out", str(out / name),
               "--force", "-q"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
        print(f"[{k}/{len(todo)}] {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr)


def copy_from(runs: Path) -> None:
    """Copies every reproduction's comparison from `runs`/<name> into docs/claims."""
    missing = [n for n in names() if not (runs / n / csv_name(n)).is_file()]
    if missing:
        raise SystemExit(f"{runs}: no comparison for {', '.join(missing)} "
                         f"(expected {runs}/<name>/<name>_vs_paper.csv; run with --run)")
    STORED.mkdir(parents=True, exist_ok=True)
    for n in names():
        shutil.copyfile(runs / n / csv_name(n), STORED / csv_name(n))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--run", type=Path, metavar="DIR", help="run every reproduction into DIR")
    g.add_argument("--from", dest="runs", type=Path, metavar="DIR",
                   help="take the comparisons of runs already in DIR/<name>")
    g.add_argument("--check", action="store_true",
                   help="exit 1 if the page is not what the stored tables give")
    a = p.parse_args(argv)
    if a.check:
        if PAGE.read_text(encoding="utf-8") != render(STORED):
            print(f"{PAGE} is out of date: run python scripts/claims_table.py --from DIR",
                  file=sys.stderr)
            return 1
        return 0
    runs = a.run or a.runs
    if a.run:
        run_all(runs)
    copy_from(runs)
    PAGE.write_text(render(STORED), encoding="utf-8")
    print(f"wrote {PAGE} and {len(names())} tables in {STORED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
