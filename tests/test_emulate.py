"""``tenantnet emulate`` and ``compare --emulate``: the scenario on real Linux in
network namespaces beside the simulator's run of the same scaled scenario.

The pure pieces (scaling, the kernel's transport, the fabric's routes, the checks) are
tested everywhere; the runs only where namespaces can be made (root), skipped with the
reason elsewhere. The acceptance run is the demo at 1 Gb/s NICs under none, static and
MBFQ, about 20 s."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers import classifying, cli, default_sigint, namespaces_why_not
from tenantnet import Results, Scenario, ScenarioError
from tenantnet.linux.emulation import prepare
from tenantnet.linux.emulation.fabric import plan_fabric
from tenantnet.linux.emulation.side import phases, rates
from tenantnet.linux.emulation.tables import on_grid
from tenantnet.linux.lab import cleanup, leftovers

# Real namespaces, links and wall-clock rates: `make test` runs these alone, after
# the rest has run on every core (the `serial` marker).
pytestmark = pytest.mark.serial

WHY_NOT = namespaces_why_not()
needs_namespaces = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
PREFIX = "tn-emu-"


def demo_data() -> dict:
    return Scenario.builtin("demo").data()


# ---- the pure pieces ------------------------------------------------------------------

def test_scaling_multiplies_every_rate_and_keeps_times_and_buffers() -> None:
    d = demo_data()
    d["workloads"].append({"kind": "cbr", "tenant": "web", "src": "h0", "dst": "h2",
                           "rate": "2Gbps"})
    s = prepare.scaled(d, 0.1)
    assert s["topology"]["link_rate"] == "1000000000bps"
    assert [t["guarantee"] for t in s["tenants"]] == ["300000000bps", "600000000bps"]
    assert s["workloads"][-1]["rate"] == "200000000bps"
    assert s["simulation"] == d["simulation"] and s["network"] == d["network"]
    assert d["topology"]["link_rate"] == "10Gbps"  # the input is not changed


def test_a_bad_rate_names_its_key() -> None:
    d = demo_data()
    d["tenants"][1]["guarantee"] = "fast"
    with pytest.raises(ScenarioError, match=r"tenants\[1\].guarantee = 'fast'"):
        prepare.scaled(d, 0.5)


def test_the_default_scale_puts_the_fastest_nic_at_1_gbps_and_never_scales_up() -> None:
    assert prepare.default_scale(10.0) == pytest.approx(0.1)
    assert prepare.default_scale(0.5) == 1.0


def test_dctcp_runs_as_the_kernels_reno_on_both_sides_with_the_min_rto_kept() -> None:
    d, words = prepare.kernel_transport(demo_data())
    assert d["transport"] == {"min_rto": "5ms", "protocol": "newreno", "profile": "linux"}
    assert "reno" in words and "no DCTCP" in words
    assert prepare.kernel_cc(d) == "reno"


@pytest.mark.parametrize(("transport", "cc", "twin"), [
    ({"protocol": "cubic"}, "cubic", "cubic"),
    ({"protocol": "tcp", "profile": "linux"}, "cubic", "cubic"),
    ({"protocol": "tcp"}, "reno", "newreno"),
    ({"protocol": "newreno", "profile": "linux"}, "reno", "newreno"),
])
def test_the_kernel_runs_the_scenarios_congestion_control(transport: dict[str, str],
                                                         cc: str, twin: str) -> None:
    d = demo_data()
    d["transport"] = transport
    t, words = prepare.kernel_transport(d)
    assert (prepare.kernel_cc(t), t["transport"]["protocol"]) == (cc, twin)
    assert words.startswith(f"{cc} (the scenario's {transport['protocol']}")


@pytest.mark.parametrize("scheme,message", [
    ("trinity", "an emulation enforces none, static, mbfq"),
])
def test_schemes_linux_cannot_enforce_are_refused_saying_why(scheme: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        prepare.scheme_of(demo_data(), scheme, ".")


def test_udp_and_request_workloads_are_refused_naming_the_workload() -> None:
    d = demo_data()
    d["workloads"].append({"kind": "cbr", "tenant": "web", "src": "h0", "dst": "h2",
                           "rate": "1Gbps"})
    with pytest.raises(ScenarioError, match=r"workloads\[4\].kind = 'cbr'"):
        prepare.scheme_of(d, "static", ".")


def leaf_spine() -> Results:
    sc = Scenario.from_dict({
        "name": "ls", "simulation": {"duration": "1ms"},
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
                     "link_rate": "10Gbps", "link_delay": "1us"},
        "network": {"buffer": "200KB"},
        "tenants": [{"name": "a", "guarantee": "1Gbps", "hosts": ["h0", "h2"]}],
        "workloads": [{"kind": "long_lived", "tenant": "a", "src": "h0", "dst": "h2"}]})
    from tenantnet import run
    return run(sc)


def test_the_fabric_routes_every_host_over_every_shortest_path() -> None:
    r = leaf_spine()
    switches = set(r.links["node"]) - {"h0", "h1", "h2", "h3"}
    f = plan_fabric(r.links, r.vms, switches)
    assert f.hosts == ["h0", "h1", "h2", "h3"] and len(f.switches) == 4
    assert len(set(f.addr.values())) == len(f.addr)  # one address per node
    leaf = f.uplink("h0").peer
    hops = dict(f.routes[leaf])
    assert len(hops[f.prefix["h0"]]) == 1  # its own host: straight down
    assert len(hops[f.prefix["h2"]]) == 2  # the other leaf's: through both spines
    spine = next(s for s in f.switches if s != leaf and s not in
                 {f.uplink(h).peer for h in f.hosts})
    assert all(len(h) == 1 for _, h in f.routes[spine])
    assert [v.addr for v in f.vms] == ["10.1.0.10", "10.1.2.10"]


def test_counters_are_read_at_the_nominal_instants() -> None:
    # a sampler that woke 10 ms late at 0.1 s: 110 bytes then, 100 B/s all along
    got = on_grid([0.0, 0.11, 0.2], np.array([[0.0], [110.0], [200.0]]), 0.1, 2)
    assert got[:, 0].tolist() == pytest.approx([0.0, 100.0, 200.0])


def test_phases_are_cut_where_long_lived_demand_changes() -> None:
    from tenantnet import run
    d = demo_data()
    d["simulation"]["duration"] = "3s"
    d["topology"]["link_rate"] = "100Mbps"
    for t in d["tenants"]:
        t["guarantee"] = "30Mbps" if t["name"] == "analytics" else "60Mbps"
    sim = run(Scenario.from_dict(d))
    assert phases(sim) == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]


def test_a_backlogged_class_is_credited_up_to_one_packet_never_past_its_rate() -> None:
    from tenantnet.linux.emulation.agent import send_rate
    packet = 12112  # 8 segments on the wire: 8 ms at 12 Mb/s
    # 12 of the 12.8 packets a 12 Mb/s class sends in 0.1 s: 93 %, under MBFQ's 95 %
    short = 12 * packet
    assert send_rate(short, 0.1, False, 12e6, packet) == pytest.approx(11.63e6, rel=1e-3)
    assert send_rate(short, 0.1, True, 12e6, packet) == 12e6  # never past its rate
    # more than a packet short stays short, by all but one packet
    assert send_rate(10 * packet, 0.1, True, 12e6, packet) == pytest.approx(11 * packet * 80)
    assert send_rate(short, 0.1, True, None, packet) == short * 80  # no microscheduler


def test_vm_classes_without_a_limit_borrow_the_nic_from_an_equal_share() -> None:
    from tenantnet.linux.tc import Plan, VmClass
    nic = 1_000_000_000
    p = Plan("mbfq", "eth0", nic, 500_000, 1514,
             vms=[VmClass(f"v{i}", f"10.0.0.{i + 1}", 16 + i, nic) for i in range(3)])
    vm = [c for c in p.classes() if c.minor in (16, 17, 18)]
    assert [(c.rate, c.ceil) for c in vm] == [(nic // 3, nic)] * 3
    assert sum(c.rate for c in vm) <= nic  # HTB lets a class send at its own rate
    assert p.vm_rates(200_000_000) == (200_000_000, 200_000_000)  # a limit: rate = ceil


def test_sent_while_backlogged_counts_only_intervals_with_packets_waiting_at_both_ends(
        ) -> None:
    from tenantnet.linux.emulation.fidelity import sent_while_backlogged
    t = [k * 0.05 for k in range(8)]
    full = (t, [(int(k * 0.05 * 1e9 / 8), 1000, int(1e9)) for k in range(8)])
    # half its rate while backlogged: 5 intervals; the two around k = 3 (no backlog)
    # are not counted
    half = (t, [(int(k * 0.025 * 1e9 / 8), 0 if k == 3 else 1000, int(1e9)) for k in range(8)])
    assert sent_while_backlogged([full]) == pytest.approx((1.0, 1.0))
    both = sent_while_backlogged([full, half])
    assert both == pytest.approx(((7 + 2.5) / (7 + 5), 0.5))
    assert sent_while_backlogged([(t, [(0, 0, 1000)] * 8)]) is None
    # a backlog at 4 instants of 20 (bursts), sending little: idle in between, not judged
    t20 = [k * 0.01 for k in range(21)]
    bursty = (t20, [(k * 100, 1000 if k in (2, 3, 9, 10) else 0, int(1e9))
                    for k in range(21)])
    assert sent_while_backlogged([bursty]) is None
    assert sent_while_backlogged([full, bursty]) == pytest.approx((1.0, 1.0))


def test_a_run_is_trusted_only_when_every_measure_is_within_its_limit() -> None:
    from tenantnet.linux.emulation.fidelity import (
        AGENT_LATE_S,
        PORT_RATE,
        START_LATE_S,
        CpuUse,
        judge,
    )
    ok = judge([0.002, 0.01], [0.006, 0.02], (0.99, 0.97), CpuUse(1.0, 0.9))
    assert ok.trusted and ok.verdict.startswith("trusted") and len(ok.measures()) == 4
    late = judge([0.002, START_LATE_S + 0.001], None, None, None)
    assert not late.trusted and "1 of 2 flows started over 20 ms late" in late.verdict
    agent = judge([0.0], [AGENT_LATE_S + 0.01] * 3, None, None)
    assert agent.over == ["MBFQ's rates were in force 35 ms late at the median"]
    slow = judge([0.0], None, (PORT_RATE - 0.01, 0.5), None)
    assert not slow.trusted and "sent 89.0 % of their rates" in slow.verdict
    assert slow.as_dict()["sent_while_backlogged"] == {"all": 0.89, "lowest": 0.5}


def test_the_first_sample_is_taken_before_the_start_and_stamped_as_it() -> None:
    from tenantnet.linux.emulation.clock import LEAD_S, due, stamp
    assert due(100.0, 0.05, 0) == 100.0 - LEAD_S and due(100.0, 0.05, 2) == 100.1
    assert stamp(100.0, 0) == 0.0


# ---- runs on this machine's Linux -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "emulation.md"


def documented(n: int) -> tuple[list[str], list[str]]:
    """The guide's `n`-th command run by this file (its arguments after `tenantnet`,
    `sudo` dropped) and the lines it shows printed."""
    from docblocks import run_by
    text = run_by("tests/test_emulate.py", PAGE)[n].text.splitlines()
    cmd = text[0].removeprefix("$ sudo tenantnet ").split()
    return cmd, text[1:]


def out_arg(cmd: list[str], out: Path) -> list[str]:
    """`cmd` writing into `out`, quietly."""
    i = cmd.index("-o")
    return [*cmd[:i + 1], str(out), *cmd[i + 2:], "-q"]


def run_documented(n: int, out: Path) -> tuple[list[str], list[str]]:
    """Runs the guide's `n`-th command into `out` (it must succeed): the lines it
    printed and those the guide shows."""
    cmd, shown = documented(n)
    res = cli(*out_arg(cmd, out), cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines(), shown


def symbols(lines: list[str]) -> dict[str, list[str]]:
    """scheme -> the verdict symbols of its row, from compare's printed table."""
    out = {}
    for line in lines:
        m = re.match(r"(\w+ \((?:simulated|emulated)\))\s+(.*)", line)
        if m:
            out[m.group(1)] = re.findall("[✔✘≈]", m.group(2))
    return out


