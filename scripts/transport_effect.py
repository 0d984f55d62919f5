"""Runs reproductions under their default transport and under another profile (or the
other rule for simultaneous events) and tabulates the effect on their claims (each
reproduction's ``*_vs_paper.csv``).

    python scripts/transport_effect.py --profile linux --out DIR [NAME ...]
    python scripts/transport_effect.py --ties partitioned --out DIR [NAME ...]

With no NAME, every reproduction that takes ``--transport`` (all but those that
already report both profiles). Writes ``DIR/<name>/<profile>/`` for each run and
prints one Markdown row per reproduction: the claims held under each transport, and
every claim whose verdict changed with both values. The docs' table comes from it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from tenantnet.reproduce import BOTH_PROFILES, REPRODUCTIONS
from tenantnet.reproduce.claims_page import label, read


def claims(folder: Path) -> dict[str, tuple[str, str]]:
    """Each claim of the run in `folder`, named by its file and its label (the key
    columns but the transport, which differs between the runs, and the claim): (ours,
    ok)."""
    out: dict[str, tuple[str, str]] = {}
    for f in sorted(folder.glob("*_vs_paper.csv")):
        for row in read(f):
            row.pop("transport", None)
            out[f"{f.stem}: {label(row)}"] = (row["ours"], row["ok"])
    return out


def run(name: str, options: list[str], out: Path) -> None:
    """Runs one reproduction with `options`, its files kept in `out`."""
    cmd = [sys.executable, "-m", "tenantnet", "reproduce", name, "--out", str(out),
           "--force", "-q", *options]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")


def held(c: dict[str, tuple[str, str]]) -> str:
    return f"{sum(ok == 'True' for _, ok in c.values())} of {len(c)}"


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="linux", choices=("htsim", "linux"))
    p.add_argument("--ties", choices=("partitioned",), default=None,
                   help="compare against this rule for simultaneous events instead of "
                        "another transport profile")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reuse", action="store_true",
                   help="tabulate runs already in --out instead of running them again")
    p.add_argument("names", nargs="*")
    a = p.parse_args(argv)
    # every reproduction takes --ties; --transport all but those that report both
    names = a.names or [n for n in REPRODUCTIONS if a.ties or n not in BOTH_PROFILES]
    variant = f"{a.ties} ties" if a.ties else a.profile
    options = ["--ties", a.ties] if a.ties else ["--transport", a.profile]
    folder = variant.replace(" ", "-")
    print(f"| reproduction | claims held, default | claims held, {variant} | "
          "figures that moved | verdicts that changed (default → " + variant + ") |")
    print("|---|---|---|---|---|")
    for name in names:
        if not (a.reuse and (a.out / name / folder / "transport.json").exists()):
            if not (a.reuse and (a.out / name / "default" / "transport.json").exists()):
                run(name, [], a.out / name / "default")
            run(name, options, a.out / name / folder)
        base = claims(a.out / name / "default")
        other = claims(a.out / name / folder)
        changed = [f"{k.split(': ', 1)[1]}: {base[k][0]} → {other[k][0]}"
                   for k in base if k in other and base[k][1] != other[k][1]]
        moved = sum(base[k][0] != other[k][0] for k in base if k in other)
        print(f"| `{name}` | {held(base) if base else 'no claims table'} | "
              f"{held(other) if other else '—'} | {moved} of {len(base)} | "
              f"{'; '.join(changed) or 'none'} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
