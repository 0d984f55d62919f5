"""The report of ``tenantnet advise``: the answer first (the recommended
configuration, or the closest and the level that binds), its verification on the
held-out seeds beside every scheme's best, the trade-off between the objective and
the service levels as a plot of every configuration that ran on all the search's
seeds (its Pareto front marked), then the ranking and the levels."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ..jobs.outdir import write_parquet
from ..report.page import CSS, img, table_html
from ..report.plotting import legend_outside, save_csv, style
from . import deploy
from . import slo as slo_mod
from .answer import Advice

CELLS_CSS = """
.verdict td.yes{background:#e3f4e3} .verdict td.no{background:#fbe3e3}
.verdict td.maybe{background:#fdf3d6} .verdict td{white-space:nowrap}
.verdict td.conf{white-space:normal;min-width:16em;max-width:30em}
.answer{font-size:1.1em;padding:.6em 1em;border-left:4px solid #1a7f37;background:#f4faf4}
.answer.none{border-color:#b3261e;background:#fbf3f3}
"""


def pareto(points: pd.DataFrame) -> pd.DataFrame:
    """The rows of `points` (``objective``, ``missed``) that no other row beats on
    both (lower is better on each), by objective."""
    p = points.dropna(subset=["objective", "missed"]).sort_values(["missed", "objective"])
    keep, best = [], math.inf
    for i, r in p.iterrows():
        if r["objective"] < best:
            keep.append(i)
            best = r["objective"]
    return p.loc[keep].sort_values("objective")


def tradeoff_figure(a: Advice) -> Figure | None:
    """Each configuration run on every search seed: its objective (mean over seeds)
    against how far it misses the levels (0: meets them), by scheme; the Pareto front
    joined; the recommended (else closest) one ringed."""
    r = a.ranking.dropna(subset=["objective"]) if len(a.ranking) else a.ranking
    if not len(r):
        return None  # nothing ran on every seed, or the objective never had a value
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for i, (scheme, g) in enumerate(r.groupby("scheme", sort=True)):
        ax.scatter(g["objective"], g["missed"], label=scheme, s=28,
                   color=style(i)["color"], alpha=0.85)
    front = pareto(r)
    ax.step(front["objective"], front["missed"], where="post", color="#555", lw=1,
            ls="--", label="Pareto front")
    chosen = a.recommended or a.closest
    if chosen is not None:
        row = r[r["configuration"] == chosen.label()]
        ax.scatter(row["objective"], row["missed"], s=160, facecolors="none",
                   edgecolors="#b3261e" if a.recommended is None else "#1a7f37", lw=2,
                   label="recommended" if a.recommended else "closest")
    if (r["objective"] > 0).all() and r["objective"].max() > 10 * r["objective"].min():
        ax.set_xscale("log")
    ax.set_xlabel(f"objective: {slo_mod.OBJECTIVES[a.minimise]} (mean over seeds)")
    ax.set_ylabel("missed: sum of the levels' shortfalls")
    ax.set_title("every configuration run on all the search's seeds")
    ax.grid(alpha=0.3)
    legend_outside(ax)
    fig.tight_layout()
    return fig


def _cell(text: str) -> str:
    cls = {"✔": "yes", "✘": "no", "≈": "maybe"}.get(text[:1], "")
    return f"<td class={cls}>{html.escape(text)}</td>"


def held_out_html(a: Advice) -> str:
    """A row per verified configuration, a column per level: its held-out cell."""
    h = a.held_out
    if not len(h):
        return "<p class=note>nothing was verified</p>"
    levels = list(dict.fromkeys(h["level"]))
    head = "".join(f"<th>{html.escape(x)}</th>" for x in ["scheme", "configuration",
                                                           *levels])
    rows = []
    for conf, g in h.groupby("configuration", sort=False):
        by = {r.level: r for r in g.itertuples()}
        cells = "".join(_cell(slo_mod.cell(by[lv]) if lv in by else "—") for lv in levels)
        rows.append(f"<tr><td>{html.escape(str(g['scheme'].iloc[0]))}</td>"
                    f"<td class=conf>{html.escape(str(conf))}</td>{cells}</tr>")
    return (f"<div class=scroll><table class=verdict><tr>{head}</tr>{''.join(rows)}"
            "</table></div>")


def write_report(a: Advice, out: Path) -> Path:
    """Writes ``out/report.html``."""
    title = f"tenantnet advise: {a.name}"
    answer = a.summary().splitlines()[0]
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>",
             f"<style>{CSS}{CELLS_CSS}</style><h1>{html.escape(title)}</h1>",
             f"<p class='answer{'' if a.recommended else ' none'}'>"
             f"{html.escape(answer)}</p>",
             f"<p>{a.runs} search runs over {len(a.trials)} configurations, then "
             f"{a.held_out_runs} runs on held-out seeds the search never used.</p>",
             "<h2>On the held-out seeds</h2><p>The best-ranked configurations and "
             "each scheme's best, each level's mean over the held-out seeds with its "
             "95 % interval: ✔ when the whole interval meets the level, ✘ when none "
             "of it does, ≈ when it straddles.</p>", held_out_html(a),
             "<h2>Each scheme</h2>", table_html(a.schemes, "no scheme ran"),
             "<h2>Each scheme's preset</h2><p>On the search's seeds (as many as "
             "successive halving gave it), the level it misses first.</p>",
             table_html(a.presets, "no preset ran"),
             "<h2>The trade-off</h2>",
             _figure(tradeoff_figure(a), a),
             "<h2>The service levels</h2>",
             table_html(pd.DataFrame(a.levels, columns=["level", "rule"]), "none"),
             "<h2>Ranking</h2><p>Every configuration that ran on all the search's "
             "seeds, best first (on the search's seeds).</p>",
             table_html(a.ranking.head(30).drop(columns=["error"], errors="ignore"),
                        "no configuration ran on every search seed")]
    path = out / "report.html"
    path.write_text("\n".join(p for p in parts if p), encoding="utf-8")
    return path


def _figure(fig: Figure | None, a: Advice) -> str:
    if fig is None:
        why = ("no configuration ran on every search seed" if not len(a.ranking) else
               f"no run gave the objective ({slo_mod.OBJECTIVES[a.minimise]})")
        return f"<p class=note>{html.escape(why)}</p>"
    text = img(fig, "objective against shortfall of every configuration")
    plt.close(fig)
    return text



def write(a: Advice, out: str | Path) -> Path:
    """Writes `a`'s tables (Parquet and CSV), its summary, the recommended (else
    closest) configuration's scenario (``recommended.json``), its deployment
    (``deploy/``, :mod:`.deploy`) and ``report.html`` into `out`; the report's path."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    for name in ("trials", "ranking", "held_out", "schemes", "presets"):
        df = getattr(a, name)
        write_parquet(df, d / f"{name}.parquet")
        save_csv(df, d / f"{name}.csv")
    (d / "summary.md").write_text(a.summary() + "\n", encoding="utf-8")
    (d / "recommended.json").write_text(json.dumps(a.scenario, indent=2) + "\n",
                                        encoding="utf-8")
    deploy.write(a, d, "recommended.json")
    return write_report(a, d)
