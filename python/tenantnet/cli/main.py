"""The ``tenantnet`` command.

Every command either succeeds or prints one ``error:`` line (naming the file, key and
value at fault and what was expected) and exits with code 2, having written nothing.
A failure that is tenantnet's own fault prints one line too, exit code 1, and the
traceback only with ``TENANTNET_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from .. import _core
from ..errors import ScenarioError
from ..jobs import progress
from ..jobs.interrupts import stop_once
from ..jobs.outdir import add_to, listed
from ..reproduce import BOTH_PROFILES, REPRODUCTIONS, paper_transport
from ..reproduce import qshare_bench as qb
from ..sim import schemes
from ..sim.api import advance
from ..sim.eta import reproducing
from ..sim.results import TABLES, Results
from ..sim.scenario import TIES_ENV, TRANSPORT_ENV, Scenario, env_setting, schema, transport_profile
from .advise import add_commands as add_advise
from .compare import add_commands as add_compare
from .crosscheck import add_command as add_crosscheck
from .deploy import add_commands as add_deploy
from .emulate import add_command as add_emulate
from .qshare import add_commands as add_qshare
from .tools import (
    CliError,
    Parser,
    add_force,
    check_out,
    checked_scenario,
    count_arg,
    fail,
    int_arg,
    number_arg,
    publish,
    seed_arg,
    size_arg,
)

BENCHMARKS = {
    "permutation": "htsim's DCTCP permutation, fat-tree k=12, FIFO ports",
    "permutation-dwrr8": "the same with 8 DWRR queues and BarberQ on every switch port",
    "qshare-place": "QShare placement time per tenant, k=16 fat-tree filled to full load",
    "fct": "flow completion times: 144-host 100 Gb/s leaf-spine, web search at 70 % load, "
           "10 000 flows (BarberQ's macrobenchmark)",
    "trinity": "64-host leaf-spine, 10 tenants x 8 VMs, all-to-all long flows: Trinity "
               "against no enforcement on the same switches, runs interleaved",
    "c2qos": "one host with 16 VMs (TCP, 1024 and 64 B) under C2TB MIN-MAX + HBS on one "
             "PMD core, against the same scenario without the CPU model, runs interleaved",
    "qshare-rebind": "k=8 fat-tree, 64 tenants placed by Algorithm 1, QShare rebinding every "
                     "100 ms against the binding held fixed, runs interleaved",
    "barberq-macro": "BarberQ Figs. 3 and 4's set-up: 144-host leaf-spine at 100 Gb/s, web "
                     "search at 70 % load, 10 000 flows, BarberQ, hosts that do not drop",
    "sweep": "tenantnet sweep: 24 points of the demo (4 guarantees x 2 seeds x 3 schemes), "
             "sequential against 2 workers, interleaved",
    "crosscheck": "the permutation's per-flow rates against htsim's runs, setting by setting: "
                  "KS distances and the tails with intervals (--k 8 or 12; --repeat seeds "
                  "per setting, 40 at k=8 and 12 at k=12 for power)",
    "compare": "tenantnet compare on examples/compare-leaf-spine.toml: every scheme, 3 seeds, "
               "2 workers; wall time split between simulation, writing and analysis",
    "validate": "tenantnet validate (a fresh process) on scenarios of 20 000 to 200 000 "
                "[[workloads]] tables: the time grows with the file, not its square",
}


# -- commands -------------------------------------------------------------------------

def scenario_arg(a: argparse.Namespace) -> Scenario:
    """SCENARIO with what the command line replaces in it (``--ties``)."""
    sc = Scenario.from_file(a.scenario)
    return sc.with_overrides(simulation={"ties": a.ties}) if a.ties else sc


def cmd_run(a: argparse.Namespace) -> None:
    check_out(a.out, a.force)
    sc = scenario_arg(a)
    with progress.showing(not a.quiet):
        progress.step(f"running {a.scenario.name}")
        sim = sc.simulation(seed=a.seed, memory_budget=a.memory_budget,
                            max_events=a.max_events)
        if a.threads is not None:
            sim.set_threads(a.threads)
        advance(sim)
        res = sim.results()

        def write(d: Path) -> None:
            res.write(d)
            if a.report:
                # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
                from ..report.runs import write_report
                write_report({res.summary["scenario"]: res}, d / "report.html",
                             f"tenantnet: {res.summary['scenario']}")
        progress.step("writing results")
        publish(a.out, write, "tenantnet run", a.force)
    if a.threads is not None and a.threads > 1 and sim.threads_note:
        print(f"note: {a.scenario.name} {sim.threads_note}", file=sys.stderr)
    s = res.summary
    rate = s["events"] / max(s["wall_s"], 1e-9) / 1e6
    on = f"{sim.threads} thread{'s' if sim.threads > 1 else ''}"
    print(f"{s['scenario']}: {_short(s['simulated_s'])} simulated in "
          f"{s['wall_s']:.2f} s on {on} "
          f"({rate:.1f} M events/s); results in {a.out}/")


def _short(seconds: float) -> str:
    """A simulated time to 4 significant digits: 3 s, 129.1 ms, 250 us."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds} s"


