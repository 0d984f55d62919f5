"""``tenantnet crosscheck linux [SCENARIO ...]``: scenarios run on this machine's kernel
(:func:`tenantnet.linux.emulation.emulate`, several times) and by the simulator, flow
by flow.

Each repeat emulates the scenario: its flows on the kernel's TCP in network
namespaces, with the scenario's congestion control where the kernel has it. A kernel
starts each flow a little after its scheduled time (its sender's loop wakes late: half
a millisecond at the median on two cores), which at 1 Gb/s is tens of kilobytes: more
than a short flow. So the simulator runs each repeat's flows again, each starting
when the kernel's started (a trace of the twin's flows with the measured starts), and
both sides' completion times run from the flow's actual start. The simulator's run at
the scheduled starts is reported beside it.

The kernel's own spread over the repeats is the yardstick: a figure is compared with
the median of the repeats' figures, and the report says how far the repeats
themselves range. With no SCENARIO the built-in cases run (``linux-cases/``): incasts,
long flows and leaf-spines with web-search and Hadoop flows, NewReno and CUBIC.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ScenarioError
from ..linux.emulation.kinds import CROSSCHECK_WIRE, Wire
from ..sim.api import run
from ..sim.results import Results
from ..sim.scenario import Scenario

CASES = Path(__file__).parent / "linux-cases"
"""The built-in cases, a scenario each."""
REPEATS = 5
"""Emulations per scenario: the kernel's spread over them is the yardstick."""
MEDIAN_BOUND = 0.15
"""How far the simulator's FCT median may be from the kernel's (relative)."""
P99_BOUND = 0.25
"""How far its FCT p99 may be."""
CPU_WAIT_LIMIT = 0.4
"""The most of a repeat's time runnable tasks may wait for a core (``/proc/pressure/
cpu``) for its completion times to be trusted. ``emulate`` shows it as context, since
its rates hold on a busy machine; a flow's completion time does not: with a real-time
busy loop on one of two cores, tasks waited up to 78 % of the time and the Hadoop
leaf-spine's p99 read 5.3-71 ms against 5.3 ms quiet, while every other measure
stayed within its limit. Quiet repeats waited 8-15 % at most, case by case."""
ALONE_LIMIT = 0.15
"""How much longer than the simulator's the kernel's completion times may be, at the
median, for the flows that met no queue in the simulator (each within
``ALONE_SLOWDOWN`` of its ideal time), for a repeat to be trusted: such a flow takes
its bytes' time at the link's rate on both sides unless the machine cannot forward the
case at its rates. On the 2-vCPU Intel Xeon VM, quiet, the web-search leaf-spine at
1 Gb/s read 29-44 % over three sittings, and its kernel median 28-36 % above the
simulator's, where at 0.5 Gb/s (``--scale 0.5``) both agreed (4 %; the median +6 %);
the Hadoop leaf-spine read 1-5 %, with tasks waiting for a core no more (27 against
36 % of the time)."""
ALONE_SLOWDOWN = 1.1
"""A flow met no queue in the simulator when its FCT is within this of its ideal."""
ALONE_FLOWS = 10
"""The fewest such flows the judgement takes."""
WIRE = CROSSCHECK_WIRE
"""The emulations' wire (:data:`tenantnet.linux.emulation.kinds.CROSSCHECK_WIRE`)."""


def cases() -> list[Path]:
    """The built-in cases' scenario files, in the order they run."""
    order = ["incast-newreno", "incast-cubic", "long-newreno", "long-cubic",
             "leafspine-websearch", "leafspine-hadoop"]
    return [CASES / f"{n}.toml" for n in order]


@dataclass
class Repeat:
    """One emulation and the simulator's run at its flows' starts."""

    flows: pd.DataFrame
    """A row per sized flow the kernel started: flow_id, size_bytes, late_s, and the
    kernel's fct_s,
    retransmits, timeouts beside the simulator's at the kernel's starts (``sim_``)."""
    trusted: bool
    """The emulation's own verdict, and tasks waited for a core at most
    ``CPU_WAIT_LIMIT`` of the time."""
    verdict: str
    kernel_trace: pd.DataFrame | None
    sim_trace: pd.DataFrame | None
    cpu_waiting: float | None = None
    """The share of the time runnable tasks waited for a core (None: not measured)."""
    alone_excess: float | None = None
    """How much longer the kernel took than the simulator, at the median, for the flows
    that met no queue in the simulator (None: fewer than ``ALONE_FLOWS``)."""


