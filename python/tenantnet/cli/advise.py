"""``tenantnet advise SCENARIO --slo FILE -o DIR``: the scheme and settings that meet
the service levels in FILE (:mod:`tenantnet.advice`).

DIR keeps every run's figures as the search goes (``runs.jsonl``): the same command
started again over DIR resumes where it stopped, replaying the kept runs (a folder
of another scenario or other service levels is refused unless ``--force``, which
starts over)."""

from __future__ import annotations

import argparse
import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

from ..advice.budget import EXPECTED, seconds
from ..jobs import progress
from ..jobs.outdir import check_out, manifest, write_manifest
from .compare import add_scenario_args
from .tools import add_force, checked_scenario, fail, int_arg, read_text

BY = "tenantnet advise"


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def _folder(out: Path, key: str, force: bool) -> bool:
    """Makes `out` ready for a search keyed `key`; whether it resumes one."""
    check_out(out, force)
    m = manifest(out) if out.exists() else None
    if m is not None and m.get("written_by") == BY and m.get("search") == key \
            and (out / "runs.jsonl").exists():
        for f in out.iterdir():  # what the last search wrote, but the runs it kept
            if f.name != "runs.jsonl" and f.is_file():
                f.unlink()
        write_manifest(out, BY, {"search": key}, files=["runs.jsonl"])
        return True
    if m is not None and m.get("written_by") == BY and not force:
        fail(f"{out}: holds a search of another scenario or other service levels; "
             "give --force to start this one over it, or choose another folder")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    write_manifest(out, BY, {"search": key}, files=["runs.jsonl"])
    return False


def cmd_advise(a: argparse.Namespace) -> None:
    # deferred for start-up: loads optuna, pandas, pyarrow
    from ..advice import slo
    from ..advice.api import advise
    from ..advice.report import write
    sc = checked_scenario(a.scenario)
    levels = slo.load(a.slo)
    key = _digest(sc.text, read_text(a.slo))
    resumed = _folder(a.out, key, a.force)
    if resumed:
        progress.note(f"resuming the search kept in {a.out}")
    with progress.showing(not a.quiet):
        adv = advise(sc, levels, a.schemes, a.budget, a.seeds, a.held_out, a.jobs,
                     a.out / "runs.jsonl", a.seed, a.ray)
    report = write(adv, a.out)
    write_manifest(a.out, BY, {"search": key})
    print(adv.summary())
    print(f"the scenario: {a.out / 'recommended.json'}")
    print(f"report: {report}")


def _budget(text: str) -> int | str:
    """--budget: a whole number of runs, or a time (:mod:`tenantnet.advice.budget`)."""
    if text.strip().isdigit():
        return int_arg(1, 1_000_000)(text)
    if seconds(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected {EXPECTED}")
    return text


def add_commands(cmd: Callable[..., argparse.ArgumentParser]) -> None:
    """Adds ``advise`` to the top-level parser through `cmd`."""
    p = cmd("advise", cmd_advise,
            "Search the schemes and their tunable parameters for the configuration that "
            "meets the service levels in FILE on SCENARIO with the least objective, "
            "then verify it on seeds the search never used.",
            "The service-level file and each scheme's parameters: `tenantnet schemes "
            "SCENARIO` and the reference page on service levels.")
    add_scenario_args(p, "the schemes to search (default: every one that applies)",
                      "output folder; the search resumes from what it keeps there")
    p.add_argument("--slo", type=Path, required=True, metavar="FILE",
                   help="the service levels (TOML)")
    p.add_argument("--budget", type=_budget, default=200, metavar="RUNS|TIME",
                   help="runs the search may make, every seed of every configuration "
                   "(default 200), or a time for the search and its verification "
                   "together (30min, 2h, 600s): no batch starts that would end past it "
                   "at the pace so far")
    p.add_argument("--seeds", type=int_arg(1, 100), default=3, metavar="N",
                   help="seeds a configuration runs on at most (default 3)")
    p.add_argument("--held-out", type=int_arg(2, 100), default=5, metavar="N",
                   help="fresh seeds the best configurations are verified on (default 5)")
    p.add_argument("-j", "--jobs", type=int_arg(1, 4096), default=None, metavar="N",
                   help="worker processes (default: one per core)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run on a Ray cluster: its head's HOST:PORT or ray://HOST:PORT, "
                        "auto (the cluster this machine belongs to) or local (start one "
                        "here with -j CPUs); needs pip install 'tenantnet[ray]'. The same "
                        "runs as without, so the same answer")
    p.add_argument("--seed", type=int_arg(0, 2**31 - 1), default=1, metavar="N",
                   help="the search's own seed (default 1)")
    add_force(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")