def cmd_validate(a: argparse.Namespace) -> None:
    sc = scenario_arg(a)
    footprint = sc.validate(memory_budget=a.memory_budget, seed=a.seed,
                            max_events=a.max_events)
    print(f"{a.scenario}: ok; its run needs {footprint}")


def cmd_flows(a: argparse.Namespace) -> None:
    sc = scenario_arg(a)
    if a.out.exists() and not a.force:
        raise ScenarioError(f"{a.out} exists; give --force to replace it")
    n = sc.write_trace(a.out, seed=a.seed)
    print(f"{a.out}: {n} flows of {a.scenario}, in the trace format (replay them with "
          f'a workload of kind = "trace", file = "{a.out.name}")')


def cmd_schema(a: argparse.Namespace) -> None:
    print(json.dumps(schema(), indent=2))


def cmd_schemes(a: argparse.Namespace) -> None:
    sc = checked_scenario(a.scenario) if a.scenario else None
    data = sc.data() if sc else None
    base = str(sc.base_dir) if sc else "."
    rows: list[dict[str, Any]] = list(schemes.table())
    for row in rows:
        s = schemes.SCHEMES[row["scheme"]]
        params = s.params
        if data is not None:
            row["applies"] = schemes.why_not(s, data, base) or "yes"
            if row["applies"] == "yes":
                params = schemes.tunables(s.name, data, base)
        row["params"] = [{"key": p.key, "default": p.value(p.default),
                          "low": p.value(p.low), "high": p.value(p.high),
                          "scale": p.scale, "what": p.what, "source": p.source}
                         for p in params]
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        s = schemes.SCHEMES[row["scheme"]]
        print(f"{s.name:<15} {s.line}")
        print(f"{'':<15} source: {s.source}")
        for piece in s.pieces:
            print(f"{'':<15} {piece.place + ':':<12} {piece.describe()}")
        if "applies" in row:
            said = ("yes" if row["applies"] == "yes" else f"no: {row['applies']}")
            print(f"{'':<15} {'applies:':<12} {said}")
        for i, p in enumerate(row["params"]):
            head = "tunes:" if i == 0 else ""
            print(f"{'':<15} {head:<12} {p['key']} = {p['default']} in "
                  f"[{p['low']}, {p['high']}]{' log' if p['scale'] == 'log' else ''}: "
                  f"{p['what']} ({p['source']})")
    print("\nplaces: " + "; ".join(f"{k}: {v}" for k, v in schemes.PLACES.items()))
    print("combine schemes that act at different places with '+', e.g. qshare+barberq")


def cmd_demo(a: argparse.Namespace) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from .demo import print_demo, run_demo
    check_out(a.out, a.force)
    kept: dict[str, Any] = {}
    with progress.showing(not a.quiet):
        publish(a.out, lambda d: kept.update(table=run_demo(d)), "tenantnet demo", a.force)
    print_demo(kept["table"])
    print(f"report: {a.out / 'report.html'}")