@dataclass
class Case:
    """A scenario's cross-check: the twin (the simulator at the scheduled starts) and
    the repeats."""

    name: str
    transport: str
    twin: Results
    repeats: list[Repeat] = field(default_factory=list)


def replay(twin: Scenario, starts: pd.DataFrame, folder: Path) -> Scenario:
    """`twin` with its flows as a trace, each starting `late_s` after its time (flows
    the kernel did not start keep theirs)."""
    t = twin.trace().to_pandas()
    late = starts.set_index("flow_id")["late_s"]
    shift = t["id"].map(late).fillna(0.0).to_numpy()
    t["start"] = t["start"].to_numpy() + shift
    t["stop"] = t["stop"].to_numpy() + np.where(t["stop"].isna(), 0.0, shift)
    path = folder / "flows.parquet"
    t.to_parquet(path, index=False)
    d = dict(twin.data())
    d["workloads"] = [{"kind": "trace", "file": str(path)}]
    return Scenario.from_dict(d, twin.source, str(folder))


def sized(flows: pd.DataFrame) -> pd.DataFrame:
    """The sized flows, by id."""
    return flows[flows["size_bytes"].notna()].set_index("flow_id").sort_index()


def run_replay(twin: Scenario, starts: pd.DataFrame, folder: Path) -> Results:
    """The simulator's run of `twin` with each flow starting `late_s` after its time
    (:func:`replay`; its trace is written into `folder`)."""
    return run(replay(twin, starts, folder))


def one_repeat(twin: Scenario, e: Any, folder: Path) -> Repeat:
    """A :class:`Repeat` from emulation `e` of `twin`."""
    sim = run_replay(twin, e.starts, folder)
    k, s = sized(e.emulated.flows), sized(sim.flows)
    k = k[k.index.isin(e.starts["flow_id"])]  # the flows that started in the run
    late = e.starts.set_index("flow_id")["late_s"].reindex(k.index).fillna(0.0)
    out = pd.DataFrame({"size_bytes": k["size_bytes"].astype(float), "late_s": late,
                        "fct_s": k["fct_s"].astype(float) - late,
                        "retransmits": k["retransmits"].astype(float),
                        "timeouts": k["timeouts"].astype(float),
                        "sim_fct_s": s["fct_s"].astype(float).reindex(k.index),
                        "sim_retransmits": s["retransmits"].astype(float).reindex(k.index),
                        "sim_timeouts": s["timeouts"].astype(float).reindex(k.index),
                        "sim_ideal_fct_s": s["ideal_fct_s"].astype(float).reindex(k.index)})
    cpu = e.fidelity.cpu
    wait = None if cpu is None else cpu.waiting
    excess = alone_excess(out)
    trusted, verdict = judge(e.fidelity.trusted, e.fidelity.verdict, wait, excess)
    return Repeat(out.reset_index(), trusted, verdict, e.emulated.flow_trace,
                  sim.flow_trace, wait, excess)


def alone_excess(flows: pd.DataFrame) -> float | None:
    """How much longer the kernel took than the simulator, at the median, for the flows
    that met no queue in the simulator (`fct_s`, `sim_fct_s`, `sim_ideal_fct_s`); None
    when fewer than ``ALONE_FLOWS`` did."""
    alone = flows[flows["sim_fct_s"] <= ALONE_SLOWDOWN * flows["sim_ideal_fct_s"]]
    ratio = (alone["fct_s"] / alone["sim_fct_s"]).dropna()
    return float(ratio.median()) - 1 if len(ratio) >= ALONE_FLOWS else None


def judge(trusted: bool, verdict: str, wait: float | None,
          excess: float | None) -> tuple[bool, str]:
    """Whether a repeat's completion times are trusted, and its verdict: the emulation's
    own, then the CPU's wait (``CPU_WAIT_LIMIT``), then the flows that met no queue
    (``ALONE_LIMIT``)."""
    if not trusted:
        return False, verdict
    if wait is not None and wait > CPU_WAIT_LIMIT:
        return False, (f"NOT TRUSTED: the machine was too busy for these completion times "
                       f"(tasks waited for a core {wait:.0%} of the time, over "
                       f"{CPU_WAIT_LIMIT:.0%})")
    if excess is not None and excess > ALONE_LIMIT:
        return False, (f"NOT TRUSTED: the machine did not forward at the scenario's rates "
                       f"(flows that met no queue in the simulator took {excess:.0%} longer "
                       f"on the kernel, over {ALONE_LIMIT:.0%}): a smaller --scale lowers "
                       "them")
    return True, verdict


Progress = Callable[[str], None]


