"""What the reproductions and ``compare`` read out of a run's tables, written once:
time windows over sampled series.

A sample at time t reports the interval (t - interval, t]; sample times are sums of
floats, so a window's bounds are compared with a tolerance of ``EPS`` seconds: a
window (a, b] holds the samples taken after a and up to b, whatever the rounding.
"""

from __future__ import annotations

from typing import TypeVar

import pandas as pd

EPS = 1e-9
"""Seconds: sample times within this of a bound count as on it."""

Frame = TypeVar("Frame", pd.DataFrame, pd.Series)


def window(df: Frame, after: float | None = None, until: float | None = None, *,
           col: str | None = "time_s") -> Frame:
    """The rows of `df` sampled in (after, until]: ``col`` greater than `after` and at
    most `until`, each bound left open when None. ``col=None`` reads the index (a
    series by time)."""
    t = df.index.to_numpy() if col is None else df[col]
    if after is not None and until is not None:
        return df[(t > after + EPS) & (t <= until + EPS)]
    if after is not None:
        return df[t > after + EPS]
    if until is not None:
        return df[t <= until + EPS]
    return df

