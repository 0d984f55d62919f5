"""Every scenario in examples/ validates and runs, conserves packets, and shows what
its comment says to look at."""

from __future__ import annotations

from pathlib import Path

import pytest

import tenantnet
from helpers import check_conservation

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


def test_there_is_an_example_per_topology_family() -> None:
    kinds = {tenantnet.Scenario.from_file(p).data()["topology"]["kind"] for p in EXAMPLES}
    assert kinds == {"dumbbell", "star", "leaf_spine", "fat_tree", "jellyfish", "graph"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#"), "each example says what it shows"
    r = tenantnet.run(path)
    check_conservation(r)
    assert r.summary["packets_delivered"] > 0
    # an ideal completion time (at the links' rates) is a lower bound: no flow beats it
    # by more than its ports' clocks run fast (network.clock_ppm, 100 ppm by default)
    assert (r.flows["slowdown"].dropna() >= 1 - 100e-6 - 1e-9).all()


def test_the_fct_study_reports_slowdown_by_size() -> None:
    from tenantnet.measure.tables import slowdown_table
    r = tenantnet.run(Path(EXAMPLES[0]).parent / "fct-websearch.toml")
    assert r.summary["flows_completed"] == r.summary["flows_finite"] == 1000
    t = slowdown_table(r).set_index("size")
    print("\n" + t.to_string())
    assert t["finished"].sum() == 1000
    # short flows wait behind long ones: their tail slowdown is the worst
    assert t.loc["< 100 KB", "p99"] > t.loc["≥ 10 MB", "p99"]
    assert (t["p50"] >= 1).all()


def test_barberq_example_shares_the_port_equally() -> None:
    r = tenantnet.run(Path(EXAMPLES[0]).parent / "barberq-services.toml")
    tp = r.throughput
    both = tp[(tp["scope"] == "tenant") & (tp["time_s"] > 0.1)]
    g = both.groupby("id")["gbps"].mean()
    print(g)
    assert abs(g["service1"] / g["service2"] - 1) < 0.02
