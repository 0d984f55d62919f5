"""What the reproductions and ``compare`` read out of a run's tables, written once:
time windows over sampled series, and a scope's series one column per element.

A sample at time t reports the interval (t - interval, t]; sample times are sums of
floats, so a window's bounds are compared with a tolerance of ``EPS`` seconds: a
window (a, b] holds the samples taken after a and up to b, whatever the rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
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



def by_scope(throughput: pd.DataFrame, scope: str, *, by: str = "id",
             only: Sequence[str] | None = None, value: str = "gbps", agg: str = "mean",
             **match: str) -> pd.DataFrame:
    """A scope's series from a run's ``throughput`` table: `value` per sample time
    (the index), one column per `by` ("id" or "tenant"). Rows are those of `scope`
    whose columns equal `match` (``id="s0->s1"``); with `only`, just the columns of
    those `by` values, in that order (one never seen is a column of NaN). Several rows of one
    time and column are combined by `agg`."""
    rows = throughput["scope"] == scope
    for col, v in match.items():
        rows &= throughput[col] == v
    s = throughput[rows].pivot_table(index="time_s", columns=by, values=value,
                                     aggfunc=agg, observed=True)
    return s if only is None else s.reindex(columns=list(only))
