"""Reports and figures say nothing false (issue 11, items 19-24, 29, 30): queues per
queue, finished means completed, no empty charts, series that do not hide each other,
one time unit, per-phase VM rates, rounded CSVs with units, slowdown and per-port
drops and marks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd
import pytest

import tenantnet
from helpers import Ran, cli
from tenantnet.measure import tables
from tenantnet.report import runs as report
from tenantnet.report.plotting import style

ROOT = Path(__file__).resolve().parents[1]

MULTI: dict[str, Any] = {
    "simulation": {"duration": "6ms"},
    "topology": {"kind": "star", "hosts": 3},
    "network": {"queues": 2, "scheduler": "dwrr", "dscp_map": "identity", "buffer": "200KB",
                "ecn_threshold": "40pkt"},
    "transport": {"protocol": "dctcp"},
    "workloads": [{"kind": "long_lived", "tenant": "a", "src": "h0", "dst": "h2", "dscp": 0},
                  {"kind": "long_lived", "tenant": "b", "src": "h1", "dst": "h2", "dscp": 1,
                   "stop": "3ms"}],
    "output": {"sample_interval": "100us"},
}


@pytest.fixture(scope="module")
def multi() -> tenantnet.Results:
    return tenantnet.run(MULTI)


def labels(fig: Any) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend()
            for t in ax.get_legend().get_texts()]


def test_a_multi_queue_port_is_charted_queue_by_queue(multi: tenantnet.Results) -> None:
    fig = report.queue_figure(multi, report.TimeAxis({"x": multi}))
    names = labels(fig)
    assert "switch→h2:q0" in names and "switch→h2:q1" in names, names


def test_flows_cut_by_stop_are_not_finished(multi: tenantnet.Results) -> None:
    f = multi.flows
    assert f["stop_s"].notna().sum() == 1
    assert f["end_s"].isna().all() and f["fct_s"].isna().all()
    t = tables.tenant_table(multi)
    assert (t["completed"] == 0).all() and multi.summary["flows_completed"] == 0
    # and the stopped flow stops being sampled once drained
    tp = multi.throughput
    b = tp[(tp["scope"] == "flow") & (tp["id"] == "1")]
    assert b["time_s"].max() < 0.005


def test_nothing_finished_means_no_fct_chart_and_no_warning(multi: tenantnet.Results,
                                                           tmp_path: Path) -> None:
    assert report.fct_figure({"x": multi}) is None
    assert tables.slowdown_table(multi).empty
    html = report.write_report({"x": multi}, tmp_path / "r.html", "t").read_text()
    assert ">none<" not in html
    assert "No flow in these runs has a size" in html
    sc = tmp_path / "s.toml"
    sc.write_text((ROOT / "examples" / "dumbbell-newreno.toml").read_text())
    p = cli("run", str(sc), "--out", str(tmp_path / "o"), "-q")
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_series_styles_are_distinct_and_legends_sit_off_the_data(
        multi: tenantnet.Results) -> None:
    seen = {(s["color"], s["ls"], s["marker"]) for s in map(style, range(32))}
    assert len(seen) == 32
    runs = {"one": multi, "two": multi}
    for fig in (report.tenant_throughput_figure(runs),
                report.queue_figure(multi, report.TimeAxis(runs))):
        fig.canvas.draw()
        r = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is None:
                continue
            box, area = leg.get_window_extent(r), ax.get_window_extent(r)
            assert not box.overlaps(area), "legend off the data"
            assert ax.get_ylim()[0] == 0
        matplotlib.pyplot.close(fig)


def test_one_time_unit_and_phase_marks_in_a_report(multi: tenantnet.Results) -> None:
    long = tenantnet.Results(**{**multi.__dict__, "summary": {**multi.summary,
                                                              "simulated_s": 3.0}})
    t = report.TimeAxis({"short": multi, "long": long})
    assert t.label() == "time (s)"
    assert report.TimeAxis({"short": multi}).label() == "time (ms)"
    fig = report.tenant_throughput_figure({"x": multi})
    ax = fig.axes[0]
    xs = [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert 3.0 in [round(float(x), 6) for x in xs], "the stop at 3 ms is marked"
    assert tables.boundaries(multi) == [0.003]


def test_the_demo_reports_rates_per_phase_and_the_nic_queues(ran: Ran) -> None:
    d = ran("demo")
    r = tenantnet.Results.read(d / "static")
    t = tables.vm_phase_table(r).set_index("vm")
    print(t.to_string())
    assert t.loc["web/h0", "1 to 2 s (Gb/s)"] == pytest.approx(6.0, rel=0.01)
    assert t.loc["web/h0", "0 to 1 s (Gb/s)"] < 0.01
    assert set(r.queues["switch"]) >= {"h0", "h1"}, "host NIC queues are recorded"
    cmp = pd.read_csv(d / "comparison.csv")
    assert all("(Gb/s per VM)" in c or "(s to converge)" in c for c in cmp.columns
               if c.startswith(("analytics", "web")))


def significant_digits(text: str) -> int:
    worst = 0
    for v in re.findall(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?", text):
        mant = v.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
        worst = max(worst, len(mant))
    return worst


def test_reproduction_csvs_are_rounded_and_carry_units(tmp_path: Path) -> None:
    from tenantnet.reproduce import barberq
    heads = {"barberq_fig1.csv": "scheme,service1_gbps,service2_gbps,evicted_packets,"
             "dropped_packets", "barberq_fig1_vs_paper.csv": "claim,ours,paper,expected,ok,"
             "status,note"}
    written = barberq.reproduce_fig1(tmp_path)
    assert {p.name for p in written if p.suffix == ".csv"} == set(heads)
    for path in written:
        if path.suffix == ".csv":
            text = path.read_text()
            assert significant_digits(text) <= 6, text
            assert text.splitlines()[0] == heads[path.name]


def test_the_run_summary_line_reads_well(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text((ROOT / "examples" / "graph-two-tier.toml").read_text())
    p = cli("run", str(sc), "--out", str(tmp_path / "o"), "-q", "--no-report")
    assert p.returncode == 0 and "graph-two-tier: 10 ms simulated in" in p.stdout, p.stdout


def test_slowdown_and_port_counters_are_in_the_report(tmp_path: Path) -> None:
    r = tenantnet.run(ROOT / "examples" / "dctcp-incast.toml")
    s = tables.slowdown_table(r)
    assert set(s.columns) == {"tenant", "size", "finished", "unfinished", "p50", "p99", "mean"}
    assert s["finished"].sum() == r.flows["end_s"].notna().sum()
    links = tables.links_table(r)
    marks = int(r.links["ecn_marks"].sum())
    assert marks > 0 and links["ECN marks (packets)"].max() == r.links["ecn_marks"].max()
    html = report.write_report({"x": r}, tmp_path / "r.html", "t").read_text()
    for heading in ("Slowdown by flow size", "Drops, evictions and ECN marks per port"):
        assert heading in html


def test_reproduction_figures_define_their_measures() -> None:
    from tenantnet.reproduce import qshare as rq
    assert "RNL<9" in rq.MEASURES and "RND" in rq.MEASURES and "RNI" in rq.MEASURES


def test_trinity_runs_chart_what_their_channels_enforce_and_no_empty_vm_chart(
        tmp_path: Path) -> None:
    """A Trinity run's VMs have no token bucket of their own: the report charts R_G + R_W
    of their channels instead; with no VM samples recorded it says so rather than
    drawing an empty chart."""
    from builders.pipes import fig6
    sc = fig6("trinity", "100Mbps", "100Mbps", duration="100ms")
    sc["vswitch"] = {"policy": "trinity"}
    r = tenantnet.run(sc)
    v = r.vm_rates
    e = report.enforced_gbps(v)
    a1 = v["vm"] == "A1"
    assert (e[a1] == v.loc[a1, "rg_gbps"] + v.loc[a1, "rw_gbps"]).all()
    assert e[v["vm"] == "A2"].isna().all()
    assert report.vm_figure({"t": r}) is None
    fig = report.allocation_figure({"t": r})
    assert fig is not None and sorted(labels(fig)) == ["A1", "B1"]
    assert fig.axes[0].get_ylabel() == "enforced rate (Gb/s)"
    out = tmp_path / "report.html"
    report.write_report({"t": r}, out, "trinity")
    page = out.read_text()
    assert "VM transmit rates were not recorded" in page
    assert "Rate enforced for each VM" in page


def test_a_qshare_run_charts_its_binding_and_weights(tmp_path: Path) -> None:
    """Fig. 7(a) with the controller every 4 s: one of the three tenants that started
    at 3 s (alike, so which one rests on a near tie of measured demands: T10 before the
    handshake's RTT sample, T8 after) takes the idle T7's queue at 4 s with no weight
    changing, and the queue table, the weights chart and the report say so."""
    from tenantnet.report import qshare as report_qshare
    from tenantnet.reproduce import qshare_packet as qp

    r = tenantnet.run(qp.fig7a_scenario(interval_s=4.0, duration_s=5.0))
    assert r.qshare_queues is not None
    w = report_qshare.tenant_weights(r.qshare_queues, report_qshare.busiest_port(
        r.qshare_queues))
    at = {(row.time_s, row.tenant): row.queue for row in w.itertuples()}
    took = [t for t in ("T8", "T9", "T10") if at[(4.0, t)] == at[(0.0, "T7")] != 0]
    assert len(took) == 1, at
    assert at[(0.0, took[0])] == at[(4.0, "T7")] == 0
    summary = report_qshare.tenant_summary(r).set_index("tenant")
    assert summary.loc[took[0], "at the end"] == "dedicated"
    assert summary.loc["T7", "dedicated (% of updates)"] == 50
    out = report.write_report({"fig7a": r}, tmp_path / "report.html", "fig7a")
    h = out.read_text()
    assert "QShare: binding and weights over time" in h
    assert 'alt="QShare binding over time"' in h and 'alt="QShare weights over time"' in h


def test_a_port_has_one_colour_and_place_in_every_run_s_queue_figure(ran: Ran) -> None:
    d = ran("demo")
    runs = {s: tenantnet.Results.read(d / s) for s in ("none", "static", "mbfq")}
    order = sorted({k for r in runs.values() for k in report.busiest_queues(r)})
    t = report.TimeAxis(runs)
    seen: dict[str, Any] = {}
    for label, r in runs.items():
        fig = report.queue_figure(r, t, title=label, order=order)
        assert fig is not None
        lines = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
        labels = [ln.get_label() for ln in lines]
        assert labels == sorted(labels, key=order.index), labels  # one order everywhere
        for ln in lines:
            colour = (ln.get_color(), ln.get_linestyle(), ln.get_marker())
            assert seen.setdefault(ln.get_label(), colour) == colour, ln.get_label()
    assert len(seen) >= 4
