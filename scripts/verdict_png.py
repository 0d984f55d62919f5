#!/usr/bin/env python3
"""Draws the verdict table of a `tenantnet compare` folder as a PNG (the picture on the
README and the documentation site's first page):

    python3 scripts/verdict_png.py compare docs/img/compare-verdicts.png
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(folder: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from tenantnet import verdicts
    v = pd.read_parquet(folder / "verdicts.parquet")
    props = [p for p in verdicts.NAMES if any(verdicts.symbol(x) for x in v[p])]
    colour = {"✔": "#dff2df", "✘": "#f9dede", "≈": "#fcf1d2", "": "#f2f2f2"}
    rows, fills = [], []
    for _, r in v.iterrows():
        if r["note"]:
            rows.append([r["scheme"], str(r["note"])] + [""] * (len(props) - 1))
            fills.append(["white"] + ["#fdfdfd"] * len(props))
        else:
            rows.append([r["scheme"], *(str(r[p]).replace("≈ inconclusive: ", "≈ ")
                                        for p in props)])
            fills.append(["white", *(colour[verdicts.symbol(r[p])] for p in props)])
    cols = ["scheme", *props]
    judged = [r for r, f in zip(rows, fills, strict=True) if f[1] != "#fdfdfd"]
    chars = [max(len(str(r[i])) for r in [cols, *judged]) for i in range(len(cols))]
    widths = [c + 3 for c in chars]
    fig = plt.figure(figsize=(sum(widths) * 0.082, 0.32 * (len(rows) + 2)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")
    for r, f in zip(rows, fills, strict=True):
        if f[1] == "#fdfdfd":  # a note: its words spread over the row's cells
            r[1:] = _spread(r[1], widths[1:])
    t = ax.table(cellText=rows, cellColours=fills, colLabels=cols, colLoc="left",
                 cellLoc="left", loc="upper center",
                 colWidths=[w / sum(widths) for w in widths])
    t.auto_set_font_size(False)
    t.set_fontsize(9.5)
    t.scale(1, 1.35)
    for (row, col), cell in t.get_celld().items():
        cell.set_edgecolor("#d0d0d0")
        if row and fills[row - 1][1] == "#fdfdfd" and col:
            cell.visible_edges = "TB" + ("L" if col == 1 else "") + (
                "R" if col == len(cols) - 1 else "")
            cell.PAD = 0.01 if col > 1 else cell.PAD
        if row == 0 or col == 0:
            cell.get_text().set_fontweight("bold")
    fig.canvas.draw()
    box = t.get_window_extent().transformed(fig.transFigure.inverted())
    caption = fig.text(box.x0 + 0.003, box.y0 - 0.02, "each cell: the mean over seeds and "
                       "its 95 % interval; ✔ the whole interval passes, ✘ none of it does, "
                       "≈ inconclusive: it straddles the threshold", fontsize=9,
                       color="#444", va="top")
    fig.canvas.draw()
    from matplotlib.transforms import Bbox
    both = Bbox.union([t.get_window_extent(), caption.get_window_extent()])
    fig.savefig(out, dpi=110, bbox_inches=both.transformed(
        fig.dpi_scale_trans.inverted()).padded(0.05))
    plt.close(fig)


def _spread(text: str, widths: list[int]) -> list[str]:
    """`text`'s words laid into cells of `widths` characters, in order."""
    out, words = [], text.split()
    for w in widths:
        line = ""
        while words and len(line) + len(words[0]) + 1 <= w - 1:
            line = f"{line} {words.pop(0)}".strip()
        out.append(line)
    if words:
        out[-1] = (out[-1] + " …").strip()
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
