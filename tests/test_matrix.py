"""``kind = "matrix"`` workloads (issue 59): a tenant's traffic matrix, or a series over
time, as Poisson flows whose offered load per pair is the matrix's entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tenantnet
from helpers import names_the_place
from tenantnet import Scenario, ScenarioError

STAR: dict[str, Any] = {
    "simulation": {"duration": "10ms"},
    "topology": {"kind": "star", "hosts": 4},
    "tenants": [{"name": "t", "guarantee": "1Gbps", "hosts": ["h0", "h1", "h2"]}],
}


def scenario(tmp_path: Path, **keys: Any) -> Scenario:
    w = {"kind": "matrix", "tenant": "t", "cdf": "websearch", **keys}
    return Scenario.from_dict(dict(STAR, workloads=[w]), source=str(tmp_path / "s.json"),
                              base_dir=tmp_path)


def offered_gbps(flows: pd.DataFrame, start: float, stop: float) -> dict[tuple[str, str], float]:
    f = flows[(flows["start_s"] >= start) & (flows["start_s"] < stop)]
    bits = f.groupby(["src", "dst"])["size_bytes"].sum() * 8
    return {k: float(v) / (stop - start) / 1e9 for k, v in bits.items()}


def test_each_pairs_offered_load_is_its_entry_over_a_long_run(tmp_path: Path) -> None:
    (tmp_path / "tm.csv").write_text(
        "src,dst,rate\nh0,h1,2Gbps\nh1,h0,500Mbps\nh2,h0,1e9\nh0,h2,0\n")
    flows = scenario(tmp_path, file="tm.csv", stop="40s").flows()
    got = offered_gbps(flows, 0.0, 40.0)
    want = {("h0", "h1"): 2.0, ("h1", "h0"): 0.5, ("h2", "h0"): 1.0}
    assert set(got) == set(want)  # a zero entry makes no flows
    for pair, g in want.items():
        assert got[pair] == pytest.approx(g, rel=0.02), (pair, got[pair])


def test_a_dense_matrix_and_a_series_over_time(tmp_path: Path) -> None:
    (tmp_path / "tm0.csv").write_text(",h0,h1,h2\nh0,0,1Gbps,\nh1,,0,\nh2,,,0\n")
    (tmp_path / "tm1.csv").write_text("src,dst,rate\nh1,h2,3Gbps\n")
    series = [{"at": "0s", "file": "tm0.csv"}, {"at": "10s", "file": "tm1.csv"}]
    flows = scenario(tmp_path, series=series, stop="20s").flows()
    first, second = offered_gbps(flows, 0, 10), offered_gbps(flows, 10, 20)
    assert set(first) == {("h0", "h1")} and first[("h0", "h1")] == pytest.approx(1.0, rel=0.03)
    assert set(second) == {("h1", "h2")} and second[("h1", "h2")] == pytest.approx(3.0, rel=0.03)
    # the flows run, between the tenant's VMs
    r = tenantnet.run(scenario(tmp_path, file="tm0.csv", stop="200ms"), progress=None)
    assert len(r.flows) > 5 and set(r.flows["tenant"]) == {"t"}
    assert r.flows["fct_s"].notna().any() and r.summary["conservation_ok"]


def test_one_entry_changed_leaves_the_other_pairs_flows_alone(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("src,dst,rate\nh0,h1,1Gbps\nh1,h2,1Gbps\n")
    (tmp_path / "b.csv").write_text("src,dst,rate\nh0,h1,1Gbps\nh1,h2,2Gbps\n")
    a, b = (scenario(tmp_path, file=f, stop="100ms").flows() for f in ("a.csv", "b.csv"))
    cols = ["src", "dst", "start_s", "size_bytes"]
    pick = lambda f: f[f["src"] == "h0"][cols].reset_index(drop=True)  # noqa: E731
    assert pick(a).equals(pick(b))


@pytest.mark.parametrize(("text", "keys", "fragments"), [
    ("src,dst,rate\nh0,h9,1Gbps\n", {}, ["row 1, column rate", "destination \"h9\"",
                                         "no host of the topology"]),
    ("src,dst,rate\nh0,h1,-5\n", {}, ["row 1, column rate = -5", "at least 0"]),
    ("src,dst,rate\nh0,h1,5 furlongs\n", {}, ["row 1, column rate", "unit"]),
    ("src,dst,rate\nh0,h0,1Gbps\n", {}, ["to itself"]),
    ("only\nh0\n", {}, ["expected columns src, dst and rate"]),
])
def test_a_bad_matrix_is_named_by_file_row_and_column(tmp_path: Path, text: str,
                                                      keys: dict[str, Any],
                                                      fragments: list[str]) -> None:
    (tmp_path / "tm.csv").write_text(text)
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, file="tm.csv", stop="1s", **keys).validate()
    names_the_place(e.value, tmp_path / "tm.csv", "workloads[0].file", fragments)


def test_series_keys_are_checked(tmp_path: Path) -> None:
    (tmp_path / "tm.csv").write_text("src,dst,rate\nh0,h1,1Gbps\n")
    with pytest.raises(ScenarioError, match="either file or series"):
        scenario(tmp_path, file="tm.csv", series=[{"at": "0s", "file": "tm.csv"}],
                 stop="1s").validate()
    with pytest.raises(ScenarioError, match=r"series\[1\]\.at.*after the previous"):
        scenario(tmp_path, series=[{"at": "1s", "file": "tm.csv"},
                                   {"at": "1s", "file": "tm.csv"}], stop="2s").validate()
    with pytest.raises(ScenarioError, match=r"missing.csv: no such file.*series\[1\]\.file"):
        scenario(tmp_path, series=[{"at": "0s", "file": "tm.csv"},
                                   {"at": "1s", "file": "missing.csv"}], stop="2s").validate()
