"""Service levels (SLOs) in a TOML file, and whether runs meet them.

The file::

    # every tenant (per-tenant levels) and the network (network-wide ones)
    [levels]
    guarantee = { share = 0.95, samples = 0.99 }  # >= 95 % of its guarantee in >= 99 %
                                                 # of the samples in which it has demand
    work_conservation = 0.90     # the links that demand exceeds >= 90 % busy on average
    short_p99_slowdown = 20      # flows under 100 KB: p99 slowdown at most 20
    fairness = 0.9               # Jain's index of rate / guarantee at least 0.9

    [tenants.web]                # a tenant's own levels replace [levels]' for it
    guarantee = { share = 0.99, samples = 0.99 }
    short_p99_slowdown = 10

    [objective]
    minimise = "short_p99_slowdown"   # among the configurations that meet every level

Choices where the levels could be read two ways:

* ``guarantee`` and ``short_p99_slowdown`` are a tenant's: under ``[levels]`` they
  apply to every tenant on its own (each tenant with VMs and guarantees, and each
  with flows under 100 KB, in the runs). ``work_conservation`` and ``fairness`` are
  the network's and only ``[levels]`` takes them.
* A sample is a measurement interval (``output.sample_interval``) of one of the
  tenant's units (its VMs on one host) with demand, as ``compare`` measures
  (:mod:`tenantnet.measure.metrics`); its entitlement is the hose-model share of
  the guarantee. ``demand = "settled"`` (the default) counts only samples whose
  demand has lasted the settling time, as compare's verdict does; ``"all"`` counts
  every one.
* A level is judged on its figure's mean over seeds with its 95 % interval:
  ✔ when the whole interval meets it, ✘ when none does, ≈ when it straddles.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ScenarioError
from ..measure import stats
from ..measure.metrics import BUCKETS, Measures

TENANT_LEVELS = ("guarantee", "short_p99_slowdown")
NETWORK_LEVELS = ("work_conservation", "fairness")
GUARANTEE_KEYS = ("share", "samples", "demand")
DEMAND = ("settled", "all")

OBJECTIVES: dict[str, str] = {
    "short_p99_slowdown": "the p99 slowdown of flows under 100 KB (all tenants)",
    "drops": "packets dropped",
    "control_packets": "packets that carry no data (ACKs, feedback, probes)",
    "idle": "100 % less the work conservation figure (spare bandwidth left unused)",
}
"""What a search may minimise among the configurations that meet every level."""


@dataclass(frozen=True)
class Level:
    """One service level: a figure of one run, its bound and direction."""
    kind: str
    """``guarantee``, ``short_p99_slowdown``, ``work_conservation`` or ``fairness``."""
    tenant: str | None
    """The tenant it is about; None for the network."""
    bound: float
    above: bool
    """Met when the figure is at least the bound (else at most)."""
    share: float = 0.95
    """``guarantee``: the share of the entitlement a sample must reach."""
    demand: str = "settled"
    """``guarantee``: which samples count (module doc)."""

    def holds(self, x: float) -> bool:
        return x >= self.bound if self.above else x <= self.bound

    def name(self) -> str:
        """``web: guarantee`` or ``work conservation``."""
        what = self.kind.replace("_", " ")
        return f"{self.tenant}: {what}" if self.tenant else what

    def rule(self) -> str:
        """The level in words."""
        if self.kind == "guarantee":
            return (f"≥ {self.share * 100:g} % of its guarantee in ≥ {self.bound:g} % of "
                    f"its {'settled ' if self.demand == 'settled' else ''}samples "
                    "with demand")
        if self.kind == "short_p99_slowdown":
            return f"p99 slowdown of flows under 100 KB ≤ {self.bound:g}"
        if self.kind == "work_conservation":
            return f"links that demand exceeds ≥ {self.bound:g} % busy"
        return f"Jain's index by weight ≥ {self.bound:g}"

    def figure(self, m: Measures) -> float:
        """The level's figure in run `m` (NaN where the run cannot give it)."""
        if self.kind == "work_conservation":
            return float(m.row.get("work_conservation_pct", math.nan))
        if self.kind == "fairness":
            return float(m.row.get("jain", math.nan))
        if self.kind == "short_p99_slowdown":
            s = m.slowdowns
            s = s[(s["tenant"] == self.tenant) & (s["size_bytes"] < BUCKETS[0][1])]
            return float(np.percentile(s["slowdown"], 99)) if len(s) else math.nan
        s = m.samples
        s = s[s["tenant"] == self.tenant]
        if self.demand == "settled":
            s = s[s["settled"]]
        if not len(s):
            return math.nan
        ok = s["rate_gbps"] >= self.share * s["entitled_gbps"]
        return 100.0 * float(ok.mean())

    def order(self) -> tuple[str, str]:
        """Network levels first, then by tenant and kind."""
        return (self.tenant or "", self.kind)

    def margin(self, x: float) -> float:
        """How far `x` is inside the level (negative: outside), relative to the bound."""
        gap = (x - self.bound) if self.above else (self.bound - x)
        return gap / abs(self.bound) if self.bound else gap


