"""One comparison's runs: each scheme's run under each seed (:class:`Outcome`) and
what they were (:class:`Runs`), the data its tables are built from."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..measure import metrics
from ..measure.engagement import Engagement
from ..sim.scenario import Scenario

COUNTERS = ("guarantees_all_pct", "goodput_gbps", "drops", "evictions", "ecn_marks",
            "control_packets", "qct_p50_ms", "qct_p99_ms", "cpu_cycles")
"""Figures of a run shown per scheme as their mean over seeds, beside the verdicts'."""


@dataclass
class Outcome:
    """One scheme's run under one seed: its measures, or why it has none."""
    scheme: str
    seed: int | None
    measures: metrics.Measures | None = None
    error: str = ""
    """Why the scheme did not run ("does not apply: …") or failed."""
    engagement: Engagement | None = None
    wall_s: float = 0.0
    """Wall time of the simulation."""
    write_s: float = 0.0
    """Wall time spent writing the run's result files."""
    analysis_s: float = 0.0
    """Wall time spent measuring the run and checking what its scheme did."""


@dataclass
class Runs:
    """A comparison's runs: the scenario, the seeds, every run's outcome and what
    the report says about how they were made."""
    scenario: Scenario
    seeds: list[int]
    outcomes: list[Outcome]
    skipped: dict[str, str] = field(default_factory=dict)
    """The schemes that do not apply, and why."""
    settle: float = metrics.SETTLE_S
    choices: dict[str, list[str]] = field(default_factory=dict)
    """What each scheme's preset chose for this scenario, in words."""
    runs_note: str = ""
    """How the runs were made and where their results are, for the report (default:
    each scheme under each seed, in ``<scheme>/seed-<N>/``)."""
    trust: str = ""
    """Whether the runs can be trusted, where a machine's timing decides it (emulated
    runs: :mod:`tenantnet.linux.emulation.fidelity`); shown after the verdicts."""
    skip_label: str = "does not apply"
    """What a skipped scheme's note says before its reason ("" for none: the reasons
    say it themselves)."""
    @property
    def schemes(self) -> list[str]:
        """The schemes that ran (or failed), in order."""
        return list(dict.fromkeys(o.scheme for o in self.outcomes))
