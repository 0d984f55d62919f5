"""Errors tenantnet raises for bad input."""

from __future__ import annotations

from typing import Any


class ScenarioError(ValueError):
    """A scenario that cannot be run.

    ``str(err)`` is the whole message, ``file: key = value: what was expected``;
    the parts are also attributes.
    """

    def __init__(self, message: str, file: str = "", key: str = "", value: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.value = value

    def __str__(self) -> str:
        return self.message


SEED_MAX = 2**63 - 1
"""The largest seed, everywhere (a scenario file's, ``--seed``'s, the API's): TOML's
largest integer."""


def is_whole(v: Any, lo: int, hi: int) -> bool:
    """Whether ``v`` is an int (not a bool) from ``lo`` to ``hi``."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def check_whole(name: str, v: Any, lo: int, hi: int) -> int:
    """``v`` if :func:`is_whole`, else ValueError naming ``name`` and the range."""
    if not is_whole(v, lo, hi):
        raise ValueError(f"{name} = {v!r}: expected a whole number from {lo} to {hi}")
    return int(v)


def check_type(name: str, value: Any, ok: bool, expected: str) -> None:
    """Raises TypeError naming argument `name`, its value and what was `expected`
    unless `ok`."""
    if not ok:
        raise TypeError(f"{name} = {value!r}: expected {expected}, not "
                        f"{type(value).__name__}")