def run_case(path: Path, repeats: int = REPEATS, scale: float | None = None,
             say: Progress = lambda s: None, done: int = 0, total: int = 0,
             wire: Wire = WIRE) -> Case:
    """Cross-checks the scenario at `path` over `repeats` emulations with `wire`; `say`
    hears each repeat and an estimate of what is left (`done` of `total` emulations
    before it)."""
    # deferred: the emulation loads pyroute2, the optional ``linux`` extra
    from ..linux.emulation import emulate
    sc = Scenario.from_file(path)
    case: Case | None = None
    with tempfile.TemporaryDirectory(prefix="tenantnet-xl-") as tmp:
        for i in range(repeats):
            t0 = time.monotonic()
            e = emulate(sc, scale=scale, wire=wire)
            twin = Scenario.from_dict(e.data, sc.source, str(sc.base_dir))
            if case is None:
                case = Case(str(sc.data().get("name", path.stem)), e.transport, e.simulated)
            folder = Path(tmp) / str(i)
            folder.mkdir()
            case.repeats.append(one_repeat(twin, e, folder))
            took = time.monotonic() - t0
            left = (total - done - i - 1) * took if total else (repeats - i - 1) * took
            r = case.repeats[-1]
            wait = "" if r.cpu_waiting is None else \
                f", tasks waited for a core {r.cpu_waiting:.0%} of the time"
            say(f"{case.name}: repeat {i + 1} of {repeats} in {took:.0f} s "
                f"({r.verdict.split(':')[0]}{wait})"
                + (f"; about {left / 60:.0f} min left" if left > 60 else ""))
    assert case is not None
    return case


def check_repeats(repeats: int) -> None:
    """ScenarioError unless `repeats` gives the kernel a spread (at least 2)."""
    if repeats < 2:
        raise ScenarioError(f"--repeats {repeats}: at least 2, for the kernel's spread")


def crosscheck_linux(paths: list[Path], repeats: int = REPEATS, scale: float | None = None,
                     say: Progress = lambda s: None, wire: Wire = WIRE) -> list[Case]:
    """Every scenario in `paths` (the built-in cases when empty) cross-checked, the
    emulations' wire as `wire` says."""
    check_repeats(repeats)
    paths = paths or cases()
    return [run_case(p, repeats, scale, say, i * repeats, len(paths) * repeats, wire)
            for i, p in enumerate(paths)]


def _q(s: pd.Series, q: float) -> float:
    v = s.dropna()
    return float(v.quantile(q)) if len(v) else float("nan")


def _window(trace: pd.DataFrame | None) -> tuple[float, float]:
    """A trace's median window (KB) and smoothed RTT (µs)."""
    if trace is None or not len(trace):
        return float("nan"), float("nan")
    return (float(trace["cwnd_bytes"].astype(float).median()) / 1e3,
            float(trace["srtt_s"].astype(float).median()) * 1e6)


def verdict(sim: float, kernel: float, spread: tuple[float, float], bound: float,
            sim_spread: tuple[float, float] | None = None) -> str:
    """✔ within `bound` of the kernel's; ≈ outside it but within what the repeats
    themselves vary: the kernel's range over them holds the simulator's figure, or
    overlaps the simulator's own range (`sim_spread`: its runs at each repeat's
    starts); ✘ neither."""
    if not np.isfinite(sim) or not np.isfinite(kernel) or kernel <= 0:
        return ""
    if abs(sim / kernel - 1) <= bound:
        return "✔"
    lo, hi = sim_spread or (sim, sim)
    return "≈" if spread[0] <= hi and lo <= spread[1] else "✘"


