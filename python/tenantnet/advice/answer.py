"""What `tenantnet.advise` answers (:class:`Advice`): the tables of a search, the
recommended configuration or the closest, and the answer in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .search import Config


@dataclass
class Advice:
    """What :func:`advise` found: every configuration tried (``trials``), those run on
    every search seed ranked best first (``ranking``), the held-out verification
    (``held_out``: a row per configuration and level), each scheme's best
    (``schemes``), and the recommended configuration (None when nothing tried meets
    the levels on held-out seeds; ``closest`` is then the nearest)."""
    trials: pd.DataFrame
    ranking: pd.DataFrame
    held_out: pd.DataFrame
    schemes: pd.DataFrame
    recommended: Config | None
    closest: Config | None
    binding: str
    runs: int
    held_out_runs: int
    scenario: dict[str, Any]
    """The recommended (else closest) configuration's scenario."""
    name: str = ""
    """The scenario's name."""
    minimise: str = "short_p99_slowdown"
    levels: tuple[tuple[str, str], ...] = ()
    """Each level judged (name, rule)."""
    base_dir: str = "."
    """The folder the scenario's own files are read from."""
    presets: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Each scheme's preset on the search's seeds (as many as halving gave it): a
    row per scheme with its verdict, the level it misses first."""

    def summary(self) -> str:
        """The answer in a few lines."""
        lines = []
        if self.recommended is not None:
            lines.append(f"recommended: {self.recommended.label()}: meets every level on "
                         f"the held-out seeds")
        elif self.closest is not None:
            lines.append(f"no configuration tried meets every level on the held-out "
                         f"seeds; closest: {self.closest.label()}, bound by {self.binding}")
        if len(self.presets):
            lines.append("each scheme's preset on the search's seeds:")
            lines += [f"  {r.scheme:<15} {r.verdict}" for r in self.presets.itertuples()]
        lines.append("each scheme's best configuration on the held-out seeds:")
        for r in self.schemes.itertuples():
            lines.append(f"  {r.scheme:<15} {r.verdict}")
            if r.configuration and r.configuration != r.scheme:
                lines.append(f"  {'':<15} ({r.configuration})")
        lines.append(f"{self.runs} search runs, {self.held_out_runs} held-out runs, "
                     f"{len(self.trials)} configurations")
        return "\n".join(lines)
