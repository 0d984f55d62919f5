"""One shape for every reproduction's comparison with its paper (``*_vs_paper.csv``).

Each row is one published claim, checked:

* ``paper``: only what the paper prints, a number or its own words in quotes; empty
  where the paper gives nothing to compare with (then ``expected`` carries the check);
* ``expected``: what tenantnet judges ``ours`` against, a bound we chose or a value we
  derived (from the paper's set-up, theory or the spec's instance), never a number the
  paper printed, so that a check never compares our numbers with themselves;
* ``ok``: whether ``ours`` meets ``expected`` (empty for a number reported, not judged);
* ``status``: ``reproduced``, ``not reproduced: <reason>``, ``differs: <reason>`` (a
  finding: the model does what the paper's words imply and the paper's figure does
  not, with the cause measured) or ``reported``.

Key columns a reproduction needs beside the claim (a policy, a phase, a transport) come
first. ``python scripts/claims_table.py`` gathers every reproduction's rows into the
documentation's table of claims.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

COLUMNS = ("claim", "ours", "paper", "expected", "ok", "status", "note")
"""The columns every ``*_vs_paper.csv`` ends with, in this order."""

STATUSES = ("reproduced", "not reproduced", "differs", "reported")
"""What a status starts with."""


def status(ok: bool | None, why_not: str = "", differs: str = "") -> str:
    """A row's status: `why_not` says why a failed check is not reproduced (empty: the
    cause is not known), `differs` makes a failed check a finding, with its cause."""
    if ok is None:
        return "reported"
    if ok:
        return "reproduced"
    if differs:
        return f"differs: {differs}"
    return f"not reproduced: {why_not or 'cause not found'}"


def claim(text: str, ours: Any, *, paper: str = "", expected: str = "",
          ok: bool | None, why_not: str = "", differs: str = "", note: str = "",
          **keys: Any) -> dict[str, Any]:
    """One row: the claim `text`, our value, the paper's words or number, our
    criterion, the verdict (None: reported only) and, for a failed check, why."""
    row: dict[str, Any] = dict(keys)
    row.update({"claim": text, "ours": ours, "paper": paper, "expected": expected,
                "ok": "" if ok is None else bool(ok),
                "status": status(ok, why_not, differs), "note": note})
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a table, key columns first and then ``COLUMNS``."""
    df = pd.DataFrame(rows)
    keys = [c for c in df.columns if c not in COLUMNS]
    df = df[keys + list(COLUMNS)]
    check(df)
    return df


def check(df: pd.DataFrame) -> None:
    """Raises ValueError if `df` is not in the shape above (`frame` checks every
    reproduction's table so before it is written)."""
    tail = list(df.columns[-len(COLUMNS):])
    if tail != list(COLUMNS):
        raise ValueError(f"a claims table ends with {tail}, expected {list(COLUMNS)}")
    for s in df["status"]:
        if not str(s).startswith(STATUSES):
            raise ValueError(f"status {s!r}: expected one starting with {STATUSES}")