def summary(case: Case) -> dict[str, Any]:
    """A case's row: each figure the kernel's (the median over repeats, with its range)
    and the simulator's at the kernel's starts (the median over repeats) and at the
    scheduled starts, their relative difference and the verdicts. The repeats are the
    trusted ones where at least two are (``used``), else all of them."""
    trusted = [r for r in case.repeats if r.trusted]
    reps = trusted if len(trusted) >= 2 else case.repeats
    waits = [r.cpu_waiting for r in case.repeats if r.cpu_waiting is not None]
    excess = [r.alone_excess for r in case.repeats if r.alone_excess is not None]
    row: dict[str, Any] = {"case": case.name, "transport": case.transport,
                           "repeats": len(case.repeats), "trusted": len(trusted),
                           "used": len(reps),
                           "cpu_waiting_max": max(waits) if waits else float("nan"),
                           "alone_excess_max": max(excess) if excess else float("nan"),
                           "flows": len(case.repeats[0].flows)}
    sched = sized(case.twin.flows)["fct_s"].astype(float) * 1e3
    for name, q, bound in (("median", 0.5, MEDIAN_BOUND), ("p99", 0.99, P99_BOUND)):
        k = [_q(r.flows["fct_s"] * 1e3, q) for r in reps]
        s = [_q(r.flows["sim_fct_s"] * 1e3, q) for r in reps]
        km, sm = float(np.nanmedian(k)), float(np.nanmedian(s))
        spread = (float(np.nanmin(k)), float(np.nanmax(k)))
        own = (float(np.nanmin(s)), float(np.nanmax(s)))
        row |= {f"kernel_{name}_ms": km, f"kernel_{name}_min_ms": spread[0],
                f"kernel_{name}_max_ms": spread[1], f"sim_{name}_ms": sm,
                f"sim_{name}_min_ms": own[0], f"sim_{name}_max_ms": own[1],
                f"sim_{name}_vs_kernel": sm / km - 1 if km > 0 else float("nan"),
                f"sim_{name}_verdict": verdict(sm, km, spread, bound, own),
                f"scheduled_{name}_ms": _q(sched, q)}
    ratios = pd.concat([r.flows["sim_fct_s"] / r.flows["fct_s"] for r in reps])
    row["flow_ratio_median"] = _q(ratios, 0.5)
    row["completed_kernel"] = float(np.mean([r.flows["fct_s"].notna().sum()
                                             for r in reps]))
    row["completed_sim"] = float(np.mean([r.flows["sim_fct_s"].notna().sum()
                                          for r in reps]))
    for col in ("retransmits", "timeouts"):
        row[f"kernel_{col}_per_flow"] = float(np.mean([r.flows[col].mean()
                                                       for r in reps]))
        row[f"sim_{col}_per_flow"] = float(np.mean([r.flows[f"sim_{col}"].mean()
                                                    for r in reps]))
    for side, traces in (("kernel", [r.kernel_trace for r in reps]),
                         ("sim", [r.sim_trace for r in reps])):
        w = np.array([_window(t) for t in traces])
        for j, col in enumerate(("window_kb", "srtt_us")):
            ok = w[:, j][np.isfinite(w[:, j])]
            row[f"{side}_{col}"] = float(np.median(ok)) if len(ok) else float("nan")
    return row


def table(cases_run: list[Case]) -> pd.DataFrame:
    """A row per case (:func:`summary`)."""
    return pd.DataFrame([summary(c) for c in cases_run])


def every_flow(cases_run: list[Case]) -> pd.DataFrame:
    """Every sized flow of every repeat: the case, the repeat, and the flow's columns
    (:class:`Repeat`), with its FCT in the simulator at the scheduled starts."""
    out = []
    for c in cases_run:
        sched = sized(c.twin.flows)["fct_s"].astype(float)
        for i, r in enumerate(c.repeats):
            f = r.flows.copy()
            f.insert(0, "repeat", i + 1)
            f.insert(0, "case", c.name)
            f["scheduled_fct_s"] = f["flow_id"].map(sched)
            out.append(f)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _ms(v: float) -> str:
    return "" if not np.isfinite(v) else f"{v:.3g}"


def _pct(v: float) -> str:
    return "" if not np.isfinite(v) else f"{v:+.0%}"


def _ranged(t: pd.DataFrame, side: str, name: str) -> list[str]:
    return [f"{_ms(r[f'{side}_{name}_ms'])} [{_ms(r[f'{side}_{name}_min_ms'])}-"
            f"{_ms(r[f'{side}_{name}_max_ms'])}]" for _, r in t.iterrows()]


def _marked(t: pd.DataFrame, name: str) -> list[str]:
    return [f"{_pct(v)} {m}" for v, m in zip(t[f"sim_{name}_vs_kernel"],
                                              t[f"sim_{name}_verdict"], strict=True)]