@dataclass(frozen=True)
class Slo:
    """The service levels of a file: the levels for every tenant and the network,
    each tenant's own, and what to minimise."""
    every: tuple[Level, ...]
    """``[levels]``: per-tenant ones with ``tenant`` None, applied to each tenant."""
    tenants: Mapping[str, tuple[Level, ...]] = field(default_factory=dict)
    minimise: str = "short_p99_slowdown"
    source: str = "<slo>"

    def levels(self, measures: Sequence[Measures]) -> list[Level]:
        """Every level as it applies to the runs `measures`: a per-tenant level of
        ``[levels]`` once for each tenant the runs have such a figure for (unless the
        tenant has its own level of that kind), then each tenant's own."""
        with_g = sorted({t for m in measures for t in m.samples.get("tenant", [])})
        with_short = sorted({t for m in measures for t in
                             m.slowdowns[m.slowdowns["size_bytes"] < BUCKETS[0][1]]
                             .get("tenant", [])})
        out: list[Level] = []
        for lv in self.every:
            if lv.kind in NETWORK_LEVELS:
                out.append(lv)
                continue
            for t in with_g if lv.kind == "guarantee" else with_short:
                if not any(own.kind == lv.kind for own in self.tenants.get(t, ())):
                    out.append(Level(lv.kind, t, lv.bound, lv.above, lv.share, lv.demand))
        for levels in self.tenants.values():
            out.extend(levels)
        return sorted(out, key=Level.order)

    def level(self, name: str) -> Level:
        """The level called `name` (:meth:`Level.name`)."""
        tenant, _, what = name.rpartition(": ")
        kind = what.replace(" ", "_")
        for lv in self.tenants.get(tenant, ()):
            if lv.kind == kind:
                return lv
        for lv in self.every:
            if lv.kind == kind:
                return Level(kind, tenant or None, lv.bound, lv.above, lv.share, lv.demand)
        raise KeyError(name)


def objective(name: str, m: Measures) -> float:
    """The figure :data:`OBJECTIVES` names, of run `m` (lower is better)."""
    if name == "idle":
        return 100.0 - float(m.row.get("work_conservation_pct", math.nan))
    return float(m.row.get(name, math.nan))


def figures(slo: Slo, m: Measures) -> dict[str, float]:
    """Run `m`'s figure for each level of `slo` that applies to it, by the level's
    name, and the objective's (key ``""``): what a search keeps of a run."""
    out = {lv.name(): lv.figure(m) for lv in slo.levels([m])}
    out[""] = objective(slo.minimise, m)
    return out


def judge(slo: Slo, measures: Sequence[Measures]) -> pd.DataFrame:
    """A row per level of `slo` over the runs `measures` (one per seed): its figure's
    mean and 95 % interval, the verdict (✔, ✘, ≈; "—" where no run gave it) and the
    margin of the mean (negative: missed)."""
    return judge_figures(slo, [figures(slo, m) for m in measures])


def judge_figures(slo: Slo, runs: Sequence[Mapping[str, float]]) -> pd.DataFrame:
    """:func:`judge` from each run's :func:`figures` (a level a run lacks counts as
    not computed in it)."""
    names = sorted({k for r in runs for k in r if k}, key=lambda n: slo.level(n).order())
    rows = []
    for name in names:
        lv = slo.level(name)
        e = stats.estimate([r.get(name, math.nan) for r in runs])
        verdict = stats.judge(e, lv.holds) if e.n else "—"
        rows.append({"level": name, "tenant": lv.tenant or "", "kind": lv.kind,
                     "rule": lv.rule(), "mean": e.mean, "lo": e.lo, "hi": e.hi,
                     "seeds": e.n, "verdict": verdict,
                     "margin": lv.margin(e.mean) if e.n else -math.inf})
    return pd.DataFrame(rows, columns=["level", "tenant", "kind", "rule", "mean", "lo",
                                       "hi", "seeds", "verdict", "margin"])


def cell(row: Any) -> str:
    """A row of a :func:`judge` table as one cell: its verdict and mean, with the
    interval where there are two seeds or more ("—" where no run gave it)."""
    if not int(row.seeds):
        return "—"
    return f"{row.verdict} {row.mean:.4g}" + (f" [{row.lo:.4g}, {row.hi:.4g}]"
                                              if int(row.seeds) > 1 else "")


def met(table: pd.DataFrame) -> bool:
    """Whether every level of a :func:`judge` table that the runs could give holds
    (✔), and at least one could: a level no run gave ("—", such as the guarantee
    of a tenant whose demand never lasted the settling time) is not held against
    the runs."""
    v = table["verdict"] if len(table) else pd.Series(dtype=str)
    judged = v[v != "—"]
    return bool(len(judged)) and bool((judged == "✔").all())


