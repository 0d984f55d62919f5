"""One look for every figure and data file tenantnet writes: series told apart by
colour, line style and marker (so coinciding series still show), legends off the data,
rate axes from 0, plain numbers on log axes, marked phase boundaries, and CSV files
with rounded numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
STYLES = ["-", "--", "-.", ":"]


def style(i: int) -> dict[str, Any]:
    """Colour, line style and marker of series ``i``: no two of the first 32 alike, and
    each series' markers at its own offset along the line, so a series that coincides
    with another still shows."""
    return {"color": f"C{i % 10}", "ls": STYLES[(i // 10) % 4] if i >= 10 else STYLES[i % 2],
            "marker": MARKERS[i % len(MARKERS)], "ms": 4,
            "markevery": (0.013 * (i % 8), 0.1)}


def markers(i: int) -> dict[str, Any]:
    """Series ``i``'s colour and marker without a line: for points each of one run
    (one seed), where a line between them would draw a trend no run measured."""
    return {**style(i), "ls": "none", "markevery": 1, "ms": 6}


def legend_outside(ax: Axes, below: bool = False, title: str | None = None,
                   ncol: int = 2) -> None:
    """A legend off the data: beside the axes, or below them (in ``ncol`` columns)
    where panels stand side by side."""
    n = len(ax.get_legend_handles_labels()[0])
    if not n:
        return
    if below:
        ax.legend(fontsize=7, title=title, title_fontsize=7, loc="upper center",
                  bbox_to_anchor=(0.5, -0.2), ncol=min(n, ncol), borderaxespad=0)
    else:
        ax.legend(fontsize=7, title=title, title_fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """A single-panel figure's title, axis labels, grid and legend (outside, right)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_outside(ax)


def plain_log_ticks(axis: Any) -> None:
    """Ticks of a log axis as plain numbers (1, 2, 5, 10, 20), not powers of ten."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def from_zero(axes: list[Axes]) -> None:
    """Y axes from 0, once every panel is drawn (shared axes then fit all the data)."""
    for ax in axes:
        ax.set_ylim(bottom=0)


def mark_times(ax: Axes, times: list[float], label: str | None = None) -> None:
    """Dotted vertical lines at phase boundaries (in the axis' own unit)."""
    for i, t in enumerate(times):
        ax.axvline(t, color="grey", lw=0.8, ls=":", label=label if i == 0 else None)


def save_png(fig: Figure, path: Path) -> Path:
    """Writes ``fig`` to ``path`` (PNG, 120 dpi, tight) and closes it."""
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def save_csv(df: pd.DataFrame, path: Path) -> Path:
    """Writes ``df`` to ``path`` with numbers to 6 significant digits."""
    df.to_csv(path, index=False, float_format="%.6g")
    return path
