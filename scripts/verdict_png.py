#!/usr/bin/env python3
"""The picture on the README and the documentation site's first page: the verdict
table of `tenantnet compare` on the leaf-spine example, drawn from a current run.

    python3 scripts/verdict_png.py            # runs the README's compare, then draws
    python3 scripts/verdict_png.py FOLDER     # draws a compare folder's verdicts
    python3 scripts/verdict_png.py --redraw   # draws the CSV again (a change of style)

It writes `docs/img/compare-verdicts.png` and, beside it, `compare-verdicts.csv`: the
cells the picture shows. The picture carries the CSV's digest (PNG metadata), and a
test checks that the CSV holds the verdicts the README's command gives today and that
the picture was drawn from it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
COMMAND = ["compare", "examples/compare-leaf-spine.toml", "--seeds", "5"]
"""The README's command (its folder aside)."""
COLOUR = {"✔": "#dff2df", "✘": "#f9dede", "≈": "#fcf1d2", "": "#f2f2f2"}


def cells(folder: Path) -> list[dict[str, str]]:
    """The verdict table's rows as the picture shows them: scheme, each property's
    cell (`≈ inconclusive:` shortened to `≈`), or the scheme's note."""
    import pandas as pd

    from tenantnet.measure import verdicts
    v = pd.read_parquet(folder / "verdicts.parquet")
    props = [p for p in verdicts.NAMES if any(verdicts.symbol(x) for x in v[p])]
    return [{"scheme": str(r["scheme"]), "note": str(r["note"] or ""),
             **{p: str(r[p]).replace("≈ inconclusive: ", "≈ ") for p in props}}
            for _, r in v.iterrows()]


def digest(csv_text: str) -> str:
    return hashlib.sha256(csv_text.encode()).hexdigest()


def draw(rows: list[dict[str, str]], out: Path, stamp: str) -> None:
    """The table of judged schemes, the notes of the others beneath it, whole."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tenantnet.measure import verdicts
    props = [k for k in rows[0] if k not in ("scheme", "note")]
    judged = [r for r in rows if not r["note"]]
    notes = [f"{r['scheme']}: {r['note']}" for r in rows if r["note"]]
    cols = ["scheme", *props]
    text = [[r["scheme"], *(r[p] for p in props)] for r in judged]
    fills = [["white", *(COLOUR[verdicts.symbol(r[p])] for p in props)] for r in judged]
    widths = [max(len(x[i]) for x in [cols, *text]) + 3 for i in range(len(cols))]
    lines = len(judged) + 3 + len(notes)
    fig = plt.figure(figsize=(sum(widths) * 0.082, 0.32 * lines))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")
    t = ax.table(cellText=text, cellColours=fills, colLabels=cols, colLoc="left",
                 cellLoc="left", loc="upper center",
                 colWidths=[w / sum(widths) for w in widths])
    t.auto_set_font_size(False)
    t.set_fontsize(9.5)
    t.scale(1, 1.35)
    for (row, col), cell in t.get_celld().items():
        cell.set_edgecolor("#d0d0d0")
        if row == 0 or col == 0:
            cell.get_text().set_fontweight("bold")
    fig.canvas.draw()
    box = t.get_window_extent().transformed(fig.transFigure.inverted())
    below = "\n".join([*notes, "each cell: the mean over seeds and its 95 % interval; ✔ the "
                       "whole interval passes, ✘ none of it does, ≈ inconclusive: it "
                       "straddles the threshold, or cannot be told from it"])
    caption = fig.text(box.x0 + 0.003, box.y0 - 0.02, below, fontsize=9, color="#444",
                       va="top", linespacing=1.6)
    fig.canvas.draw()
    from matplotlib.transforms import Bbox
    both = Bbox.union([t.get_window_extent(), caption.get_window_extent()])
    fig.savefig(out, dpi=110, metadata={"Description": f"tenantnet verdicts {stamp}"},
                bbox_inches=both.transformed(fig.dpi_scale_trans.inverted()).padded(0.05))
    plt.close(fig)


def write(folder: Path) -> None:
    """The CSV and the picture of `folder`'s verdicts, into docs/img."""
    import pandas as pd
    rows = cells(folder)
    csv = pd.DataFrame(rows).to_csv(index=False)
    (IMG / "compare-verdicts.csv").write_text(csv, encoding="utf-8")
    draw(rows, IMG / "compare-verdicts.png", digest(csv))
    print(f"wrote {IMG / 'compare-verdicts.png'} and compare-verdicts.csv")


def main(args: list[str]) -> None:
    if args == ["--redraw"]:
        import pandas as pd
        csv = (IMG / "compare-verdicts.csv").read_text(encoding="utf-8")
        rows = pd.read_csv(IMG / "compare-verdicts.csv", dtype=str, keep_default_na=False)
        draw(rows.to_dict("records"), IMG / "compare-verdicts.png", digest(csv))
        return
    if args:
        write(Path(args[0]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "examples", Path(tmp) / "examples")
        subprocess.run([sys.executable, "-m", "tenantnet", *COMMAND, "--out",
                        str(Path(tmp) / "compare")], cwd=tmp, check=True)
        write(Path(tmp) / "compare")


if __name__ == "__main__":
    main(sys.argv[1:])
