"""What every HTML report shares: the page's style, a figure as an embedded PNG, a
table as HTML with readable numbers, and the one time axis of a report's charts."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..measure.tables import boundaries
from ..sim.results import Results
from .plotting import legend_outside, mark_times


class TimeAxis:
    """The one time unit of a report's charts, from its longest run."""

    def __init__(self, runs: Mapping[str, Results]):
        longest = max((float(r.summary.get("simulated_s", 0)) for r in runs.values()),
                      default=0.0)
        self.unit, self.scale = ("s", 1.0) if longest >= 2 else (
            ("ms", 1e3) if longest >= 2e-3 else ("us", 1e6))

    def __call__(self, seconds: Any) -> Any:
        return seconds * self.scale

    def label(self) -> str:
        return f"time ({self.unit})"


def finish(ax: Axes, t: TimeAxis | None, r: Results | None = None, below: bool = False,
           legend_title: str | None = None) -> None:
    """Grid, phase marks, time label, and a legend off the data. (Call
    :func:`from_zero` once every panel of a figure is drawn.)"""
    ax.grid(alpha=0.3)
    if t is not None:
        ax.set_xlabel(t.label())
        mark_times(ax, [t(b) for b in boundaries(r)] if r is not None else [])
    legend_outside(ax, below, legend_title)


def png(fig: Figure) -> str:
    """`fig` as a base64 PNG (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def img(fig: Figure, alt: str) -> str:
    """`fig` as an ``<img>`` element with the PNG inline."""
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png(fig)}">'


def panels(n: int, height: float = 3.4) -> tuple[Figure, list[Axes]]:
    """A row of `n` panels sharing the y axis."""
    fig, axes = plt.subplots(1, n, figsize=(6.6 * n, height), squeeze=False, sharey=True)
    return fig, list(axes[0])


def number(v: float) -> str:
    """A table cell: 4 significant digits, tiny values as such."""
    if v != 0 and abs(v) < 0.001:
        return "< 0.001" if v > 0 else "> -0.001"
    return f"{v:.4g}"


def table_html(df: pd.DataFrame, empty: str) -> str:
    """`df` as an HTML table that scrolls sideways when wide; `empty` when it has no rows."""
    if df.empty:
        return f"<p class=note>{html.escape(empty)}</p>"
    table = str(df.to_html(index=False, float_format=number, border=0, classes="data",
                           na_rep="-"))
    return f"<div class=scroll>{table}</div>"


CSS = """
body{font-family:system-ui,sans-serif;max-width:1500px;margin:2em auto;padding:0 2em;
color:#222;box-sizing:border-box}
.scroll{overflow-x:auto;max-width:100%}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #eee}
.kv th{color:#555;font-weight:normal} img{max-width:100%} .note{color:#666}
.runs{display:flex;flex-wrap:wrap;gap:2em} .runs>div{min-width:0;max-width:100%}
.ok{color:#1a7f37} .warn{color:#b3261e;font-weight:600}
"""