def read_results(folder: Path) -> Results:
    """Results a ``tenantnet run`` wrote, or a clear error."""
    if not folder.is_dir():
        fail(f"{folder}: not a folder; expected one that `tenantnet run` wrote")
    files = listed(folder)
    for name in ("summary.json", *(f"{t}.parquet" for t in TABLES)):
        if not (folder / name).is_file() or (files is not None and name not in files):
            fail(f"{folder}: missing {name}; expected a folder that `tenantnet run` wrote")
    try:
        res = Results.read(folder)
    except (OSError, ValueError, KeyError) as e:
        fail(f"{folder}: cannot read the results: {e}")
    if not isinstance(res.summary, dict) or "simulated_s" not in res.summary:
        fail(f"{folder}/summary.json: not a summary `tenantnet run` wrote (no simulated_s)")
    return res


def cmd_report(a: argparse.Namespace) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..report.runs import write_report
    res = read_results(a.results)
    label = str(res.summary.get("scenario", a.results.name))
    with progress.showing(not a.quiet):
        add_to(a.results,
               lambda d: write_report({label: res}, d / "report.html", f"tenantnet: {label}"),
               "tenantnet report")
    print(f"report: {a.results / 'report.html'}")


def cmd_reproduce(a: argparse.Namespace) -> None:
    title, fn = REPRODUCTIONS[a.name]
    testbed, nearest = paper_transport(a.name)
    # --transport, else a profile already set in the environment (it applies anyway),
    # else the paper's (a reproduction that reports both profiles sets its own)
    chosen = a.transport or os.environ.get(TRANSPORT_ENV)
    if chosen is not None and a.name in BOTH_PROFILES:
        fail(f"--transport {chosen}: {a.name} already runs under both the htsim and the "
             "linux profile and reports them side by side; expected no --transport (and no "
             f"{TRANSPORT_ENV})")
    profile = (None if a.name in BOTH_PROFILES else
               nearest if chosen in (None, "paper") else chosen)
    check_out(a.out, a.force)
    print(f"{a.name}: {title}")
    print(f"the paper's transport: {testbed}")
    ran = ("both profiles, side by side" if profile is None else
           f"transport.profile = {profile!r} on every scenario"
           + (" (the paper's)" if profile == nearest else "")
           + " (keys the reproduction sets, such as a paper's min RTO, kept)")
    print(f"this run: {ran}")
    if a.ties:
        print(f"simultaneous events: simulation.ties = {a.ties!r} on every scenario")
    written: list[Path] = []

    def write(d: Path) -> None:
        written.extend(fn(d))
        (d / "transport.json").write_text(json.dumps({
            "reproduction": a.name, "paper_transport": testbed,
            "nearest_profile": nearest, "profile": profile, "this_run": ran}, indent=1,
            ensure_ascii=False) + "\n")
        written.append(d / "transport.json")

    with (progress.showing(not a.quiet), transport_profile(profile),
          env_setting(TIES_ENV, a.ties), reproducing(a.name)):
        publish(a.out, write, f"tenantnet reproduce {a.name}", a.force)
    for path in written:
        print(f"wrote {a.out / path.name}")


def bench_qshare(repeat: int) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    import numpy as np

    from ..reproduce.qshare import filled
    for i in range(repeat):
        for r in (1, 4, 16):
            t0 = time.perf_counter()
            _, f = filled(r, seed=1 + i)
            ns = np.array(f["place_ns"], dtype=float)
            print(json.dumps({
                "benchmark": "qshare-place", "oversubscription": f"{r}:1",
                "tenants": f["admitted"], "rejected": f["rejected"],
                "mean_ms": round(ns.mean() / 1e6, 4),
                "p99_ms": round(np.quantile(ns, 0.99) / 1e6, 4),
                "max_ms": round(ns.max() / 1e6, 4),
                "fill_wall_s": round(time.perf_counter() - t0, 2),
            }), flush=True)


