"""The tables of a comparison (:class:`Judged`): ``runs`` (a row per
scheme and seed), ``verdicts`` (a row per scheme, judged over its seeds) and the
measures' own tables stacked with ``scheme`` and ``seed`` columns."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..measure import metrics, stats, verdicts
from .outcome import COUNTERS, Outcome, Runs

RUN_COLUMNS = ["scheme", "seed", "status", "acted", "engagement", "error"]


def _status(o: Outcome) -> str:
    if o.measures is None:
        return "failed"
    if o.engagement is not None and o.engagement.acted is False:
        return "did not act"
    return "ok"


def runs_table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """A row per scheme and seed: status (ok, did not act, failed), whether and how
    the scheme acted, then the run's figures and why any of the verdicts' is
    missing."""
    rows = []
    for o in outcomes:
        e = o.engagement
        row: dict[str, Any] = {
            "scheme": o.scheme, "seed": o.seed, "status": _status(o),
            "acted": {True: "yes", False: "no", None: "baseline"}[e.acted] if e else "",
            "engagement": e.evidence if e else "", "error": o.error}
        if o.measures is not None:
            row.update(o.measures.row)
            row["missing"] = "; ".join(f"{k}: {why}" for k, why in
                                      metrics.missing(o.measures.row).items())
        row.update(wall_s=o.wall_s, write_s=o.write_s, analysis_s=o.analysis_s)
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else RUN_COLUMNS)


def _per_seed(runs: pd.DataFrame, scheme: str, figure: str) -> tuple[list[float], list[str]]:
    """A scheme's values of `figure` seed by seed, NaN (with the reason) where its run
    did not count or the figure could not be computed."""
    values, why = [], []
    for _, r in runs[runs["scheme"] == scheme].iterrows():
        if r["status"] != "ok":
            values.append(math.nan)
            why.append(str(r["status"]))
            continue
        v = r.get(figure, math.nan)
        v = math.nan if v is None or pd.isna(v) else float(v)
        values.append(v)
        why.append(metrics.FIGURES[figure][0] if math.isnan(v) and figure in
                   metrics.FIGURES else "")
    return values, why


def _judged(runs: pd.DataFrame, scheme: str) -> bool:
    return bool((runs[runs["scheme"] == scheme]["status"] == "ok").any())


def _note(runs: pd.DataFrame, scheme: str) -> str:
    """Why a scheme has no verdicts: it failed, or never acted."""
    r = runs[runs["scheme"] == scheme]
    acted = r[r["status"] == "did not act"]
    if len(acted):
        return f"did not act: {acted['engagement'].iloc[0]}"
    return str(r["error"].iloc[0]) if len(r) else ""


def _warning(runs: pd.DataFrame, scheme: str) -> str:
    """What makes a judged scheme's verdicts less firm: seeds that did not count,
    short flows too few for a p99."""
    r = runs[runs["scheme"] == scheme]
    parts = []
    for status in ("did not act", "failed"):
        bad = r[r["status"] == status]
        if len(bad):
            what = bad["engagement" if status == "did not act" else "error"].iloc[0]
            seeds = ", ".join(str(s) for s in bad["seed"])
            parts.append(f"{status} under seed {seeds} ({what}); judged on the others")
    ok = r[r["status"] == "ok"]
    if "short_flows" in ok and len(ok) and ok["short_p99_slowdown"].notna().any():
        parts.append(verdicts.few_flows([int(x) for x in ok["short_flows"]]))
    parts.append(_like_none(runs, scheme))
    return WARNINGS.join(p for p in parts if p)


LIKE = 1e-3
"""A scheme scores like no enforcement on a property when its figure is within this
share of none's in every seed (under the same seed)."""


def _like_none(runs: pd.DataFrame, scheme: str) -> str:
    """A note when an acting scheme's guarantees figure (and which others) is none's
    in every seed, with what it did (its engagement): what it enforced changed
    nothing that figure measures."""
    if scheme == "none" or not _judged(runs, "none"):
        return ""
    ok = runs[runs["status"] == "ok"]
    mine = ok[ok["scheme"] == scheme].set_index("seed")
    base = ok[ok["scheme"] == "none"].set_index("seed")
    seeds = mine.index.intersection(base.index)
    same = []
    for p in verdicts.PROPERTIES:
        f = "short_p99_slowdown" if p.figure == "short_p99_ratio" else p.figure
        if not len(seeds) or f not in mine or f not in base:
            continue
        a = mine.loc[seeds, f].astype(float).to_numpy()
        b = base.loc[seeds, f].astype(float).to_numpy()
        if np.isfinite(a).all() and np.isfinite(b).all() and \
                (np.abs(a - b) <= LIKE * np.maximum(1.0, np.abs(b))).all():
            same.append(p.name)
    if "guarantees" not in same:
        return ""
    return (f"scores like none on {' and '.join(same)} in every seed (within "
            "a thousandth of none's): what it did changed nothing there "
            f"({mine['engagement'].iloc[0]})")


WARNINGS = " | "
"""Between the warnings of one scheme in the verdict table's ``warning`` column."""


def group_warnings(v: pd.DataFrame) -> dict[str, list[str]]:
    """Each warning of the verdict table `v` and the schemes it concerns."""
    out: dict[str, list[str]] = {}
    for s, w in zip(v["scheme"], v["warning"] if "warning" in v else [""] * len(v),
                    strict=True):
        for part in str(w).split(WARNINGS) if w else []:
            out.setdefault(part, []).append(str(s))
    return out


