"""Service levels in a file (`tenantnet.advice.slo`): every malformed file is refused
naming the file, the key, its value and what was expected; levels are judged on the
runs' figures over seeds, a tenant's own level replacing the one for every tenant."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

import tenantnet
from tenantnet.advice import slo
from tenantnet.comparison.compare import run_scheme
from tenantnet.errors import ScenarioError

GOOD = """
[levels]
guarantee = { share = 0.95, samples = 0.9 }
work_conservation = 0.9

[tenants.web]
guarantee = { share = 0.5, samples = 0.5, demand = "all" }

[objective]
minimise = "drops"
"""


def test_a_good_file_reads_as_its_levels(tmp_path: Path) -> None:
    f = tmp_path / "slo.toml"
    f.write_text(GOOD)
    s = slo.load(f)
    assert s.minimise == "drops" and s.source == str(f)
    kinds = {(lv.kind, lv.tenant): lv for lv in s.every}
    assert kinds[("guarantee", None)].bound == 90.0 and kinds[("guarantee", None)].share == 0.95
    assert kinds[("work_conservation", None)].bound == 90.0
    web = s.tenants["web"][0]
    assert (web.share, web.bound, web.demand) == (0.5, 50.0, "all")


@pytest.mark.parametrize("text, key, value, expected", [
    ("[levels]\nlatency = 3\n", "levels.latency", "3", "the keys are guarantee"),
    ("[levels]\nwork_conservation = 1.5\n", "levels.work_conservation", "1.5",
     "a number from 0 to 1"),
    ("[levels]\nfairness = true\n", "levels.fairness", "True", "a number from 0 to 1"),
    ("[levels]\nshort_p99_slowdown = 0.5\n", "levels.short_p99_slowdown", "0.5",
     "a number from 1"),
    ("[levels]\nguarantee = 0.95\n", "levels.guarantee", "0.95", "a table such as"),
    ("[levels]\nguarantee = { share = 0.95, demand = 'some' }\n",
     "levels.guarantee.demand", "'some'", "one of settled, all"),
    ("[levels]\nguarantee = { share = 0.95, of = 0.9 }\n", "levels.guarantee.of", "0.9",
     "the keys are share, samples, demand"),
    ("[tenants.web]\nfairness = 0.9\n", "tenants.web.fairness", "0.9",
     "the keys are guarantee, short_p99_slowdown"),
    ("[levels]\nfairness = 0.9\n[objective]\nminimise = 'cost'\n", "objective.minimise",
     "'cost'", "one of short_p99_slowdown"),
    ("[objective]\nminimise = 'drops'\n", "levels", "{}", "at least one level"),
    ("[level]\nfairness = 0.9\n", "level", "{'fairness': 0.9}",
     "the keys are levels, tenants, objective"),
])
def test_each_malformed_file_names_file_key_value_and_what_was_expected(
        tmp_path: Path, text: str, key: str, value: str, expected: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        slo.load(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: {key} = {value}: expected"), msg
    assert expected in msg, msg
    assert e.value.file == str(f) and e.value.key == key


def test_a_file_that_is_missing_or_not_toml_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        slo.load(tmp_path / "nothing.toml")
    f = tmp_path / "x.toml"
    f.write_text("[levels\n")
    with pytest.raises(ScenarioError, match=f"{f}: not TOML"):
        slo.load(f)


@pytest.fixture(scope="module")
def demo_runs() -> dict[str, list[tenantnet.comparison.outcome.Outcome]]:
    """The demo (web and analytics share a host's NIC) under three schemes, 2 seeds."""
    data = tomllib.loads(tenantnet.Scenario.builtin("demo").text)
    return {spec: [run_scheme(data, spec, seed) for seed in (1, 2)]
            for spec in ("none", "static", "mbfq")}


def test_levels_are_judged_on_the_runs_and_the_binding_one_is_named(demo_runs) -> None:
    s = slo.parse({"levels": {"guarantee": {"share": 0.95, "samples": 0.9},
                              "work_conservation": 0.9}})
    tables = {k: slo.judge(s, [o.measures for o in v]) for k, v in demo_runs.items()}
    for t in tables.values():
        assert list(t["level"]) == ["work conservation", "analytics: guarantee",
                                    "web: guarantee"]
    none, static, mbfq = tables["none"], tables["static"], tables["mbfq"]
    # without enforcement analytics' bulk flows take web's guarantee from it
    assert not slo.met(none) and slo.binding(none)["level"] == "web: guarantee"
    assert none.set_index("level").loc["web: guarantee", "verdict"] == "✘"
    # static reservation keeps the guarantees and leaves half the NIC idle
    assert not slo.met(static) and slo.binding(static)["level"] == "work conservation"
    wc = static.set_index("level").loc["work conservation"]
    assert wc["verdict"] == "✘" and 40 < wc["mean"] < 60 and wc["margin"] < 0
    assert (static.set_index("level").loc[["analytics: guarantee", "web: guarantee"],
                                          "verdict"] == "✔").all()
    assert slo.met(mbfq)


def test_a_tenants_own_level_replaces_the_one_for_every_tenant(demo_runs) -> None:
    ms = [o.measures for o in demo_runs["none"]]
    every = {"guarantee": {"share": 0.95, "samples": 0.9}}
    s = slo.parse({"levels": every,
                   "tenants": {"web": {"guarantee": {"share": 0.01, "samples": 0.01}}}})
    t = slo.judge(s, ms).set_index("level")
    assert list(t.index) == ["analytics: guarantee", "web: guarantee"]
    assert "≥ 1 % of its guarantee" in t.loc["web: guarantee", "rule"]
    # the same figure judged at a share it does reach
    strict = slo.judge(slo.parse({"levels": every}), ms).set_index("level")
    assert strict.loc["web: guarantee", "mean"] < t.loc["web: guarantee", "mean"]


def test_a_level_no_run_can_give_is_missing_not_met(demo_runs) -> None:
    ms = [o.measures for o in demo_runs["none"]]
    s = slo.parse({"tenants": {"nobody": {"short_p99_slowdown": 10}}})
    t = slo.judge(s, ms)
    assert list(t["verdict"]) == ["—"] and not slo.met(t)
    assert t["margin"].iloc[0] == -math.inf


def test_the_examples_service_levels_read() -> None:
    examples = Path(__file__).resolve().parents[1] / "examples" / "service-levels"
    files = sorted(examples.glob("*.toml"))
    assert files
    for f in files:
        s = slo.load(f)
        kinds = {lv.kind for lv in s.every} | {lv.kind for levels in s.tenants.values()
                                                for lv in levels}
        assert kinds == {"guarantee", "work_conservation", "fairness", "short_p99_slowdown"}