def bench_crosscheck(a: argparse.Namespace) -> None:
    # deferred for start-up: loads numpy
    from ..crosscheck import htsim as crosscheck
    shipped = crosscheck.REFERENCES
    if a.reference is None and a.k is not None and a.k not in shipped:
        fail(f"--k {a.k}: tenantnet ships htsim's runs at k = "
             f"{' and '.join(map(str, shipped))}; expected one of them, or --reference "
             "FILE with runs at this k (scripts/htsim_reference.py writes one)")
    ref_path = a.reference or shipped[a.k if a.k is not None else 8]
    try:
        ref, _ = crosscheck.load_reference(ref_path)
    except ValueError as e:
        fail(str(e))
    k = a.k if a.k is not None else ref.get("k", 8)
    if ref.get("k") != k:
        fail(f"--k {k}: the htsim runs in {ref_path} are of fat-tree k = {ref.get('k')}; "
             "expected the same k")
    n = len(crosscheck.variants())
    with progress.showing(True):
        for i, r in enumerate(crosscheck.report(k, a.repeat, ref_path)):
            print(json.dumps({"benchmark": "crosscheck", "k": k, **r}), flush=True)
            if i < n:
                progress.step(f"crosscheck at k = {k}: setting {i + 1} of {n}, "
                              f"{a.repeat} seed(s) each")


def timed_run(sc: Scenario, threads: int | None = None, exact: bool = False
              ) -> tuple[Any, dict[str, Any], list[float], float]:
    """Builds and runs `sc` (with progress) on up to `threads` threads (`exact`: on
    `threads`, whatever the machine's load; None: the threads a run chooses, as a
    user's run does): the simulation, its summary, each flow's Gb/s and the wall
    time in seconds, building included."""
    t0 = time.perf_counter()
    sim = sc.simulation()
    if threads is not None:
        sim.set_threads(threads, exact)
    advance(sim)
    s, gbps = sim.summary()
    return sim, s, gbps, time.perf_counter() - t0


def bench_builtin(name: str, k: int | None) -> Scenario:
    """The scenario of benchmark `name` (fct's, or a permutation's at fat-tree `k`)."""
    sc = Scenario.builtin("fct-websearch-144" if name == "fct" else name)
    if k is None:
        return sc
    d = sc.data()
    d["topology"]["k"] = k
    d["name"] = f"{name}-k{k}"
    return Scenario.from_dict(d, f"<builtin:{name}, k = {k}>")


def bench_cut(name: str, sc: Scenario, threads: int) -> None:
    """Runs `sc` once, profiled as cut for `threads` threads: one JSON line."""
    t0 = time.perf_counter()
    sim = sc.simulation()
    with progress.showing(True):
        progress.step(f"{name}: the run, profiled as cut for {threads} threads")
        profile = sim.run_profiling_cut(threads)
    print(json.dumps({"benchmark": name, "k": sc.data()["topology"].get("k"),
                      "wall_s": round(time.perf_counter() - t0, 3), **profile,
                      "version": _core.version()}), flush=True)


def bench_threads(name: str, sc: Scenario, threads: int, repeat: int) -> None:
    """Times `sc` under partitioned ties on 1 and on `threads` threads (the engine's
    partitions, whatever the machine's load), interleaved, `repeat` times: a JSON line
    per run, then one with the medians, the speedup and the parallel efficiency (the
    speedup over the threads)."""
    sc = sc.with_overrides(simulation={"ties": "partitioned"})
    walls: dict[int, list[float]] = {1: [], threads: []}
    used = 1
    for _ in range(repeat):
        for n in dict.fromkeys((1, threads)):
            sim, s, _, wall = timed_run(sc, n, exact=True)
            used = max(used, sim.threads)
            walls[n].append(wall)
            print(json.dumps({"benchmark": name, "k": sc.data()["topology"].get("k"),
                              "threads": sim.threads, "wall_s": round(wall, 3),
                              "events": s["events"],
                              "events_per_s_per_thread": round(s["events"] / wall / sim.threads),
                              "version": s["tenantnet_version"]}), flush=True)
    one, many = median(walls[1]), median(walls[threads])
    print(json.dumps({"benchmark": name, "k": sc.data()["topology"].get("k"),
                      "threads": used, "runs": repeat, "median_wall_s_1": round(one, 3),
                      f"median_wall_s_{used}": round(many, 3),
                      "speedup": round(one / many, 3),
                      "efficiency": round(one / many / used, 3)}), flush=True)


