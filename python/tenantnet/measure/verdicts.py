"""The verdicts of ``tenantnet compare``: each property judged on its figure's mean
over seeds and 95 % interval (:mod:`tenantnet.measure.stats`) against a stated threshold:
✔ when the whole interval holds, ✘ when none of it does, ≈ inconclusive when it
straddles the threshold. Every number a cell shows has the decimals needed to see
which side of the threshold it is on, so two cells that read the same never carry
opposite verdicts; up to ``EXTRA_DECIMALS`` more than the property's own. A figure
that would need more sits at the threshold as far as the runs can tell (two tenants
at 2:1 give a Jain index of exactly 0.9, which a simulation measures as 0.899997): its
cell reads "≈ 0.9000 (at the threshold)", the figure at that precision (its interval
would read the same).

Short-flow latency has no absolute bound that fits every fabric (the ideal FCT of a
10 KB flow on a 10 Gb/s rack is a few microseconds, so one ECN threshold's worth of
queue already multiplies it several times): it is judged relative to the scheme with
the lowest mean p99 slowdown of flows under 100 KB. Per seed, a scheme's p99 is
divided by that scheme's p99 under the same seed (the same flows, arriving at the
same times), and the ratio's interval over seeds must lie within ``SHORT_P99``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import stats

GUARANTEED = 0.95
"""Guarantees hold when at least this share of the (VM, interval) pairs with settled
demand got at least ``metrics.SATISFIED`` of their entitlement."""
WORK_CONSERVING = 0.90
"""Work-conserving when the bottleneck links are at least this busy on average."""
SHORT_P99 = 2.0
"""Short flows are fine when their p99 slowdown is within this factor of the best
scheme's in the same comparison (module doc)."""
FAIR = 0.90
"""Fair by weight when the mean Jain index is at least this."""
EXTRA_DECIMALS = 2
"""A cell shows at most this many decimals more than its property's own; a figure
that needs more to show its side of the threshold is at the threshold (module doc)."""
MIN_FLOWS = 100
"""A size bucket's p99 rests on at least this many finished flows per seed, or compare
warns: with fewer, the p99 is the largest value or interpolated toward it."""


@dataclass(frozen=True)
class Property:
    """A property of the verdict table: the figure it is judged on, its threshold
    and direction, and how its number reads."""
    name: str
    figure: str
    threshold: float
    above: bool
    """Holds when the figure is at or above the threshold (else at or below)."""
    unit: str
    least: int
    """The fewest decimals shown."""
    bounds: tuple[float, float]
    """The range the figure can take (intervals are clipped to it)."""

    def holds(self, v: float) -> bool:
        return v >= self.threshold if self.above else v <= self.threshold

    def rule(self) -> str:
        """The threshold in words: "≥ 95 %"."""
        return f"{'≥' if self.above else '≤'} {self.threshold:g}{self.unit}"


PROPERTIES: tuple[Property, ...] = (
    Property("guarantees", "guarantees_pct", 100 * GUARANTEED, True, " %", 0, (0, 100)),
    Property("work conservation", "work_conservation_pct", 100 * WORK_CONSERVING, True,
             " % busy", 0, (0, 100)),
    Property("short-flow latency", "short_p99_ratio", SHORT_P99, False, "× best", 2,
             (1.0, math.inf)),
    Property("fairness", "jain", FAIR, True, "", 2, (0, 1)),
)
"""Every property, in the verdict table's order."""

NAMES = [p.name for p in PROPERTIES]


def _numbers(e: stats.Estimate, p: Property, d: int) -> str:
    text = f"{e.mean:.{d}f}{p.unit}"
    if e.has_interval:
        text += f" [{e.lo:.{d}f}, {e.hi:.{d}f}]"
    if e.n < e.total:
        text += f" ({e.n} of {e.total} seeds)"
    return text


