"""``tenantnet demo``: the built-in scenario and its report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .report import write_report
from .results import Results
from .scenario import Scenario

INTRO = (
    "Two tenants share a 2:1 oversubscribed leaf-spine fabric (4 leaves x 8 hosts at "
    "10 Gb/s, 2 spines) with DCTCP and no isolation: <b>analytics</b> runs 16 long-lived "
    "flows from leaf0 to leaf1, <b>web</b> issues web-search flows (Poisson, 30 % load) "
    "between all hosts. Results files sit next to this report."
)


def run_demo(out: Path, quiet: bool,
             runner: Callable[[Scenario, str, bool], Results]) -> Path:
    """Runs the demo scenario, writes its results and report into ``out``."""
    res = runner(Scenario.builtin("demo"), "demo", quiet)
    res.write(out)
    return write_report({"no isolation": res}, out / "report.html",
                        "tenantnet demo: two tenants, one fabric", INTRO)