def bench_fct(repeat: int) -> None:
    sc = bench_builtin("fct", None)
    for _ in range(repeat):
        sim, s, _, wall = timed_run(sc)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        flows = sim.results().flows
        done = flows[flows["fct_s"].notna()]
        small = done[done["size_bytes"] <= 100_000]
        print(json.dumps({
            "benchmark": "fct",
            "hosts": s["hosts"],
            "wall_s": round(wall, 3),
            "simulated_s": s["simulated_s"],
            "events": s["events"],
            "events_per_s": round(s["events"] / wall),
            "packets": s["packets_sent"],
            "data_packets": s["data_packets_sent"],
            "flows": s["flows"],
            "flows_completed": s["flows_completed"],
            "mean_fct_ms": round(float(done["fct_s"].mean()) * 1e3, 4),
            "small_mean_fct_ms": round(float(small["fct_s"].mean()) * 1e3, 4),
            "small_p99_fct_ms": round(float(small["fct_s"].quantile(0.99)) * 1e3, 4),
            "peak_rss_mb": round(rss, 1),
            "drops": s["packets_dropped"],
            "evictions": s["packets_evicted"],
            "version": s["tenantnet_version"],
        }), flush=True)


def bench_pair(name: str, scenarios: dict[str, Scenario], repeat: int) -> None:
    """Runs each of `scenarios` in turn, `repeat` times, interleaved."""
    for _ in range(repeat):
        for policy, sc in scenarios.items():
            _, s, gbps, wall = timed_run(sc)
            print(json.dumps({
                "benchmark": name, "policy": policy, "hosts": s["hosts"],
                "wall_s": round(wall, 3), "events": s["events"],
                "events_per_s": round(s["events"] / wall),
                "data_packets": s["data_packets_sent"],
                "us_per_packet": round(wall / max(s["data_packets_sent"], 1) * 1e6, 4),
                "mean_flow_gbps": round(sum(gbps) / max(len(gbps), 1), 4),
                "drops": s["packets_dropped"], "ecn_marks": s["ecn_marks"],
                "version": s["tenantnet_version"],
            }), flush=True)


def bench_rebind(repeat: int) -> None:
    """Issue 16's benchmark: the controller's share of the wall time, and the wall
    time against the same run with the first decision's binding held fixed."""
    progress.step("the binding of the first decision (0.1 s)")
    first = qb.first_binding()
    runs = {"rebinding every 100 ms": qb.scenario(),
            "fixed binding": qb.scenario(interval_s=1e6, dedicated=first)}
    for _ in range(repeat):
        for label, d in runs.items():
            sim, s, _, wall = timed_run(Scenario.from_dict(d, f"<qshare-rebind: {label}>"))
            r = sim.results()
            t = r.qshare_tenants
            control = s.get("control_wall_s") or 0.0
            print(json.dumps({
                "benchmark": "qshare-rebind", "binding": label, "hosts": s["hosts"],
                "tenants": qb.TENANTS, "vms": len(r.vms),
                "dedicated_at_start": len(first) if label == "fixed binding" else 0,
                "decisions": int(t["time_s"].nunique()), "rebinds": qb.rebinds(t),
                "wall_s": round(wall, 3), "control_wall_s": round(control, 4),
                "control_share_pct": round(control / max(s["wall_s"], 1e-9) * 100, 2),
                "events": s["events"], "events_per_s": round(s["events"] / wall),
                "data_packets": s["data_packets_sent"],
                "flows_completed": s["flows_completed"],
                "version": s["tenantnet_version"],
            }), flush=True)


def _bench_macro(repeat: int) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..reproduce.barberq_macro import bench
    bench(repeat)


def _bench_sweep(repeat: int) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..comparison.sweep import bench
    bench(repeat)


def _bench_compare(repeat: int) -> None:
    # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
    from ..comparison.compare import bench
    bench(repeat)


