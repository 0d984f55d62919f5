"""What every ``tenantnet`` command shares: its error type, the checks of its
arguments, and how it writes a folder of outputs without leaving half of one."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from .. import _core
from ..errors import SEED_MAX
from ..jobs import outdir
from ..sim.scenario import Scenario


class CliError(Exception):
    """Bad input to a command: printed as one ``error:`` line, exit code 2."""


def fail(message: str) -> NoReturn:
    raise CliError(message)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one ``error:`` line (exit code 2), like every
    other error of the command, pointing at ``--help`` rather than printing the usage."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(2)


def size_arg(text: str) -> int:
    """A positive size such as 16GiB, in bytes."""
    try:
        v = _core.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if v == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive size")
    return v


def int_arg(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi``."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = lo - 1
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a whole number from {lo} to {hi}")
        return v
    return parse


def check_out(out: Path, force: bool = False) -> None:
    """Fails before any work if ``out`` cannot become a folder of results
    (:func:`tenantnet.jobs.outdir.check_out`)."""
    try:
        outdir.check_out(out, force)
    except outdir.OutputError as e:
        fail(str(e))


def publish(out: Path, write: Callable[[Path], object], by: str,
            force: bool = False) -> None:
    """Writes a results folder whole into ``out``, replacing what was there
    (:func:`tenantnet.jobs.outdir.publish`)."""
    check_out(out, force)
    try:
        outdir.publish(out, write, by, force)
    except outdir.OutputError as e:
        fail(str(e))


def add_force(p: argparse.ArgumentParser) -> None:
    """``--force``: replace a non-empty folder tenantnet did not write."""
    p.add_argument("--force", action="store_true",
                   help="replace DIR even if it is a non-empty folder that tenantnet did "
                        "not write (a results folder is always replaced whole)")


seed_arg = int_arg(0, SEED_MAX)
"""A seed: a whole number from 0 to 2^63 - 1 (``errors.SEED_MAX``)."""

count_arg = int_arg(1, 2**63 - 1)
"""A count: a whole number of at least 1."""


def number_arg(lo: float, hi: float, lo_open: bool = False, hi_open: bool = False) -> Any:
    """An argparse type: a finite number in [lo, hi] (open ends where asked)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (
            v < hi if hi_open else v <= hi)
        if not ok:
            a, b = "(" if lo_open else "[", ")" if hi_open else "]"
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number in {a}{lo}, {hi}{b}")
        return v
    return parse


def read_text(path: Path) -> str:
    """A text input file, or a clear error."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"{path}: not a UTF-8 text file")
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")


def checked_scenario(path: Path) -> Any:
    """The scenario file a command was given, checked as ``tenantnet validate`` checks
    it (its errors in the same words, the file named once) before the command uses it."""
    sc = Scenario.from_file(path)
    sc.validate()
    return sc