def verdict_table(c: Runs, runs: pd.DataFrame) -> pd.DataFrame:
    """A row per scheme (module doc of :mod:`tenantnet.measure.verdicts`)."""
    names = c.schemes
    judged = [s for s in names if _judged(runs, s)]
    est: dict[str, dict[str, stats.Estimate]] = {}
    for p in verdicts.PROPERTIES:
        if p.figure == "short_p99_ratio":
            p99 = {s: _per_seed(runs, s, "short_p99_slowdown") for s in names}
            _, ratio, why = verdicts.latency_ratios({s: v for s, (v, _) in p99.items()},
                                                       judged)
            est[p.figure] = {s: stats.estimate(
                ratio.get(s, [math.nan] * len(p99[s][0])),
                [a or b for a, b in zip(p99[s][1], why.get(s, p99[s][1]), strict=True)],
                p.bounds) for s in names}
            est["short_p99_slowdown"] = {s: stats.estimate(*p99[s]) for s in names}
        else:
            est[p.figure] = {s: stats.estimate(*_per_seed(runs, s, p.figure), p.bounds)
                             for s in names}
    cols = {p.name: verdicts.cells([est[p.figure][s] if s in judged else None
                                    for s in names], p) for p in verdicts.PROPERTIES}
    rows = []
    for i, s in enumerate(names):
        r = runs[runs["scheme"] == s]
        row: dict[str, Any] = {"scheme": s, **{p: cols[p][i] for p in verdicts.NAMES},
                               "note": "" if s in judged else _note(runs, s),
                               "warning": _warning(runs, s) if s in judged else "",
                               "acted": ", ".join(dict.fromkeys(x for x in r["acted"] if x)),
                               "engagement": str(r["engagement"].iloc[0]) if len(r) else "",
                               "choices": "; ".join(c.choices.get(s, [])),
                               "seeds": len(r), "seeds_judged": int((r["status"] == "ok").sum())}
        for figure, by in est.items():
            e = by[s]
            row.update({figure: e.mean, f"{figure}_lo": e.lo, f"{figure}_hi": e.hi,
                        f"{figure}_n": e.n, f"{figure}_missing": e.reasons()})
        ok = r[r["status"] == "ok"]
        for k in metrics_counters(ok):
            e = stats.estimate(ok[k].astype(float).to_numpy())
            row.update({k: e.mean, f"{k}_lo": e.lo, f"{k}_hi": e.hi})
        row["wall_s"] = float(r["wall_s"].mean()) if len(r) else math.nan
        rows.append(row)
    for s, reason in c.skipped.items():
        rows.append({"scheme": s, **{p: "" for p in verdicts.NAMES},
                     "note": f"{c.skip_label}: {reason}" if c.skip_label else reason,
                     "warning": "", "acted": "",
                     "engagement": "", "choices": "", "seeds": 0, "seeds_judged": 0})
    return pd.DataFrame(rows)


def metrics_counters(ok: pd.DataFrame) -> list[str]:
    return [k for k in COUNTERS if k in ok and ok[k].notna().any()]


def stacked(outcomes: Sequence[Outcome], table: str) -> pd.DataFrame:
    """One measures table of every run that was measured, ``scheme`` and ``seed``
    columns first."""
    parts = [getattr(o.measures, table).assign(scheme=o.scheme, seed=o.seed)
             for o in outcomes if o.measures is not None]
    if not parts:
        return pd.DataFrame(columns=["scheme", "seed"])
    df = pd.concat(parts, ignore_index=True)
    return df[["scheme", "seed", *[c for c in df.columns if c not in ("scheme", "seed")]]]


def build(c: Runs) -> dict[str, pd.DataFrame]:
    """Every table of `c`, by name."""
    runs = runs_table(c.outcomes)
    out = {"runs": runs, "verdicts": verdict_table(c, runs)}
    for name in ("tenants", "intervals", "latency"):
        out[name] = stacked(c.outcomes, name)
    return out


def mean_over_seeds(df: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """`value`'s mean and 95 % interval over seeds per group of `by` (for charts)."""
    rows = []
    for key, g in df.groupby(by, sort=False):
        e = stats.estimate(g[value].astype(float).to_numpy())
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,),
                                strict=True)),
                     "mean": e.mean, "lo": e.lo, "hi": e.hi, "n": e.n})
    return pd.DataFrame(rows, columns=[*by, "mean", "lo", "hi", "n"])


@dataclass
class Judged(Runs):
    """A comparison's runs with the tables built from them (``verdicts`` first), built
    when first read."""
    _tables: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._tables:
            self._tables.update(build(self))
        return self._tables[name]

    @property
    def verdicts(self) -> pd.DataFrame:
        """A row per scheme: a verdict cell per property (✔, ✘ or ≈ inconclusive,
        with the mean and 95 % interval over seeds), a note, what the scheme did,
        then every figure's mean, interval and count."""
        return self._table("verdicts")

    @property
    def runs(self) -> pd.DataFrame:
        """A row per scheme and seed: the run's figures, or why it has none."""
        return self._table("runs")

    @property
    def tenants(self) -> pd.DataFrame:
        """A row per scheme, seed and tenant (:func:`metrics.measure`)."""
        return self._table("tenants")

    @property
    def intervals(self) -> pd.DataFrame:
        """A row per scheme, seed and sampling interval."""
        return self._table("intervals")

    @property
    def latency(self) -> pd.DataFrame:
        """A row per scheme, seed and flow-size bucket."""
        return self._table("latency")

    def warnings(self) -> list[str]:
        """What makes a verdict less firm than it reads (few flows, seeds that did not
        count), each with the schemes it concerns."""
        return [f"{', '.join(names)}: {w}" for w, names in
                group_warnings(self.verdicts).items()]