def trust_line(lines: list[str]) -> str:
    """compare --emulate's sentence on whether its emulated runs can be trusted."""
    return next(x for x in lines if x.startswith(("Every emulated run", "The emulated")))


@pytest.fixture(scope="module")
def demo_compare(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    base = tmp_path_factory.mktemp("emulate")
    out = base / "compare"
    started = time.monotonic()
    lines, shown = run_documented(1, out)
    assert time.monotonic() - started < 120
    # the guide's notes line by line (but where it says whether the emulated runs can be
    # trusted: a run the machine was too busy for says so, naming what it measured),
    # and its table verdict by verdict: by the majority of three runs when the first
    # differs, since fairness, judged on ten 50 ms intervals, can read differently
    notes = [x for x in lines if not symbols([x]) and x != trust_line(lines)][:-1]
    assert notes == [x for x in shown if not symbols([x]) and x != trust_line(shown)][:-1]
    trust = trust_line(lines)
    assert trust == trust_line(shown) or " is NOT TRUSTED: the machine was too busy " in trust
    runs = {out: symbols(lines)}
    if runs[out] != symbols(shown):
        runs |= {o: symbols(run_documented(1, o)[0])
                 for o in (base / "again-1", base / "again-2")}
    assert majority(list(runs.values())) == symbols(shown), runs
    # the other tests read a run that gave the guide's verdicts
    matched = [o for o, v in runs.items() if v == symbols(shown)]
    assert matched, runs
    out = matched[0]
    return pd.read_parquet(out / "verdicts.parquet"), out


def majority(runs: list[dict[str, list[str]]]) -> dict[str, list[str]]:
    """Each row's verdicts, each the one most of `runs` gave (the first run's on a tie)."""
    def most(cells: tuple[str, ...]) -> str:
        return max(cells, key=cells.count)
    return {row: [most(cells) for cells in zip(*(r.get(row, []) for r in runs), strict=True)]
            for row in runs[0]}


def side(out: Path, scheme: str) -> pd.DataFrame:
    return rates(Results.read(out / scheme), Results.read(out / scheme / "simulated"))


@needs_namespaces
@pytest.mark.slow
def test_static_holds_every_vm_at_its_guarantee_within_5_percent(
        demo_compare: tuple[pd.DataFrame, Path]) -> None:
    _, out = demo_compare
    r = side(out, "static")
    busy = r[r["simulated_gbps"] > 0.05]
    guarantee = busy["vm"].map(lambda v: 0.3 if v.startswith("analytics") else 0.6)
    assert len(busy) == 8  # analytics in 3 phases, web in 1, on 2 hosts
    assert (abs(busy["emulated_gbps"] / guarantee - 1) <= 0.05).all(), busy


def trusted(runs: list[tuple[pd.DataFrame, dict]]) -> list[pd.DataFrame]:
    """The side-by-side rates of the runs that can be trusted; each other run must say
    why not (the measures over their limits)."""
    for _, fid in runs:
        assert fid["trusted"] or fid["over"], fid
    ok = [r for r, fid in runs if fid["trusted"]]
    if not ok:
        pytest.skip("the machine was too busy for every emulated run: "
                    + "; ".join(x for _, fid in runs for x in fid["over"]))
    return ok


@needs_namespaces
@pytest.mark.slow
def test_mbfq_gives_each_vm_the_simulators_rate_within_10_percent_in_every_phase(
        demo_compare: tuple[pd.DataFrame, Path]) -> None:
    """Each VM's emulated rate in each phase within 10 % of the simulator's: the median
    of the trusted ones of three runs (the guide's and two more). A run is one sample,
    and a run the machine was too busy for says so (docs: Emulation on Linux)."""
    from tenantnet.linux.emulation import emulate
    _, out = demo_compare
    first = Results.read(out / "mbfq")
    runs = [(side(out, "mbfq"), first.summary["emulated"]["fidelity"])]
    for e in (emulate(Scenario.builtin("demo"), "mbfq") for _ in range(2)):
        runs.append((rates(e.emulated, e.simulated), e.fidelity.as_dict()))
    keys = ["phase", "vm"]
    sim = runs[0][0].set_index(keys)["simulated_gbps"]
    busy = sim[sim > 0.05]
    assert len(busy) == 8
    emu = pd.concat([r.set_index(keys)["emulated_gbps"] for r in trusted(runs)],
                    axis=1).median(axis=1)[busy.index]
    off = pd.DataFrame({"simulated": busy, "median": emu})[(emu / busy - 1).abs() > 0.10]
    assert off.empty, off
    agent = first.vm_rates
    assert len(agent) == 4 * 30 and agent["allocated_gbps"].notna().sum() > 100


@needs_namespaces
@pytest.mark.slow
def test_three_tenants_joining_and_leaving_under_mbfq_agree_within_10_percent() -> None:
    """gold (1 flow), silver (4) and bronze (8) join and leave one NIC: every tenant in
    every phase within 10 % of the simulator's, the median of the trusted ones of two
    runs. When silver left, VM classes each at the NIC's rate let the NIC send 1.16
    Gb/s of its 1 and bronze took +22 to +110 % of the simulator's share; borrowing
    from an equal share (Plan.vm_rates) keeps them within 7 % (docs: Emulation on
    Linux)."""
    from tenantnet.linux.emulation import emulate
    sc = Scenario.from_file(ROOT / "examples" / "emulate-mbfq-tenants.toml")
    runs = [(rates(e.emulated, e.simulated), e.fidelity.as_dict())
            for e in (emulate(sc) for _ in range(2))]
    keys = ["phase", "vm"]
    sim = runs[0][0].set_index(keys)["simulated_gbps"]
    busy = sim[sim > 0.05]
    assert len(busy) == 8  # gold in 4 phases, silver in 2, bronze in 2
    emu = pd.concat([r.set_index(keys)["emulated_gbps"] for r in trusted(runs)],
                    axis=1).median(axis=1)[busy.index]
    off = pd.DataFrame({"simulated": busy, "median": emu})[(emu / busy - 1).abs() > 0.10]
    assert off.empty, off


@needs_namespaces
@pytest.mark.slow
def test_none_breaks_webs_guarantee_as_the_simulator_predicts(
        demo_compare: tuple[pd.DataFrame, Path]) -> None:
    _, out = demo_compare
    r = side(out, "none")
    web = r[(r["phase"] == "1-2 s") & r["vm"].str.startswith("web")]
    assert (web["simulated_gbps"] < 0.95 * 0.6).all()
    assert (web["emulated_gbps"] < 0.95 * 0.6).all()


@needs_namespaces
@pytest.mark.slow
def test_compares_verdicts_are_the_same_for_simulated_and_emulated_runs(
        demo_compare: tuple[pd.DataFrame, Path]) -> None:
    verdicts, _ = demo_compare
    v = verdicts.set_index("scheme")
    for scheme in ("none", "static", "mbfq"):
        for prop in ("guarantees", "work conservation"):
            sim, emu = v.loc[f"{scheme} (simulated)", prop], v.loc[f"{scheme} (emulated)", prop]
            assert sim[:1] == emu[:1] and sim[:1] in "✔✘", (scheme, prop, sim, emu)
    assert v.loc["qshare", "note"].startswith("not emulated: an emulation enforces")


@needs_namespaces
@pytest.mark.slow
def test_the_emulated_run_is_a_results_folder_report_and_compare_read(
        demo_compare: tuple[pd.DataFrame, Path]) -> None:
    _, out = demo_compare
    r = Results.read(out / "static")
    assert r.summary["emulated"]["scale"] == pytest.approx(0.1)
    assert r.summary["emulated"]["transport"].startswith("reno")
    assert r.summary["vswitch"]["packets_shaped"] > 0
    assert set(r.throughput["scope"].astype(str)) >= {"link", "vm", "vm_data", "tenant"}
    sim = Results.read(out / "static" / "simulated")
    nic, twin = (float(x.links[x.links["node"] == "h0"]["utilization"].iloc[0])
                 for x in (r, sim))
    assert nic == pytest.approx(twin, rel=0.05)  # analytics all along, web for a third
    assert len(r.queues) and set(r.queues["switch"]) >= {"h0", "h1"}
    assert (out / "report.html").exists()


def table_rows(lines: list[str]) -> list[list[str]]:
    """(phase, VM or tenant, simulated, emulated) of each row of emulate's tables."""
    rows = []
    for line in lines:
        m = re.match(r"([\d.]+-[\d.]+ s)\s+(\S+)\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            rows.append(list(m.groups()))
    return rows


def check_guides_emulation(out: Path) -> None:
    """Runs the guide's emulation into `out`: the same rows (phase, VM or tenant) as the
    guide, then its verdict on itself and a line per measure. A trusted run has each
    emulated rate within 10 % of the guide's where the simulated one is at least 5 % of
    a NIC; a run the machine was too busy for says so, naming the measures over their
    limits (and its summary agrees)."""
    lines, shown = run_documented(0, out)
    assert lines[0] == shown[0] and lines[1] == shown[1]
    rows, want = (table_rows(x) for x in (lines, shown))
    assert [r[:2] for r in rows] == [w[:2] for w in want]
    i = next(k for k, x in enumerate(lines) if x.startswith(("trusted: ", "NOT TRUSTED: ")))
    measures = [x.split()[0] for x in lines[i:] if x.startswith("  ")]
    assert measures[-4:] == ["flows'", "MBFQ's", "queues", "CPUs"], lines[i:]
    fid = Results.read(out).summary["emulated"]["fidelity"]
    assert lines[i].startswith("trusted: ") == fid["trusted"]
    if not fid["trusted"]:
        # the verdict names each measure over its limit (wrapped: read as one text)
        said = " ".join(" ".join(lines[i:]).split())
        assert fid["over"] and all(" ".join(x.split(":")[0].split()) in said
                                   for x in fid["over"]), (fid["over"], lines[i:])
        return
    off = [(w[0], w[1], r[3], w[3]) for r, w in zip(rows, want, strict=True)
           if float(w[2]) >= 0.05 and abs(float(r[3]) / float(w[3]) - 1) > 0.10]
    assert off == [], (off, lines)


@needs_namespaces
def test_the_guides_emulation_prints_what_it_shows_and_writes_both_runs(
        tmp_path: Path) -> None:
    check_guides_emulation(tmp_path / "emu-demo")
    for f in ("rates.csv", "fcts.csv", "report.html", "summary.json", "vm_rates.parquet",
              "simulated/summary.json"):
        assert (tmp_path / "emu-demo" / f).exists(), f
    assert "Can this run be trusted?" in (tmp_path / "emu-demo" / "report.html").read_text()
    assert leftovers(PREFIX) == []


@needs_namespaces
@pytest.mark.slow
def test_beside_three_long_simulations_it_matches_or_says_the_machine_was_too_busy(
        tmp_path: Path) -> None:
    """The guide's emulation with three simulations running beside it (both cores
    busy): within 10 % of the simulator, or it says that the machine was too busy."""
    long = Scenario.builtin("demo").data()
    long["simulation"]["duration"] = "600s"
    (tmp_path / "long.json").write_text(json.dumps(long))
    sims = [subprocess.Popen([sys.executable, "-m", "tenantnet", "run",
                              str(tmp_path / "long.json"), "-o", str(tmp_path / f"sim-{i}"),
                              "-q", "--no-report"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for i in range(3)]
    try:
        time.sleep(2)
        assert all(p.poll() is None for p in sims)
        check_guides_emulation(tmp_path / "emu-demo")
        assert all(p.poll() is None for p in sims)  # they ran all along
    finally:
        for p in sims:
            p.kill()
            p.wait()


@needs_namespaces
def test_leftovers_refuse_a_run_until_cleanup_removes_them(tmp_path: Path) -> None:
    subprocess.run(["ip", "netns", "add", f"{PREFIX}h9"], check=True)
    try:
        res = cli("emulate", "python/tenantnet/scenarios/demo.toml", "-o", str(tmp_path / "o"),
                  "-q", cwd=Path(__file__).resolve().parents[1])
        assert res.returncode == 2
        assert f"{PREFIX}h9" in res.stderr and "tenantnet emulate --cleanup" in res.stderr
        assert not (tmp_path / "o").exists()
        res = cli("emulate", "--cleanup")
        assert res.returncode == 0 and f"removed 1 namespaces: {PREFIX}h9" in res.stdout
    finally:
        cleanup(PREFIX)
    assert leftovers(PREFIX) == []


def _ours(marker: str) -> list[str]:
    r = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return r.stdout.split()


@needs_namespaces
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_leaves_no_namespace_link_or_process(tmp_path: Path,
                                                             sig: signal.Signals) -> None:
    out = tmp_path / f"o-{sig.name}"
    p = subprocess.Popen([sys.executable, "-m", "tenantnet", "emulate",
                          "python/tenantnet/scenarios/demo.toml", "-o", str(out), "--scheme",
                          "mbfq", "-q"], cwd=Path(__file__).resolve().parents[1],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        # mid-run: the traffic generator and both agents forked beside the main process
        while len(_ours(str(out))) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_ours(str(out))) >= 4 and len(leftovers(PREFIX)) >= 5
        time.sleep(0.5)
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode != 0
    deadline = time.monotonic() + 5
    while (leftovers(PREFIX) or _ours(str(out))) and time.monotonic() < deadline:
        time.sleep(0.1)
    left, procs = leftovers(PREFIX), _ours(str(out))
    cleanup(PREFIX)
    assert left == [] and procs == []
    assert not out.exists()


@needs_namespaces
def test_a_leaf_spine_with_on_off_traffic_gives_each_tenant_the_simulators_rate(
        tmp_path: Path) -> None:
    from tenantnet.linux.emulation.side import tenant_rates
    out = tmp_path / "emu-ls"
    lines, shown = run_documented(2, out)
    e, s = Results.read(out), Results.read(out / "simulated")
    assert e.summary["emulated"]["scale"] == pytest.approx(0.1)
    assert "emulated" not in s.summary
    per = tenant_rates(rates(e, s))
    busy = per[per["simulated_gbps"] >= 0.05]  # 5 % of a NIC
    assert len(busy) == 8 and (busy["diff_pct"].abs() <= 10).all(), per
    f = pd.read_csv(out / "fcts.csv").iloc[0]
    assert f["tenant"] == "web" and f["emulated_finished"] == f["simulated_finished"]
    assert 0 < f["emulated_p50_ms"] < 100 and 0 < f["simulated_p50_ms"] < 100
    # the guide's per-tenant table: the same phases and tenants
    table = [r[:2] for r in table_rows(lines) if r[1] in ("bulk", "web")]
    assert table == [r[:2] for r in table_rows(shown)] and len(table) == 10


@needs_namespaces
@pytest.mark.parametrize("scheduler,share_a", [("dwrr", 0.25), ("strict", 1.0)])
def test_switch_queues_classify_the_dscp_hosts_tag_as_the_simulator_does(
        scheduler: str, share_a: float) -> None:
    from tenantnet.linux.emulation import emulate
    from tenantnet.linux.emulation.side import tenant_rates
    e = emulate(Scenario.from_dict(classifying(scheduler)), "none")
    # a tenant that sent nothing in either run has no row: its rates are 0
    per = tenant_rates(rates(e.emulated, e.simulated)).set_index("tenant") \
        .reindex(["a", "b"]).fillna(0.0)
    # without b's tag both would share queue 0 by flows, 4 to 1
    for tenant, share in (("a", share_a), ("b", 1 - share_a)):
        assert per.loc[tenant, "simulated_gbps"] == pytest.approx(share, abs=0.03)
        assert per.loc[tenant, "emulated_gbps"] == pytest.approx(share, abs=0.05)


@needs_namespaces
def test_cubic_runs_as_the_kernels_cubic_and_shares_as_the_simulator_says() -> None:
    from tenantnet.linux.emulation import emulate
    from tenantnet.linux.emulation.side import tenant_rates
    d = classifying("dwrr")
    # exact clocks and scheduled ties: under the defaults (clocks 100 ppm apart) the
    # simulated pair split 0.62 / 0.36, 0.90 / 0.07 and 0.44 / 0.53 Gb/s in seeds 1 to
    # 3, where the kernel splits evenly (a phase two clocks hold for the whole second;
    # the performance guide's host-timing section)
    d["network"] = {"buffer": "200KB", "clock_ppm": 0}
    d["transport"] = {"protocol": "cubic", "min_rto": "5ms"}
    d["simulation"]["duration"] = "1s"
    d["simulation"]["ties"] = "scheduled"
    d["workloads"][0]["flows_per_pair"] = 1
    e = emulate(Scenario.from_dict(d), "none")
    assert e.emulated.summary["emulated"]["transport"] == "cubic (the scenario's cubic)"
    assert set(e.emulated.flows["protocol"].astype(str)) == {"cubic"}
    per = tenant_rates(rates(e.emulated, e.simulated)).set_index("tenant")
    for tenant in ("a", "b"):  # two CUBIC flows into one 1 Gb/s port: half each
        assert per.loc[tenant, "simulated_gbps"] == pytest.approx(0.5, abs=0.05), per
        assert per.loc[tenant, "emulated_gbps"] == pytest.approx(0.5, abs=0.08), per


@needs_namespaces
def test_cubics_window_follows_the_kernels_and_the_kernel_trace_is_read() -> None:
    """Two CUBIC flows into one 1 Gb/s port with 100 KB of buffer, both traced: the
    kernel's windows (``TCP_INFO`` every millisecond) and the simulator's, on a 1 ms
    grid past the first 200 ms, have medians within 15 %, pooled and for the two
    flows' sum (what the port's buffer sets). A flow alone is not held to it: which of
    the two holds the larger window for the whole second varies from run to run in
    the kernel (3-10 % off the simulator's per flow in three runs, 28 % in one). The
    kernel's swing is wider (p5-p95 15-50 segments against 23-36) and it retransmits
    about 7 times as often."""
    from tenantnet.linux.emulation import emulate
    d = {"name": "cubic-trace", "simulation": {"duration": "1s", "seed": 1},
         "topology": {"kind": "star", "hosts": 3, "link_rate": "1Gbps",
                      "link_delay": "1us"},
         "network": {"buffer": "100KB"},
         "transport": {"protocol": "cubic", "min_rto": "5ms"},
         "workloads": [{"kind": "long_lived", "src": "h1", "dst": "h0"},
                       {"kind": "long_lived", "src": "h2", "dst": "h0"}],
         "output": {"trace_flows": [0, 1], "sample_interval": "50ms"}}
    e = emulate(Scenario.from_dict(d), "none", scale=1.0)
    kernel, sim = e.emulated.flow_trace, e.simulated.flow_trace
    assert kernel is not None and sim is not None
    assert set(kernel["state"].astype(str)) <= {"open", "disorder", "cwr", "recovery",
                                                "loss"}
    assert "recovery" in set(kernel["state"].astype(str))
    grid = np.arange(0.2, 0.99, 0.001)

    def windows(t: pd.DataFrame, flow: int, mss: int) -> np.ndarray:
        f = t[t["flow_id"] == flow].sort_values("time_s")
        at = np.searchsorted(f["time_s"].to_numpy(), grid, side="right") - 1
        return f["cwnd_bytes"].to_numpy()[at[at >= 0]] / mss

    k = [windows(kernel, i, 1448) for i in (0, 1)]  # the kernel's MSS with timestamps
    s = [windows(sim, i, 1460) for i in (0, 1)]
    assert all(len(x) > 700 for x in k), [len(x) for x in k]
    pooled = np.median(np.concatenate(k)) / np.median(np.concatenate(s))
    assert pooled == pytest.approx(1.0, abs=0.15)
    n = min(len(x) for x in (*k, *s))
    both = np.median(k[0][:n] + k[1][:n]) / np.median(s[0][:n] + s[1][:n])
    assert both == pytest.approx(1.0, abs=0.15)
