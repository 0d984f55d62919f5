"""``tenantnet compare`` (issues 17 and 37): every scheme on one scenario, under
several seeds, judged by one yardstick with statistics. The verdicts are those
theory predicts: no enforcement breaks a guarantee, static reservation idles links,
MBFQ (at the sender) does both where the senders' NICs are the bottleneck and cannot
keep a guarantee where a receiver's link is; a scheme that never acted is not
judged; the measures themselves are checked against the max-min allocation and the
hose model's split."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tenantnet
from helpers import cli
from tenantnet.comparison.compare import compare
from tenantnet.measure import metrics, stats, verdicts

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LEAF_SPINE = EXAMPLES / "compare-leaf-spine.toml"


def verdict_table(out: Path) -> pd.DataFrame:
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
    v = verdict_table(demo)
    print("\n" + v[verdicts.NAMES].to_string())
    # what `tenantnet demo` shows once the tenants have settled
    assert not holds(v, "none", "guarantees") and holds(v, "none", "work conservation")
    assert holds(v, "static", "guarantees") and not holds(v, "static", "work conservation")
    assert holds(v, "mbfq", "guarantees") and holds(v, "mbfq", "work conservation")
    assert (v.loc[["none", "static", "mbfq"], "seeds_judged"] == 3).all()
    # the switch-buffer schemes cannot help there: the bottleneck is the senders' NICs.
    # BarberQ never evicts; the ECN schemes mark in some seeds under the default
    # transport and host timing, and then keep no guarantee
    assert v.loc["barberq", "note"].startswith("did not act:"), v.loc["barberq", "note"]
    assert all(v.loc["barberq", p] == "" for p in verdicts.NAMES)
    assert "never evicted" in v.loc["barberq", "note"]
    for scheme in ("pmsb", "per-queue-ecn"):
        idle = v.loc[scheme, "note"].startswith("did not act:")
        assert idle or not holds(v, scheme, "guarantees"), v.loc[scheme]
    # QShare acts with the preset's 200 ms interval (15 decisions in 3 s)
    assert v.loc["qshare", "note"] == "" and "decided 15 times" in v.loc["qshare",
                                                                            "engagement"]
    assert "control interval 200ms" in v.loc["qshare", "choices"]
    assert "vswitch CPU" in v.loc["c2qos", "note"]
    assert "two VMs of its tenant" in v.loc["trinity", "note"]


def test_static_reservation_is_measured_at_exactly_its_caps(demo: Path) -> None:
    # each VM capped at its guarantee and the rate counted is the data it sends: the
    # tenant's rate is the sum of its sending VMs' caps (the receivers' ACKs are not)
    t = pd.read_parquet(demo / "tenants.parquet")
    st = t[t["scheme"] == "static"].groupby("tenant")["rate_with_demand_gbps"].mean()
    assert st["web"] == pytest.approx(12.0, rel=0.01)
    assert st["analytics"] == pytest.approx(6.0, rel=0.01)


def test_compare_writes_tables_each_run_and_a_verdict_first_report(demo: Path) -> None:
    for name in ("verdicts", "runs", "tenants", "intervals", "latency"):
        assert (demo / f"{name}.parquet").is_file() and (demo / f"{name}.csv").is_file()
    for scheme in ("none", "static", "mbfq"):
        for seed in (1, 2, 3):
            r = tenantnet.Results.read(demo / scheme / f"seed-{seed}")
            assert r.summary["simulated_s"] == 3.0 and r.summary["seed"] == seed
    html = (demo / "report.html").read_text()
    assert html.index("class=verdict") < html.index("<img")
    assert html.count("<img") >= 2  # rate per tenant, utilisation over time
    assert "95 % t-interval over seeds" in html and "control interval 200ms" in html
    iv = pd.read_parquet(demo / "intervals.parquet")
    # under static reservation the NICs are 30 % busy while web is idle, 90 % while
    # it is active (3 + 6 Gb/s of 10): the bottleneck figure is the host link's
    st = iv[(iv["scheme"] == "static") & (iv["seed"] == 1)].set_index("to_s")
    assert st.loc[0.5, "bottleneck_utilisation"] == pytest.approx(0.30, abs=0.01)
    assert st.loc[1.5, "bottleneck_utilisation"] == pytest.approx(0.90, abs=0.01)
    runs = pd.read_parquet(demo / "runs.parquet")
    assert set(runs[runs["scheme"] == "barberq"]["status"]) == {"did not act"}


@pytest.fixture(scope="module")
def leaf_spine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The documentation's compare command (the README's too), as written, on a copy of
    the examples."""
    from docblocks import run_by, shell
    work = tmp_path_factory.mktemp("leaf-spine")
    shutil.copytree(EXAMPLES, work / "examples")
    (block,) = run_by("tests/test_compare.py")
    (command,) = block.text.strip().splitlines()
    assert "--seeds 5" in command and "compare-leaf-spine.toml" in command
    res = shell(command, work)
    assert res.returncode == 0, res.stderr
    return work / "tenantnet-out" / "compare", res.stdout