def cells(estimates: Sequence[stats.Estimate | None], p: Property) -> list[str]:
    """The cells of property `p` for a column of estimates (None: not judged): ✔, ✘
    or "≈ inconclusive" with the mean and its interval (none from one value), each
    with the decimals that show which side of the threshold its numbers are on, or
    "≈ <mean> (at the threshold)" where that would take more than ``EXTRA_DECIMALS``
    more than the property's own; "—" where no seed gave a value."""
    out = []
    for e in estimates:
        if e is None:
            out.append("")
        elif not e.n:
            out.append("—")
        else:
            d = stats.decimals([e.mean, e.lo, e.hi], p.threshold, p.least)
            v = stats.judge(e, p.holds)
            word = "≈ inconclusive:" if v == "≈" else v
            if d > p.least + EXTRA_DECIMALS:  # its interval would read as its mean
                d = p.least + EXTRA_DECIMALS
                seeds = f", {e.n} of {e.total} seeds" if e.n < e.total else ""
                out.append(f"≈ {e.mean:.{d}f}{p.unit} (at the threshold{seeds})")
                continue
            out.append(f"{word} {_numbers(e, p, d)}")
    return out


def latency_ratios(p99: Mapping[str, Sequence[float]],
                   judged: Sequence[str]) -> tuple[str | None, dict[str, list[float]],
                                                   dict[str, list[str]]]:
    """Each scheme's per-seed ratio of its short flows' p99 slowdown to the best
    judged scheme's under the same seed (module doc), and why a ratio is missing;
    the best scheme's name (None if no judged scheme has a p99)."""
    means = {s: float(np.nanmean(v)) for s, v in p99.items()
             if s in judged and np.isfinite(v).any()}
    if not means:
        return None, {}, {}
    best = min(means, key=lambda s: (means[s], s))
    ratios: dict[str, list[float]] = {}
    why: dict[str, list[str]] = {}
    for s, v in p99.items():
        ratios[s], why[s] = [], []
        for mine, theirs in zip(v, p99[best], strict=True):
            ok = math.isfinite(mine) and math.isfinite(theirs) and theirs > 0
            ratios[s].append(mine / theirs if ok else math.nan)
            why[s].append("" if ok else "no flow under 100 KB finished" if
                          not math.isfinite(mine) else
                          f"{best}, the best, finished no flow under 100 KB")
    return best, ratios, why


def few_flows(counts: Sequence[int], what: str = "flows under 100 KB") -> str:
    """A warning when a p99 rests on fewer than ``MIN_FLOWS`` finished flows in some
    seed, else ""."""
    low = min(counts) if counts else 0
    if low >= MIN_FLOWS:
        return ""
    return (f"its short-flow p99 rests on as few as {low} finished {what} in a seed "
            f"(fewer than {MIN_FLOWS}: the p99 is then about the largest value); run "
            "longer or with more load for a firm latency verdict")


def describe() -> list[tuple[str, str]]:
    """Each property and when it holds, in words, for reports."""
    # deferred for start-up: loads pandas, pyarrow
    from .metrics import SATISFIED
    return [
        ("guarantees", f"✔ when at least {GUARANTEED:.0%} of the settled intervals of "
         f"tenants' VMs with demand gave them at least {SATISFIED:.0%} of their "
         "entitlement (their data sent)"),
        ("work conservation", f"✔ when the links that demand exceeds are at least "
         f"{WORK_CONSERVING:.0%} busy on average"),
        ("short-flow latency", f"✔ when the p99 slowdown of flows under 100 KB is "
         f"within {SHORT_P99:g}× of the best scheme's, seed by seed"),
        ("fairness", f"✔ when Jain's index over tenants with settled demand of rate / "
         f"guarantee averages at least {FAIR:g}"),
    ]


def symbol(cell: Any) -> str:
    """The verdict of a cell: ✔, ✘, ≈ or "" (not judged)."""
    text = str(cell)
    return text[:1] if text[:1] in ("✔", "✘", "≈") else ""
