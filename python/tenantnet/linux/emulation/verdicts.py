"""``tenantnet compare SCENARIO --emulate``: each scheme an emulation enforces, run on
this machine's Linux and in the simulator (the same scaled scenario), judged by
compare's yardstick side by side: two rows per scheme, ``S (simulated)`` and
``S (emulated)``. The other schemes are listed with why they are not emulated.
One run each (the scenario's seed): an emulation is not repeatable seed for seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ...comparison.compare import Comparison, applicable
from ...comparison.outcome import Outcome
from ...measure import metrics
from ...measure.engagement import engagement
from ...sim.scenario import Scenario
from .fidelity import Fidelity
from .prepare import POLICIES, not_emulated
from .run import emulate, write

LABELS = ("simulated", "emulated")


def compare_emulated(scenario: Scenario, specs: Sequence[str] | None = None,
                     out: Path | None = None, scale: float | None = None,
                     seed: int | None = None, settle: float = metrics.SETTLE_S,
                     say: Callable[[str], None] = lambda s: None,
                     vm_stack: str = "host") -> Comparison:
    """Emulates and simulates `scenario` under each of `specs` that an emulation
    enforces (default: every one that applies), writing each pair of runs into
    ``out/<scheme>/`` (emulated) and ``out/<scheme>/simulated`` when given."""
    data, base = scenario.data(), str(scenario.base_dir)
    why: dict[str, str] = {}
    if specs is None:
        specs, why = applicable(data, base)
        why = {s: f"does not apply: {w}" for s, w in why.items()}
    outcomes: list[Outcome] = []
    ran: list[int] = []
    scales: set[float] = set()
    trust: dict[str, Fidelity] = {}
    for spec in specs:
        if spec not in POLICIES:
            why[spec] = f"not emulated: {not_emulated(spec)}"
            continue
        e = emulate(scenario, spec, None, scale, seed, say, vm_stack)
        if out is not None:
            write(e, out / spec)
        for label, res in zip(LABELS, (e.simulated, e.emulated), strict=True):
            m = metrics.measure(res, e.data.get("workloads", []), settle)
            outcomes.append(Outcome(f"{spec} ({label})", int(res.summary["seed"]), m,
                                    engagement=engagement(spec, res, e.data)))
        ran.append(int(e.simulated.summary["seed"]))
        scales.add(e.scale)
        trust[spec] = e.fidelity
    note = (f"ran once under each scheme an emulation enforces, on this machine's Linux "
            f"(emulated) and in the simulator (simulated), both at scale "
            f"{', '.join(f'{x:g}' for x in sorted(scales)) or '-'}; each scheme's emulated "
            "results are in <scheme>/, the simulated ones in <scheme>/simulated/")
    return Comparison(scenario, sorted(set(ran)), outcomes, why, settle, {}, runs_note=note,
                      trust=trusted(trust), skip_label="")


def trusted(runs: dict[str, Fidelity]) -> str:
    """Whether each scheme's emulated run can be trusted, in a sentence."""
    bad = {s: f for s, f in runs.items() if not f.trusted}
    if not runs:
        return ""
    if not bad:
        return "Every emulated run is trusted: the machine kept up."
    return " ".join(f"The emulated {s} run is {f.verdict}." for s, f in bad.items())