def _bench_validate(repeat: int) -> None:
    """``tenantnet validate`` on star scenarios of n long-lived workloads each, whole
    processes, `repeat` times: one JSON line per file and run."""
    head = ('[simulation]\nduration = "10ms"\n[topology]\nkind = "star"\nhosts = 8\n'
            'link_rate = "10Gbps"\n')
    with tempfile.TemporaryDirectory() as tmp:
        for n in (20_000, 40_000, 80_000, 200_000):
            f = Path(tmp) / f"w{n}.toml"
            f.write_text(head + "".join(
                f'[[workloads]]\nkind = "long_lived"\nsrc = "h{i % 4}"\ndst = "h{4 + i % 4}"'
                f'\nstart = "{i % 1000}us"\nstop = "{1000 + i % 1000}us"\n' for i in range(n)))
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = subprocess.run([sys.executable, "-m", "tenantnet", "validate", str(f)],
                                   capture_output=True, text=True)
                print(json.dumps({"benchmark": "validate", "workloads": n,
                                  "bytes": f.stat().st_size, "exit": r.returncode,
                                  "wall_s": round(time.perf_counter() - t0, 3)}), flush=True)


def cmd_bench(a: argparse.Namespace) -> None:
    if a.k is not None and not a.name.startswith("permutation") and a.name != "crosscheck":
        fail(f"--k {a.k}: sets the fat-tree of the permutation benchmarks, not of {a.name}")
    if a.reference is not None and a.name != "crosscheck":
        fail(f"--reference {a.reference}: only the crosscheck benchmark reads htsim's runs")
    if a.cut is not None and not (a.name.startswith("permutation") or a.name == "fct"):
        fail(f"--cut {a.cut}: profiles the permutation and fct benchmarks' runs, not "
             f"{a.name}'s")
    if a.threads is not None and not (a.name.startswith("permutation") or a.name == "fct"):
        fail(f"--threads {a.threads}: times the permutation and fct benchmarks on threads, "
             f"not {a.name}")
    if a.name == "crosscheck":
        bench_crosscheck(a)
        return
    if a.threads is not None:
        bench_threads(a.name, bench_builtin(a.name, a.k), a.threads, a.repeat)
        return
    if a.cut is not None:
        bench_cut(a.name, bench_builtin(a.name, a.k), a.cut)
        return
    repeat_only: dict[str, Callable[[int], None]] = {
        "qshare-place": bench_qshare, "fct": bench_fct, "qshare-rebind": bench_rebind,
        "barberq-macro": _bench_macro, "sweep": _bench_sweep, "compare": _bench_compare,
        "validate": _bench_validate}
    if a.name in repeat_only:
        repeat_only[a.name](a.repeat)
        return
    if a.name == "trinity":
        # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
        from ..reproduce.trinity import leaf_spine_scenario
        bench_pair("trinity", {p: Scenario.from_dict(leaf_spine_scenario(p), f"<trinity: {p}>")
                               for p in ("none", "trinity")}, a.repeat)
        return
    if a.name == "c2qos":
        # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
        from ..reproduce.c2qos import bench_scenario
        bench_pair("c2qos", {p: Scenario.from_dict(bench_scenario(p == "c2qos"), f"<c2qos: {p}>")
                             for p in ("no CPU model", "c2qos")}, a.repeat)
        return
    sc = bench_builtin(a.name, a.k)
    k = sc.data()["topology"].get("k")
    for _ in range(a.repeat):
        sim, s, gbps, wall = timed_run(sc)
        print(json.dumps({
            "benchmark": a.name,
            "k": k,
            "hosts": s["hosts"],
            "threads": sim.threads,
            "wall_s": round(wall, 3),
            "events": s["events"],
            "events_per_s": round(s["events"] / wall),
            "data_packets": s["data_packets_sent"],
            "ns_per_data_packet": round(wall / max(s["data_packets_sent"], 1) * 1e9, 1),
            "mean_flow_gbps": round(sum(gbps) / max(len(gbps), 1), 4),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "drops": s["packets_dropped"],
            "evictions": s["packets_evicted"],
            "version": s["tenantnet_version"],
        }), flush=True)


# -- the parser -----------------------------------------------------------------------