def missed(table: pd.DataFrame) -> float:
    """How far the runs of a :func:`judge` table are from meeting every level: the
    sum of the missed levels' margins (0 when every mean meets its level)."""
    m = table["margin"].astype(float) if len(table) else pd.Series(dtype=float)
    return float((-m[np.isfinite(m) & (m < 0)]).sum())


def binding(table: pd.DataFrame) -> pd.Series | None:
    """The row of a :func:`judge` table that binds: of the levels not met (✘ or ≈),
    else of all the runs gave, the one with the smallest margin; None when the runs
    gave none."""
    t = table[table["verdict"] != "—"] if len(table) else table
    if not len(t):
        return None
    if (t["verdict"] != "✔").any():
        t = t[t["verdict"] != "✔"]
    return t.loc[t["margin"].astype(float).idxmin()]


def shortfall(row: pd.Series) -> str:
    """What a :func:`binding` row says: the level, its rule and how far it is from
    it."""
    head = f"{row['level']} ({row['rule']})"
    if row["verdict"] == "✘":
        return f"{head}: {row['mean']:.4g}, {-100 * row['margin']:.1f} % short"
    if row["verdict"] == "≈":
        return (f"{head}: {row['mean']:.4g}, inconclusive: its interval "
                f"[{row['lo']:.4g}, {row['hi']:.4g}] straddles the bound")
    return f"{head}: {row['mean']:.4g}, met with {100 * row['margin']:.1f} % to spare"


def load(path: str | Path) -> Slo:
    """The service levels in TOML file `path`; :class:`ScenarioError` naming the
    file, the key, its value and what was expected."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such file", str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read it: {e}", str(p)) from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not TOML: {e}", str(p)) from None
    return parse(data, str(p))


def parse(data: Mapping[str, Any], source: str = "<slo>") -> Slo:
    """The service levels of `data` (a parsed file); errors as :func:`load`'s."""
    def err(key: str, value: Any, expected: str) -> ScenarioError:
        return ScenarioError(f"{source}: {key} = {value!r}: expected {expected}",
                             source, key, repr(value))

    _only(data, ("levels", "tenants", "objective"), "", err)
    every = _levels(data.get("levels", {}), "levels", None, err)
    tenants_in = data.get("tenants", {})
    if not isinstance(tenants_in, Mapping):
        raise err("tenants", tenants_in, "a table of tenants' tables ([tenants.NAME])")
    tenants = {str(t): _levels(v, f"tenants.{t}", str(t), err)
               for t, v in tenants_in.items()}
    if not every and not any(tenants.values()):
        raise err("levels", data.get("levels", {}), "at least one level, in [levels] or "
                  f"[tenants.NAME]: one of {', '.join(TENANT_LEVELS + NETWORK_LEVELS)}")
    obj = data.get("objective", {})
    if not isinstance(obj, Mapping):
        raise err("objective", obj, "a table with minimise = NAME")
    _only(obj, ("minimise",), "objective", err)
    minimise = obj.get("minimise", "short_p99_slowdown")
    if minimise not in OBJECTIVES:
        raise err("objective.minimise", minimise, f"one of {', '.join(OBJECTIVES)}")
    return Slo(every, tenants, str(minimise), source)


def _only(d: Mapping[str, Any], keys: Sequence[str], at: str, err: Any) -> None:
    for k in d:
        if k not in keys:
            key = f"{at}.{k}" if at else str(k)
            raise err(key, d[k], f"no such key here; the keys are {', '.join(keys)}")


def _number(v: Any, key: str, lo: float, hi: float, err: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
        raise err(key, v, f"a number from {lo:g} to {hi:g}")
    return float(v)


def _levels(d: Any, at: str, tenant: str | None, err: Any) -> tuple[Level, ...]:
    if not isinstance(d, Mapping):
        raise err(at, d, "a table of levels")
    allowed = TENANT_LEVELS + (NETWORK_LEVELS if tenant is None else ())
    _only(d, allowed, at, err)
    out = []
    for kind, v in d.items():
        key = f"{at}.{kind}"
        if kind == "guarantee":
            if not isinstance(v, Mapping):
                raise err(key, v, "a table such as { share = 0.95, samples = 0.99 }")
            _only(v, GUARANTEE_KEYS, key, err)
            share = _number(v.get("share", 0.95), f"{key}.share", 0.01, 2.0, err)
            samples = _number(v.get("samples", 0.99), f"{key}.samples", 0.0, 1.0, err)
            demand = v.get("demand", "settled")
            if demand not in DEMAND:
                raise err(f"{key}.demand", demand, f"one of {', '.join(DEMAND)}")
            out.append(Level(kind, tenant, 100.0 * samples, True, share, str(demand)))
        elif kind == "short_p99_slowdown":
            out.append(Level(kind, tenant, _number(v, key, 1.0, 1e9, err), False))
        elif kind == "work_conservation":
            out.append(Level(kind, None, 100.0 * _number(v, key, 0.0, 1.0, err), True))
        else:
            out.append(Level(kind, None, _number(v, key, 0.0, 1.0, err), True))
    return tuple(out)
