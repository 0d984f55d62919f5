"""Figures over seeds: a mean with its 95 % confidence interval, what could not be
computed and why, and a verdict that says "inconclusive" when the interval straddles
the threshold it is judged against.

The interval is Student's t-interval over the seeds' values (each seed one
independent run): mean ± t(0.975, n - 1) · s / √n, with s the sample standard
deviation. It assumes the per-seed values are roughly normal, which holds for the
means over many intervals that the figures are; with 3 to 5 seeds it is wide, as it
should be. One seed gives no interval: its verdict is stated as resting on one run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

_T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646,
         8: 2.3060, 9: 2.2622, 10: 2.2281, 11: 2.2010, 12: 2.1788, 13: 2.1604,
         14: 2.1448, 15: 2.1314, 16: 2.1199, 17: 2.1098, 18: 2.1009, 19: 2.0930,
         20: 2.0860, 21: 2.0796, 22: 2.0739, 23: 2.0687, 24: 2.0639, 25: 2.0595,
         26: 2.0555, 27: 2.0518, 28: 2.0484, 29: 2.0452, 30: 2.0423, 40: 2.0211,
         60: 2.0003, 120: 1.9799}
"""The 0.975 quantile of Student's t by degrees of freedom (any statistics table)."""

INTERVAL = "95 % t-interval over seeds"
"""How every interval is computed, in words (reports state it)."""


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` ≥ 1 degrees of freedom; between
    tabulated values, interpolated linearly in 1/df (the normal 1.96 beyond 120)."""
    if df < 1:
        raise ValueError(f"df = {df}: expected at least 1")
    if df in _T975:
        return _T975[df]
    keys = sorted(_T975)
    if df > keys[-1]:
        a, b, ta, tb = keys[-1], math.inf, _T975[keys[-1]], 1.95996
    else:
        a = max(k for k in keys if k < df)
        b = min(k for k in keys if k > df)
        ta, tb = _T975[a], _T975[b]
    x = (1 / a - 1 / df) / (1 / a - (0 if math.isinf(b) else 1 / b))
    return ta + (tb - ta) * x


@dataclass(frozen=True)
class Estimate:
    """A figure over seeds: the mean of the values that could be computed, its 95 %
    t-interval (lo = hi = mean with fewer than two values), how many values there
    were and why the others could not be computed."""
    mean: float
    lo: float
    hi: float
    n: int
    total: int
    missing: tuple[str, ...] = field(default_factory=tuple)
    """One reason per seed whose value could not be computed."""

    @property
    def has_interval(self) -> bool:
        return self.n >= 2

    def reasons(self) -> str:
        """The missing values' reasons, each with its count: "2 of 5 seeds: why"."""
        if not self.missing:
            return ""
        counts: dict[str, int] = {}
        for r in self.missing:
            counts[r] = counts.get(r, 0) + 1
        return "; ".join(f"{k} of {self.total} seeds: {r}" for r, k in counts.items())


def estimate(values: Sequence[float], reasons: Sequence[str] | None = None,
             bounds: tuple[float, float] = (-math.inf, math.inf)) -> Estimate:
    """The :class:`Estimate` of `values` (NaN: could not be computed, for the reason
    at the same place in `reasons`); the interval clipped to `bounds`, the range the
    figure can take."""
    x = np.asarray(values, dtype=float)
    ok = np.isfinite(x)
    why = tuple((reasons[int(i)] if reasons is not None and reasons[int(i)] else
                 "not computed") for i in np.flatnonzero(~ok))
    n = int(ok.sum())
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, len(x), why)
    v = x[ok]
    mean = float(v.mean())
    half = t975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n) if n >= 2 else 0.0
    lo, hi = max(bounds[0], mean - half), min(bounds[1], mean + half)
    return Estimate(mean, min(lo, mean), max(hi, mean), n, len(x), why)


def decimals(values: Sequence[float], threshold: float, least: int) -> int:
    """The fewest decimals (at least `least`) with which every one of `values`,
    rounded, stays on the same side of `threshold` as it is (equal only if equal):
    so that a number shown as 0.90 is never judged against 0.9 from below."""
    for d in range(least, 12):
        if all(np.sign(round(v, d) - threshold) == np.sign(v - threshold)
               for v in values if math.isfinite(v)):
            return d
    return 12


Verdict = str
"""'✔', '✘' or '≈' (inconclusive)."""


def judge(e: Estimate, holds: Callable[[float], bool]) -> Verdict:
    """✔ when the whole interval holds, ✘ when none of it does, ≈ (inconclusive)
    when it straddles the threshold; one value is judged as it is."""
    a, b = holds(e.lo), holds(e.hi)
    if a and b:
        return "✔"
    if not a and not b:
        return "✘"
    return "≈"
