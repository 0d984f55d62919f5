"""What `tenantnet advise` may spend: a number of runs (every seed of every
configuration) or a time for the search and its verification together."""

from __future__ import annotations

import re

TIME_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
"""The units of a budget of time."""
EXPECTED = "a number of runs, or a time in s, min or h such as \"30min\""


def seconds(text: str) -> float | None:
    """The seconds of a budget of time such as ``"30min"``; None if `text` is not
    one (or not above 0)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(s|min|h)\s*", text)
    x = float(m[1]) * TIME_UNITS[m[2]] if m else 0.0
    return x if x > 0 else None