NUMBERS = re.compile(r"^(✔|✘|≈ inconclusive:) (.*)$")
AT_THRESHOLD = re.compile(r"^≈ [0-9.]+ ?%? ?\(at the threshold(, .*)?\)$")


@pytest.mark.slow
def test_every_verdict_on_the_leaf_spine_carries_its_interval(
        leaf_spine: tuple[Path, str]) -> None:
    out, stdout = leaf_spine
    v = verdict_table(out)
    print("\n" + v[verdicts.NAMES].to_string())
    judged = v[v["note"] == ""]
    assert set(judged.index) == set(tenantnet.schemes.SCHEMES) - {"c2qos", "barberq"}
    assert v.loc["barberq", "note"].startswith("did not act: BarberQ never evicted")
    shown: dict[tuple[str, str], set[str]] = {}
    for prop in verdicts.NAMES:
        for scheme, cell in judged[prop].items():
            if AT_THRESHOLD.match(str(cell)):
                # its interval is within a rounding of the threshold (verdicts' rule)
                p = next(x for x in verdicts.PROPERTIES if x.name == prop)
                lo, hi = judged.loc[scheme, f"{p.figure}_lo"], judged.loc[scheme, f"{p.figure}_hi"]
                d = p.least + verdicts.EXTRA_DECIMALS
                mean = judged.loc[scheme, p.figure]
                assert stats.decimals([mean, lo, hi], p.threshold, p.least) > d, (scheme, cell)
                continue
            m = NUMBERS.match(str(cell))
            assert m, (scheme, prop, cell)
            assert re.search(r"\[[0-9.]+, [0-9.]+\]", m.group(2)), (scheme, prop, cell)
            # the interval is the one the table's columns hold, and the verdict its
            p = next(x for x in verdicts.PROPERTIES if x.name == prop)
            lo, hi = judged.loc[scheme, f"{p.figure}_lo"], judged.loc[scheme, f"{p.figure}_hi"]
            want = "✔" if p.holds(lo) and p.holds(hi) else "✘" if not (
                p.holds(lo) or p.holds(hi)) else "≈"
            assert verdicts.symbol(cell) == want, (scheme, prop, cell, lo, hi)
            shown.setdefault((prop, m.group(2)), set()).add(verdicts.symbol(cell))
    # no two cells that read the same carry opposite verdicts
    assert all(len(s) == 1 for s in shown.values()), shown
    # the documentation shows this run's verdicts
    page = (EXAMPLES.parent / "docs" / "guide" / "compare.md").read_text(encoding="utf-8")
    block = page.split("```text\nscheme ", 1)[1].split("```", 1)[0]
    printed = [line.rstrip() for line in stdout.splitlines()]
    for line in ("scheme " + block).splitlines():
        if line.strip() != "…":
            assert line.rstrip() in printed, line


@pytest.mark.slow
def test_the_leaf_spine_s_verdicts_are_those_theory_predicts(
        leaf_spine: tuple[Path, str]) -> None:
    v = verdict_table(Path(leaf_spine[0]))
    # no enforcement lets bulk's six flows per NIC crowd out web's two
    assert not holds(v, "none", "guarantees") and holds(v, "none", "work conservation")
    # static: the hose guarantees fit every link (9 of 10 Gb/s at h4 and h5), and a
    # NIC whose web VM is idle stays under-used
    assert holds(v, "static", "guarantees") and not holds(v, "static", "work conservation")
    # MBFQ shares each sender's NIC, but three senders of bulk meet two of web at
    # the receivers' links, where no host policy acts
    assert not holds(v, "mbfq", "guarantees")


@pytest.mark.slow
def test_qshare_acts_on_the_leaf_spine_and_differs_from_static(
        leaf_spine: tuple[Path, str]) -> None:
    out = Path(leaf_spine[0])
    v = verdict_table(out)
    eng = v.loc["qshare", "engagement"]
    decided = re.search(r"decided (\d+) times", eng)
    assert decided and int(decided.group(1)) >= 10, eng
    assert re.search(r"binding changed (once|twice|\d+ times)", eng), eng
    # it rebinds while traffic runs: tenants move to dedicated queues after time 0
    t = tenantnet.Results.read(out / "qshare" / "seed-1").qshare_tenants
    assert t[t["time_s"] == 0]["dedicated"].sum() == 0
    assert t[t["time_s"] > 0]["dedicated"].sum() > 0
    figures = ["guarantees_pct", "work_conservation_pct", "jain"]
    assert not np.allclose(v.loc["qshare", figures].astype(float),
                           v.loc["static", figures].astype(float), rtol=0.01)
    # static reservation: each tenant's rate while it has demand is its senders' caps
    t = pd.read_parquet(out / "tenants.parquet")
    st = t[t["scheme"] == "static"].groupby("tenant")["rate_with_demand_gbps"].mean()
    assert st["bulk"] == pytest.approx(3 * 2.0, rel=0.01)
    assert st["web"] == pytest.approx(2 * 6.0, rel=0.01)


