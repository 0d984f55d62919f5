"""What every reproduction does with its figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def save_png(fig: Any, path: Path) -> Path:
    """Writes ``fig`` to ``path`` (PNG, 120 dpi, tight) and closes it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
