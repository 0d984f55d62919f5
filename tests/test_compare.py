"""``tenantnet compare`` (issue 17): every scheme on one scenario, judged by one
yardstick. The verdicts are those theory predicts: no enforcement breaks a
guarantee, static reservation idles links, MBFQ (at the sender) does both where the
senders' NICs are the bottleneck and cannot keep a guarantee where a receiver's link
is; the measures themselves are checked against the max-min allocation and the
hose model's split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tenantnet
from helpers import cli
from tenantnet import compare, metrics

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LEAF_SPINE = EXAMPLES / "compare-leaf-spine.toml"


def verdicts(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "verdicts.parquet").set_index("scheme")


def holds(v: pd.DataFrame, scheme: str, prop: str) -> bool:
    cell = str(v.loc[scheme, prop])
    assert cell[:1] in "✔✘", (scheme, prop, cell)
    return cell.startswith("✔")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("demo") / "demo.toml"
    src.write_text(tenantnet.Scenario.builtin("demo").text)
    out = src.parent / "out"
    res = cli("compare", str(src), "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr
    assert "report:" in res.stdout and "mbfq" in res.stdout
    return out


def test_compare_on_the_demo_gives_the_demos_verdicts(demo: Path) -> None:
    v = verdicts(demo)
    print("\n" + v[list(metrics.VERDICTS)].to_string())
    # what `tenantnet demo` asserts, in compare's terms
    assert not holds(v, "none", "guarantees") and holds(v, "none", "work conservation")
    assert holds(v, "static", "guarantees") and not holds(v, "static", "work conservation")
    assert holds(v, "mbfq", "guarantees") and holds(v, "mbfq", "work conservation")
    # the other schemes that apply have rows; those that do not say why
    ran = set(v.index[v["note"] == ""])
    assert {"none", "static", "mbfq", "qshare", "barberq", "pmsb", "per-queue-ecn"} <= ran
    assert "vswitch CPU" in v.loc["c2qos", "note"]
    assert "two VMs of its tenant" in v.loc["trinity", "note"]
    # static reservation: each VM at exactly its guarantee, so no spare is shared
    t = pd.read_parquet(demo / "tenants.parquet")
    st = t[t["scheme"] == "static"].set_index("tenant")
    assert st.loc["web", "rate_with_demand_gbps"] == pytest.approx(12.0, rel=0.01)
    assert st.loc["analytics", "rate_with_demand_gbps"] == pytest.approx(6.0, rel=0.01)


def test_compare_writes_tables_each_run_and_a_verdict_first_report(demo: Path) -> None:
    for name in ("verdicts", "tenants", "intervals", "latency"):
        assert (demo / f"{name}.parquet").is_file() and (demo / f"{name}.csv").is_file()
    for scheme in ("none", "static", "mbfq"):
        assert tenantnet.Results.read(demo / scheme).summary["simulated_s"] == 3.0
    html = (demo / "report.html").read_text()
    assert html.index("class=verdict") < html.index("<img")
    assert html.count("<img") >= 2  # rate per tenant, utilisation over time
    iv = pd.read_parquet(demo / "intervals.parquet")
    # under static reservation the NICs are 30 % busy while web is idle, 90 % while
    # it is active (3 + 6 Gb/s of 10): the bottleneck figure is the host link's
    st = iv[iv["scheme"] == "static"].set_index("to_s")["bottleneck_utilisation"]
    assert st.loc[0.5] == pytest.approx(0.30, abs=0.01)
    assert st.loc[1.5] == pytest.approx(0.90, abs=0.01)


def test_compare_on_a_leaf_spine_fills_every_row(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = cli("compare", str(LEAF_SPINE), "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr
    v = verdicts(out)
    print("\n" + v[list(metrics.VERDICTS)].to_string())
    ran = v[v["note"] == ""]
    assert set(ran.index) == set(tenantnet.schemes.SCHEMES) - {"c2qos"}
    for prop in metrics.VERDICTS:
        assert all(str(c)[:1] in "✔✘" for c in ran[prop]), prop
    # theory: no enforcement lets bulk's six flows per NIC crowd out web's two
    assert not holds(v, "none", "guarantees") and holds(v, "none", "work conservation")
    # static: the hose guarantees fit every link (9 of 10 Gb/s at h4 and h5), and a
    # NIC whose web VM is idle stays under-used
    assert holds(v, "static", "guarantees") and not holds(v, "static", "work conservation")
    # MBFQ shares each sender's NIC, but three senders of bulk meet two of web at
    # the receivers' links, where no host policy acts
    assert not holds(v, "mbfq", "guarantees")
    # Trinity's pair guarantees hold the receivers' links too
    assert holds(v, "trinity", "guarantees")
    # the README shows this run's verdicts
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    shown = readme.split("```text\nscheme ", 1)[1].split("```", 1)[0]
    printed = [line.rstrip() for line in res.stdout.splitlines()]
    for line in ("scheme " + shown).splitlines():
        if line.strip() != "…":
            assert line.rstrip() in printed, line


def test_runs_in_parallel_give_the_same_tables(tmp_path: Path) -> None:
    sc = tenantnet.Scenario.builtin("demo")
    one = compare.compare(sc, ["none", "static"], tmp_path / "a", jobs=1)
    two = compare.compare(sc, ["none", "static"], tmp_path / "b", jobs=2)
    for a, b in zip(one, two, strict=True):
        assert a.measures is not None and b.measures is not None
        pd.testing.assert_frame_equal(a.measures.tenants, b.measures.tenants)
        pd.testing.assert_frame_equal(a.measures.intervals, b.measures.intervals)
        assert repr(a.measures.row) == repr(b.measures.row)  # NaN == NaN here


def test_max_min_is_water_filling() -> None:
    # flows 0, 1 share link a (10); flow 1 also crosses b (4) with flow 2
    paths = [("a",), ("a", "b"), ("b",)]
    rate, hot = metrics.max_min(paths, {"a": 10.0, "b": 4.0}, np.full(3, np.inf))
    assert rate == pytest.approx([8.0, 2.0, 2.0])
    assert hot == {"a", "b"}
    # a UDP flow's demand caps it and its link is then not a bottleneck
    rate, hot = metrics.max_min([("a",), ("a",)], {"a": 10.0}, np.array([1.0, np.inf]))
    assert rate == pytest.approx([1.0, 9.0]) and hot == {"a"}
    rate, hot = metrics.max_min([("a",)], {"a": 10.0}, np.array([3.0]))
    assert rate == pytest.approx([3.0]) and hot == set()


def test_entitlement_is_the_hose_split() -> None:
    # A's VM on h0 sends to A's VM on h2 and to h3 (no VM of A); A2's VM on h1 sends
    # to A2's VM on h2. Sender split: A/h0 has 3 Gb/s for each destination; receiver
    # split: A/h2 (6 Gb/s) has one sender of A. So A/h0 is entitled to 3 + 3.
    d = {"simulation": {"duration": "100ms"},
         "topology": {"kind": "star", "hosts": 4, "link_rate": "10Gbps"},
         "tenants": [{"name": "A", "guarantee": "6Gbps", "hosts": ["h0", "h2"]},
                     {"name": "A2", "guarantee": "2Gbps", "hosts": ["h1", "h2"]}],
         "workloads": [{"kind": "long_lived", "tenant": "A", "src": "h0", "dst": ["h2", "h3"]},
                       {"kind": "long_lived", "tenant": "A2", "src": "h1", "dst": "h2"}],
         "vswitch": {"policy": "static"},
         "output": {"sample_interval": "10ms", "throughput": ["vm", "link", "tenant"]}}
    r = tenantnet.run(d)
    m = metrics.measure(r, d["workloads"])
    t = m.tenants.set_index("tenant")
    # A/h0: 3 to h2 (min(6/2, 6/1)) + 3 to h3 (no VM there: the sender's share alone)
    assert t.loc["A", "entitled_gbps"] == pytest.approx(6.0)
    assert t.loc["A2", "entitled_gbps"] == pytest.approx(2.0)
    # static caps each VM at its guarantee: every interval is satisfied, no spare
    assert t.loc["A", "satisfied_pct"] == 100 and t.loc["A2", "satisfied_pct"] == 100


@pytest.mark.parametrize(("args", "says"), [
    (["--schemes", "bogus"], "scheme 'bogus'"),
    (["--schemes", "qshare+mbfq,mbfq+trinity"], "both set the host"),
    (["--schemes", "c2qos"], "does not apply"),
    (["--schemes", "none,none"], "named twice"),
    (["--settle", "-1"], "expected a number"),
])
def test_bad_arguments_are_one_error_line(tmp_path: Path, args: list[str],
                                          says: str) -> None:
    src = tmp_path / "demo.toml"
    src.write_text(tenantnet.Scenario.builtin("demo").text)
    res = cli("compare", str(src), "-o", str(tmp_path / "out"), *args)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error:") and says in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()