def test_a_scheme_that_cannot_act_is_not_judged(tmp_path: Path) -> None:
    # QShare told to decide every 4 s in a 3 s run decides only at time 0
    d = tenantnet.Scenario.builtin("demo").data()
    d["qshare"] = {"interval": "4s"}
    c = compare(tenantnet.Scenario.from_dict(d), ["none", "qshare"], seeds=2, jobs=1)
    v = c.verdicts.set_index("scheme")
    assert v.loc["qshare", "note"] == ("did not act: QShare's control interval 4s is not "
                                       "shorter than the 3s run: it decided only at time "
                                       "0, every tenant shared and capped at its guarantee")
    assert all(v.loc["qshare", p] == "" for p in verdicts.NAMES)
    assert verdicts.symbol(v.loc["none", "guarantees"]) == "✘"
    assert list(c.runs["status"]) == ["ok", "ok", "did not act", "did not act"]


def test_runs_in_parallel_give_the_same_tables() -> None:
    sc = tenantnet.Scenario.builtin("demo")
    one = compare(sc, ["none", "static"], seeds=2, jobs=1)
    two = compare(sc, ["none", "static"], seeds=2, jobs=2)
    for name in ("verdicts", "tenants", "intervals", "latency"):
        a, b = getattr(one, name), getattr(two, name)
        pd.testing.assert_frame_equal(a.drop(columns=["wall_s"], errors="ignore"),
                                      b.drop(columns=["wall_s"], errors="ignore"))


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
         "output": {"sample_interval": "10ms",
                    "throughput": ["vm", "vm_data", "link", "tenant"]}}
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
    (["--seeds", "0"], "expected a whole number from 1"),
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


def test_a_run_that_fails_with_a_bug_is_its_row_and_the_comparison_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-scenario error in one run (a bug) becomes that run's failed row, as a sweep
    records a failed point, instead of ending the whole comparison."""
    from tenantnet.comparison import compare as comparing

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")
    monkeypatch.setattr(comparing, "run", broken)
    data = tenantnet.Scenario.builtin("demo").data()
    o = comparing.run_scheme(data, "static", seed=1)
    assert o.measures is None
    assert o.error.startswith("failed: internal error (RuntimeError: boom)")


@pytest.mark.slow
def test_the_readme_picture_shows_the_verdicts_the_readme_command_gives_today(
        leaf_spine: tuple[Path, str]) -> None:
    """docs/img/compare-verdicts.png is drawn (scripts/verdict_png.py) from
    compare-verdicts.csv beside it, which holds this command's verdicts as the picture
    shows them: regenerate both when the verdicts change."""
    import hashlib
    import importlib.util

    from PIL import Image
    spec = importlib.util.spec_from_file_location(
        "verdict_png", EXAMPLES.parent / "scripts" / "verdict_png.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    img = EXAMPLES.parent / "docs" / "img"
    csv = (img / "compare-verdicts.csv").read_text(encoding="utf-8")
    shown = pd.read_csv(img / "compare-verdicts.csv", dtype=str,
                        keep_default_na=False).to_dict("records")
    assert shown == script.cells(Path(leaf_spine[0])), "run scripts/verdict_png.py"
    stamp = Image.open(img / "compare-verdicts.png").text["Description"]
    assert stamp == f"tenantnet verdicts {hashlib.sha256(csv.encode()).hexdigest()}"


@pytest.mark.slow
def test_the_numbers_the_guide_and_the_example_quote_are_this_runs(
        leaf_spine: tuple[Path, str]) -> None:
    runs = pd.read_parquet(Path(leaf_spine[0]) / "runs.parquet")
    per_seed = runs[runs["status"] == "ok"].groupby("seed")["short_flows"].min()
    lo, hi = int(per_seed.min()), int(per_seed.max())
    quoted = f"{lo} to {hi}"
    guide = (EXAMPLES.parent / "docs" / "guide" / "compare.md").read_text(encoding="utf-8")
    example = (EXAMPLES / "compare-leaf-spine.toml").read_text(encoding="utf-8")
    assert f"{quoted} flows under 100 KB finish" in " ".join(guide.split()), quoted
    assert f"{quoted} search flows under 100 KB" in " ".join(example.split()), quoted
