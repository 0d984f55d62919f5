"""`tenantnet advise`: the search over schemes and their parameters finds what meets
the service levels, verifies it on seeds it never used, says what every other scheme
misses, resumes an interrupted search to the same answer, and names the closest
configuration and the binding level when nothing meets them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import tenantnet
from helpers import cli
from tenantnet.advice import slo
from tenantnet.advice.answer import Advice
from tenantnet.advice.api import HELD_OUT_FROM, advise

LEVELS = {"levels": {"guarantee": {"share": 0.95, "samples": 0.9},
                     "work_conservation": 0.9}}
"""On the demo: web's guarantee (analytics' bulk flows take it without enforcement)
and a busy NIC (static reservation leaves half of it idle); MBFQ's preset meets both."""


def demo() -> tenantnet.Scenario:
    return tenantnet.Scenario.builtin("demo")


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Advice, Path]:
    memo = tmp_path_factory.mktemp("advise") / "runs.jsonl"
    a = advise(demo(), slo.parse(LEVELS), ["none", "static", "mbfq"], budget=9, seeds=2,
               held_out=2, jobs=2, memo=memo)
    return a, memo


def test_the_scheme_that_meets_the_levels_is_recommended_and_verified_apart(
        searched: tuple[Advice, Path]) -> None:
    a, _ = searched
    assert a.recommended is not None and a.recommended.scheme == "mbfq"
    assert a.runs <= 9 and a.held_out_runs > 0
    # verified on seeds the search never used
    held = a.held_out[a.held_out["configuration"] == a.recommended.label()]
    assert (held["verdict"] == "✔").all() and (held["seeds"] == 2).all()
    first = a.ranking.iloc[0]
    assert first["rank"] == 1 and first["met"]
    schemes = a.schemes.set_index("scheme")
    assert schemes.loc["mbfq", "verdict"] == "meets every level"
    assert schemes.loc["none", "verdict"].startswith("misses web: guarantee")
    assert schemes.loc["static", "verdict"].startswith("misses work conservation")
    assert "% short" in schemes.loc["static", "verdict"]
    assert HELD_OUT_FROM > 2  # the held-out seeds start past the search's
    # the recommended scenario runs as it is
    d = a.scenario
    assert d["vswitch"]["policy"] == "mbfq"
    tenantnet.Scenario.from_dict(d, "recommended").validate()


def test_an_interrupted_search_resumes_to_the_same_answer(
        searched: tuple[Advice, Path], tmp_path: Path) -> None:
    a, memo = searched
    lines = memo.read_text().splitlines()
    cut = tmp_path / "runs.jsonl"  # stopped after a third of its runs, mid-line
    cut.write_text("\n".join(lines[: len(lines) // 3]) + "\n" + lines[-1][:20])
    b = advise(demo(), slo.parse(LEVELS), ["none", "static", "mbfq"], budget=9, seeds=2,
               held_out=2, jobs=2, memo=cut)
    assert b.recommended == a.recommended
    cols = ["rank", "configuration", "score", "met"]
    assert b.ranking[cols].equals(a.ranking[cols])
    assert b.schemes.equals(a.schemes)
    # the runs kept were replayed, the rest (the cut one too) run again: each once
    assert len(cut.read_text().splitlines()) == len(lines)


def test_when_nothing_meets_the_levels_the_closest_and_the_binding_level_are_named(
        tmp_path: Path) -> None:
    levels = {"levels": {"guarantee": {"share": 2.0, "samples": 0.9}}}  # twice it
    a = tenantnet.advise(demo(), levels, ["static", "mbfq"], budget=2, seeds=1,
               held_out=2, jobs=2)
    assert a.recommended is None and a.closest is not None
    assert a.binding.startswith(a.binding.split(":")[0]) and "guarantee" in a.binding
    assert "% short" in a.binding
    assert "no configuration tried meets every level" in a.summary()


def test_the_command_writes_its_tables_and_refuses_bad_input(tmp_path: Path) -> None:
    sc = tmp_path / "demo.toml"
    sc.write_text(demo().text)
    bad = tmp_path / "slo.toml"
    bad.write_text("[levels]\nwork_conservation = 2\n")
    r = cli("advise", str(sc), "--slo", str(bad), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{bad}: levels.work_conservation = 2: expected a number from 0 to 1" in r.stderr
    assert not (tmp_path / "out").exists()
    good = tmp_path / "good.toml"
    good.write_text("[levels]\nwork_conservation = 0.9\n")
    out = tmp_path / "out"
    r = cli("advise", str(sc), "--slo", str(good), "-o", str(out), "--schemes",
            "static,mbfq", "--budget", "2", "--seeds", "1", "--held-out", "2", "-q")
    assert r.returncode == 0, r.stderr
    assert "recommended: mbfq" in r.stdout and f"report: {out / 'report.html'}" in r.stdout
    for name in ("ranking", "held_out", "schemes", "trials"):
        assert (out / f"{name}.csv").exists() and (out / f"{name}.parquet").exists()
    assert tomllib.loads(good.read_text())
    # another search over the same folder is refused without --force
    other = tmp_path / "other.toml"
    other.write_text("[levels]\nwork_conservation = 0.5\n")
    r = cli("advise", str(sc), "--slo", str(other), "-o", str(out), "--budget", "2",
            "--seeds", "1", "-q")
    assert r.returncode == 2 and "holds a search of another scenario" in r.stderr