def report(t: pd.DataFrame) -> str:
    """The table in words, as the command prints it: the FCTs, then loss recovery and
    the window, then what the marks mean."""
    fct = pd.DataFrame({
        "case": t["case"], "flows": t["flows"],
        "p50 kernel (ms)": _ranged(t, "kernel", "median"),
        "p50 sim": _ranged(t, "sim", "median"), "vs": _marked(t, "median"),
        "p99 kernel (ms)": _ranged(t, "kernel", "p99"),
        "p99 sim": _ranged(t, "sim", "p99"), "vs ": _marked(t, "p99"),
        "trusted": [f"{a} of {b}" for a, b in zip(t["trusted"], t["repeats"], strict=True)],
    })
    loss = pd.DataFrame({
        "case": t["case"],
        "transport": t["transport"].str.split(" ").str[0],
        "retransmits/flow kernel, sim": [f"{a:.1f}, {b:.1f}" for a, b in zip(
            t["kernel_retransmits_per_flow"], t["sim_retransmits_per_flow"], strict=True)],
        "timeouts/flow kernel, sim": [f"{a:.2f}, {b:.2f}" for a, b in zip(
            t["kernel_timeouts_per_flow"], t["sim_timeouts_per_flow"], strict=True)],
        "window KB kernel, sim": [f"{_ms(a)}, {_ms(b)}" if np.isfinite(a) else "" for a, b in
                                  zip(t["kernel_window_kb"], t["sim_window_kb"], strict=True)],
        "srtt µs kernel, sim": [f"{_ms(a)}, {_ms(b)}" if np.isfinite(a) else "" for a, b in
                                zip(t["kernel_srtt_us"], t["sim_srtt_us"], strict=True)],
        "flow by flow sim/kernel": [f"{v:.2f}" for v in t["flow_ratio_median"]],
    })
    both = ((t["sim_median_verdict"] == "✔") & (t["sim_p99_verdict"] == "✔")).sum()
    lines = [
        "FCT from each flow's first byte, each side's median over the repeats [their "
        "range]: the kernel's, and the simulator's with each flow starting when the "
        "kernel's did",
        fct.to_string(index=False), "",
        loss.to_string(index=False), "",
        f"{both} of {len(t)} cases within both bounds (median {MEDIAN_BOUND:.0%}, p99 "
        f"{P99_BOUND:.0%}); ✔ within the bound, ≈ outside it but within what the "
        "repeats vary (the kernel's range holds the simulator's figure or meets its "
        "range), ✘ neither",
    ]
    if (t["trusted"] < t["repeats"]).any():
        lines.append(untrusted_note(t))
    return "\n".join(lines)


def untrusted_note(t: pd.DataFrame) -> str:
    """What the report says when some repeats of the table `t` were not trusted."""
    few = t[t["used"] > t["trusted"]]["case"].tolist()
    wait, excess = t["cpu_waiting_max"].max(), t["alone_excess_max"].max()
    why = []
    if wait > CPU_WAIT_LIMIT:
        why.append(f"the machine was too busy for them; tasks waited for a core up to "
                   f"{wait:.0%} of the time")
    if excess > ALONE_LIMIT:
        slow = t[t["alone_excess_max"] > ALONE_LIMIT]["case"].tolist()
        why.append(f"the machine did not forward {', '.join(slow)} at its rates; flows "
                   f"that met no queue in the simulator took up to {excess:.0%} longer on "
                   "the kernel: a smaller --scale lowers the rates")
    again = ("with a smaller --scale, or on a quieter machine" if excess > ALONE_LIMIT
             else "on a quieter machine")
    return (f"some repeats were NOT TRUSTED ({'; '.join(why) or 'the emulation said why'}"
            "): each case's figures are from its trusted repeats"
            + (f", but for {', '.join(few)}, with fewer than two, from all of them: "
               f"run it again {again}" if few else ""))


def plot(cases_run: list[Case], path: Path) -> None:
    """Each case's FCT distribution (from each flow's first byte): every kernel repeat,
    the simulator at the kernel's starts in each, and the simulator at the scheduled
    starts; log time."""
    # deferred for start-up: loads matplotlib
    import matplotlib.pyplot as plt

    from ..report.plotting import plain_log_ticks, save_png, style
    n = len(cases_run)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows + 0.8),
                             squeeze=False)
    for ax, c in zip(axes.flat, cases_run, strict=False):
        sched = sized(c.twin.flows)["fct_s"].astype(float).dropna() * 1e3
        for i, r in enumerate(c.repeats):
            for j, (col, label) in enumerate((("fct_s", "kernel"),
                                              ("sim_fct_s", "simulator at the kernel's starts"))):
                v = np.sort(r.flows[col].dropna().to_numpy() * 1e3)
                st = style(j)
                ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", lw=1,
                        color=st["color"], ls=st["ls"], alpha=0.6,
                        label=label if i == 0 else None)
        v = np.sort(sched.to_numpy())
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", lw=1.5,
                color=style(2)["color"], ls=":", label="simulator at the scheduled starts")
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_title(f"{c.name} ({len(c.repeats)} repeats)", fontsize=10)
        ax.set_xlabel("FCT (ms)")
        ax.set_ylabel("fraction of flows")
        ax.set_ylim(0, 1.02)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.08 if rows == 1 else 0.04, 1, 1))
    save_png(fig, path)
