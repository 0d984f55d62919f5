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
    presets = a.presets.set_index("scheme")["verdict"]
    assert presets["mbfq"] == "meets every level"
    assert presets["none"].startswith("misses web: guarantee")
    assert "each scheme's preset on the search's seeds:" in a.summary()
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


def test_a_local_ray_cluster_gives_the_same_ranking() -> None:
    def search(ray: str | None) -> Advice:
        return advise(demo(), slo.parse(LEVELS), ["static", "mbfq"], budget=4, seeds=2,
                      held_out=2, jobs=2, ray=ray)
    a, b = search(None), search("local")
    assert b.recommended == a.recommended
    cols = ["rank", "configuration", "score", "met"]
    assert b.ranking[cols].equals(a.ranking[cols]) and b.schemes.equals(a.schemes)
    assert b.held_out.equals(a.held_out)


def test_a_budget_of_time_stops_asking_when_the_verification_would_overrun_it() -> None:
    a = tenantnet.advise(demo(), LEVELS, ["static", "mbfq"], budget="1s", seeds=1,
                         held_out=2, jobs=2)
    # the first batch runs; then the verification alone (2 seeds x 5 configurations at
    # the pace of the first) would pass a second
    assert a.runs == 2 and a.held_out_runs > 0 and a.closest is not None
    with pytest.raises(ValueError, match="a time in s, min or h"):
        tenantnet.advise(demo(), LEVELS, ["static"], budget="5 parsecs")


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
    r = cli("advise", str(sc), "--slo", str(bad), "-o", str(tmp_path / "out"), "--budget",
            "1 fortnight")
    assert r.returncode == 2 and "expected a number of runs, or a time" in r.stderr
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
    # the winner's deployment beside it: the command it gives runs as written
    deploy = (out / "deploy" / "DEPLOY.md").read_text()
    assert deploy.startswith("# Deploying mbfq") and "The hosts run mbfq" in deploy
    assert sorted(f.name for f in (out / "deploy" / "sonic").glob("*.json")) == ["switch.json"]
    line = next(x for x in deploy.splitlines() if "--host h0" in x)
    args = line.replace("DEV", "eth0").split()[1:]
    args = [a.replace("IPV4", f"10.0.0.{i}") for i, a in enumerate(args)]
    r = cli(*args, cwd=out)
    assert r.returncode == 0, r.stderr
    assert "htb" in r.stdout and "MBFQ's agent" in r.stdout
    # another search over the same folder is refused without --force
    other = tmp_path / "other.toml"
    other.write_text("[levels]\nwork_conservation = 0.5\n")
    r = cli("advise", str(sc), "--slo", str(other), "-o", str(out), "--budget", "2",
            "--seeds", "1", "-q")
    assert r.returncode == 2 and "holds a search of another scenario" in r.stderr


CAPS = {
    "name": "caps", "simulation": {"duration": "1s", "seed": 1},
    "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "5us"},
    "network": {"buffer": "500KB"},
    "transport": {"protocol": "tcp", "min_rto": "5ms"},
    "tenants": [{"name": "a", "guarantee": "2Gbps", "hosts": ["h0", "h1"]},
                {"name": "b", "guarantee": "6Gbps", "hosts": ["h0", "h1"]}],
    "workloads": [{"kind": "long_lived", "tenant": t, "src": "h0", "dst": "h1",
                   "flows_per_pair": 4} for t in ("a", "b")],
    "output": {"sample_interval": "50ms"},
}
"""Two tenants, a (2 Gb/s) and b (6 Gb/s), always sending from h0 to h1 over a 10 Gb/s
NIC, under static caps of c times the guarantees. In closed form, with C = 10: below
c = C / (2 + 6) = 1.25 both get their caps and the NIC is 8c / C busy; above it a is
held at 2c and b gets C - 2c. So the links are at least 95 % busy from
c = 0.95 C / 8 = 1.19, b keeps 95 % of its guarantee up to c = (C - 0.95 x 6) / 2 =
2.15, and the NIC is full (the least idle) from 1.25 on."""


def _cap(label: str) -> float:
    return float(label.split("static.cap = ")[1].rstrip(")"))


def test_the_search_finds_the_caps_known_in_closed_form() -> None:
    levels = {"levels": {"guarantee": {"share": 0.95, "samples": 0.9},
                         "work_conservation": 0.95}, "objective": {"minimise": "idle"}}
    a = tenantnet.advise(CAPS, levels, ["static"], budget=14, seeds=1, held_out=2, jobs=2)
    assert a.recommended is not None and a.recommended.scheme == "static"
    assert 1.22 <= _cap(a.recommended.label()) <= 2.15, a.recommended.label()
    # every cap tried lands on the side of each bound that the closed form says
    ran = a.trials[a.trials["seeds"] > 0]
    caps = ran["configuration"].map(_cap)
    assert not ran[caps <= 1.15]["met"].any() and not ran[caps >= 2.25]["met"].any()
    inside = ran[(caps >= 1.25) & (caps <= 2.05)]
    assert len(inside) >= 3 and inside["met"].all(), ran[["configuration", "met"]]
    assert (caps <= 1.15).any() and (caps >= 2.25).any()  # both sides were tried
    # and the NIC's idle share is the closed form's, 100 - 80c % below c = 1.25
    for c, idle in zip(caps, ran["objective"], strict=True):
        assert idle == pytest.approx(max(0.0, 100 - 80 * c), abs=0.1), c