def listing(items: dict[str, str]) -> str:
    width = max(map(len, items))
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in items.items())


def add_ties(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--ties", choices=("scheduled", "partitioned"), metavar="RULE",
                   help=f"{what}: how events at the same picosecond are ordered, scheduled "
                        "or partitioned (running both shows how much a result rests on "
                        "them)")


def add_threads(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--threads", type=int_arg(1, 4096), default=None, metavar="N",
                   help=what)


def add_run_args(p: argparse.ArgumentParser, budget: bool = True) -> None:
    p.add_argument("scenario", type=Path, metavar="SCENARIO",
                   help="scenario file (.toml, or .json)")
    p.add_argument("--seed", type=seed_arg, metavar="N",
                   help="replace simulation.seed (0 to 2^63-1)")
    add_ties(p, "replace simulation.ties")
    if budget:
        p.add_argument("--memory-budget", type=size_arg, metavar="SIZE",
                       help="most memory the run may use, e.g. 16GiB (default 8GiB): "
                            "a scenario that would need more is refused")
        p.add_argument("--max-events", type=number_arg(1, 1e18), metavar="N",
                       help="most events the run may be estimated to need, e.g. 5e12 "
                            "(default 1e12, about two days)")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    top = Parser(
        prog="tenantnet", formatter_class=fmt,
        description="Simulate how a datacenter network is shared among tenants.")
    top.add_argument("--version", action="version", version=f"tenantnet {_core.version()}")
    sub = top.add_subparsers(metavar="COMMAND", required=True)

    def cmd(name: str, fn: Callable[[argparse.Namespace], None], help: str,
            epilog: str | None = None) -> argparse.ArgumentParser:
        # the listing's help is %-formatted by argparse, the description is not
        p = sub.add_parser(name, help=help.replace("%", "%%"), description=help,
                           epilog=epilog, formatter_class=fmt)
        p.set_defaults(func=fn)
        return p

    p = cmd("run", cmd_run, "Run SCENARIO and write its results (Parquet tables, "
            "summary.json, report.html) into a folder.")
    add_run_args(p)
    add_threads(p, "threads the run may use (default: chosen for the run); a run under "
                   "partitioned ties is cut into that many partitions and gives the same "
                   "results on any number; others run on one, with a note saying why")
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR",
                   help="folder for the results (created, or replaced whole)")
    add_force(p)
    p.add_argument("--no-report", dest="report", action="store_false",
                   help="do not write report.html")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p = cmd("validate", cmd_validate, "Check SCENARIO without running it; print the "
            "memory its run would need.")
    add_run_args(p)
    p = cmd("flows", cmd_flows, "Write every flow SCENARIO's workloads generate, in the "
            "trace format (CSV or Parquet): a `trace` workload replaying the file gives the "
            "same results.")
    add_run_args(p)
    p.add_argument("-o", "--out", type=Path, required=True, metavar="FILE",
                   help="the file: .parquet, .csv or .csv.gz")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    cmd("schema", cmd_schema, "Print the JSON Schema of the scenario format.")
    p = cmd("schemes", cmd_schemes, "List the isolation schemes and baselines: what each "
            "sets at each place of the network, what a search may tune, and whether it "
            "applies to SCENARIO (with each tunable's value there).")
    p.add_argument("scenario", nargs="?", type=Path, default=None, metavar="SCENARIO",
                   help="a scenario file: say whether each scheme applies to it")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p = cmd("demo", cmd_demo, "Run the built-in two-tenant demo (three vswitch policies) and "
            "write a report comparing them.")
    p.add_argument("-o", "--out", type=Path, default=Path("tenantnet-out"), metavar="DIR",
                   help="output folder, created or replaced whole (default: tenantnet-out)")
    add_force(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p = cmd("report", cmd_report, "(Re)write DIR/report.html from a folder `tenantnet run` "
            "wrote.")
    p.add_argument("results", type=Path, metavar="DIR", help="a results folder")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p = cmd("reproduce", cmd_reproduce, "Reproduce a paper's result: write its plot (PNG) "
            "and data (CSV) into a folder.",
            epilog="reproductions:\n" + listing({k: v[0] for k, v in REPRODUCTIONS.items()}))
    p.add_argument("name", choices=list(REPRODUCTIONS), metavar="NAME",
                   help="which result (listed below)")
    p.add_argument("-o", "--out", type=Path, required=True, metavar="DIR",
                   help="output folder, created or replaced whole")
    add_force(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p.add_argument("--transport", choices=("htsim", "linux", "paper"), default=None,
                   help="run every scenario under this transport profile (default "
                        "paper: the profile nearest to the paper's hosts)")
    add_ties(p, "set simulation.ties on every scenario")
    p = cmd("bench", cmd_bench, "Run a benchmark and print one JSON line per run.",
            epilog="benchmarks:\n" + listing(BENCHMARKS))
    p.add_argument("name", nargs="?", default="permutation", choices=list(BENCHMARKS),
                   metavar="NAME", help="which benchmark (listed below; default permutation)")
    p.add_argument("--repeat", type=count_arg, default=1, metavar="N",
                   help="runs (default 1)")
    p.add_argument("--k", type=int, choices=(4, 8, 12, 16, 20, 24, 28, 32),
                   default=None,
                   help="fat-tree k of the permutation benchmarks (default 12: 432 hosts; "
                        "8: 128, 16: 1024, 32: 8192)")
    p.add_argument("--cut", type=int_arg(1, 4096), default=None, metavar="THREADS",
                   help="instead of timing: run once, cut by pod for THREADS threads, and "
                        "print what a parallel run would face (events per partition, "
                        "windows, the speedup's bound; docs: Performance)")
    add_threads(p, "time the benchmark under partitioned ties on 1 and on N threads, "
                   "interleaved, and print the speedup and the parallel efficiency")
    p.add_argument("--reference", type=Path, default=None, metavar="FILE",
                   help="htsim's runs for crosscheck (default: those shipped with "
                        "tenantnet at --k, 8 or 12; BENCHMARKS.md says how they were made)")
    add_compare(cmd)
    add_advise(cmd)
    add_crosscheck(cmd)
    add_emulate(cmd)
    add_deploy(sub.add_parser(
        "deploy", help="Configuration that enforces a scheme on real equipment: SONiC "
        "switches' config_db (deploy sonic), a Linux hypervisor's traffic control and "
        "MBFQ's agent (deploy linux).", description="Configuration that enforces a "
        "compared scheme on real equipment: SONiC switches' config_db (deploy sonic), a "
        "Linux hypervisor's traffic control and MBFQ's agent (deploy linux).",
        formatter_class=fmt))
    add_qshare(sub.add_parser(
        "qshare", help="QShare's controller: placement, queue binding, SONiC configuration.",
        description="QShare's controller: placement (Algorithm 1), queue binding "
                    "(Algorithm 2), SONiC configuration.", formatter_class=fmt))
    return top


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line's arguments. A command whose last positional takes a list of
    files (``intermixed``: its name) also takes files after its options, as in
    ``tenantnet crosscheck linux -o DIR A.toml B.toml``, which argparse alone refuses."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    dest = getattr(args, "intermixed", None)
    if extra and dest is not None and not any(e.startswith("-") for e in extra):
        getattr(args, dest).extend(Path(e) for e in extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``tenantnet`` script."""
    args = parse(argv)
    stop_once()
    try:
        args.func(args)
    except (CliError, ScenarioError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        # end here, the cleanup done as the interrupt unwound: the interpreter's own
        # shutdown right after a simulation was interrupted sometimes aborted (a fatal
        # GIL error, exit -6) or died of the signal (-2) instead of exiting 130
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as e:
        print(f"error: {e.filename or ''}{': ' if e.filename else ''}{e.strerror or e}",
              file=sys.stderr)
        sys.exit(2)
    except Exception as e:
        if os.environ.get("TENANTNET_DEBUG"):
            raise
        print(f"error: internal error ({type(e).__name__}: {e}); this is a bug in tenantnet, "
              "please report it (TENANTNET_DEBUG=1 shows where it happened)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
