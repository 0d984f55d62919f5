"""``tenantnet sweep`` (issue 17): a grid of parameter values, seeds and schemes,
one dataset out; resumable after an interruption, a failing point is a row, and
the Ray backend gives the local pool's bytes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tenantnet
from helpers import cli
from tenantnet.comparison import sweep as sweeps


def short_demo() -> dict[str, Any]:
    """The demo in 0.6 s: web active from 0.2 s to 0.4 s."""
    d = tenantnet.Scenario.builtin("demo").data()
    d["simulation"]["duration"] = "600ms"
    for w in d["workloads"][2:]:
        w["start"], w["stop"] = "200ms", "400ms"
    return d


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "short.json"
    p.write_text(json.dumps(short_demo()))
    return p


def grid(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "grid.toml"
    p.write_text(text)
    return p


GRID = """
schemes = ["none", "static"]
[parameters]
"tenants[1].guarantee" = ["4Gbps", "6Gbps"]
"network.buffer" = ["300KB", "500KB"]
"""


def test_every_point_is_a_row_with_every_parameter_as_a_column(scenario: Path,
                                                               tmp_path: Path) -> None:
    df = tenantnet.sweep(scenario, grid(tmp_path, GRID), tmp_path / "out", jobs=2)
    assert len(df) == 8 and (df["status"] == "ok").all()
    assert list(df.columns[:5]) == ["point", "tenants[1].guarantee", "network.buffer",
                                    "seed", "scheme"]
    assert list(df["point"]) == list(range(8))
    assert list(df["scheme"]) == ["none", "static"] * 4
    assert (df["seed"] == 1).all()  # the scenario's own
    # static reservation: web sends at exactly its guarantee for its 0.2 s
    st = df[df["scheme"] == "static"].groupby("tenants[1].guarantee")["throughput_gbps[web]"]
    assert st.mean()["4Gbps"] / st.mean()["6Gbps"] == pytest.approx(4 / 6, rel=0.02)
    assert pd.read_parquet(tmp_path / "out" / "sweep.parquet").equals(df)
    assert (tmp_path / "out" / "sweep.csv").is_file()
    assert (tmp_path / "out" / "sweep.png").is_file()


def test_an_interrupted_sweep_computes_only_the_missing_points(scenario: Path,
                                                                tmp_path: Path) -> None:
    g = grid(tmp_path, GRID)
    out = tmp_path / "out"
    args = [sys.executable, "-m", "tenantnet", "sweep", str(scenario), "--grid", str(g),
            "-o", str(out), "-j", "1", "-q"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    points = out / "points"
    deadline = time.monotonic() + 120
    while len(list(points.glob("*.parquet"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {p.name: p.stat().st_mtime_ns for p in points.glob("*.parquet")}
    assert 3 <= len(before) < 8, before
    assert not (out / "sweep.parquet").exists()
    res = cli("sweep", str(scenario), "--grid", str(g), "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr
    after = {p.name: p.stat().st_mtime_ns for p in points.glob("*.parquet")}
    assert len(after) == 8
    assert all(after[k] == v for k, v in before.items()), "a finished point ran again"
    assert not list(points.glob(".*.tmp"))
    whole = tenantnet.sweep(scenario, g, tmp_path / "whole", jobs=2)
    assert pd.read_parquet(out / "sweep.parquet").equals(whole)


def test_ray_gives_the_local_pools_bytes(scenario: Path, tmp_path: Path) -> None:
    g = grid(tmp_path, 'seeds = [1, 2]\nschemes = ["none", "mbfq"]\n')
    tenantnet.sweep(scenario, g, tmp_path / "local", jobs=2)
    res = cli("sweep", str(scenario), "--grid", str(g), "-o", str(tmp_path / "ray"),
              "--backend", "ray", "-j", "2", "-q")
    assert res.returncode == 0, res.stderr
    for name in ("sweep.parquet", "sweep.csv"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_a_failing_point_is_a_row_and_the_rest_run(tmp_path: Path) -> None:
    d = short_demo()
    d["tenants"] = [{**t, "hosts": ["h0", "h1", "h2", "h3"]} for t in d["tenants"]]
    d["vswitch"]["interval"] = "10ms"  # Trinity's controller needs a divisor of 5 ms
    p = tmp_path / "s.json"
    p.write_text(json.dumps(d))
    res = cli("sweep", str(p), "--grid", str(grid(tmp_path, "")), "-o", str(tmp_path / "o"),
              "--schemes", "none,trinity", "-q")
    assert res.returncode == 0, res.stderr
    assert "1 failed" in res.stdout and "warning: point 1 (trinity) failed" in res.stderr
    df = pd.read_parquet(tmp_path / "o" / "sweep.parquet").set_index("scheme")
    assert df.loc["none", "status"] == "ok" and df.loc["trinity", "status"] == "failed"
    assert "interval" in df.loc["trinity", "error"]


@pytest.mark.parametrize(("text", "says"), [
    ("bogus = 1", "bogus: unknown key"),
    ('[parameters]\n"network.buffer" = []', "expected a non-empty list"),
    ('[parameters]\n"network..buffer" = [1]', "expected a dotted scenario key"),
    ('[parameters]\n"workloads[9].load" = [0.1]', "expected an index below 4"),
    ('[parameters]\n"network.buffer" = ["lots"]', 'grid point network.buffer = "lots"'),
    ('seeds = [-1]', "seeds = [-1]"),
    ('schemes = ["mbfq+static"]', "both set the host"),
])
def test_a_bad_grid_is_one_error_line_and_nothing_written(scenario: Path, tmp_path: Path,
                                                          text: str, says: str) -> None:
    res = cli("sweep", str(scenario), "--grid", str(grid(tmp_path, text)), "-o",
              str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error:") and says in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()


def test_set_key_reaches_into_lists_and_creates_tables() -> None:
    d: dict[str, Any] = {"workloads": [{"kind": "x"}]}
    sweeps.set_key(d, "workloads[0].load", 0.5)
    sweeps.set_key(d, "network.ecn.threshold", "30KB")
    assert d == {"workloads": [{"kind": "x", "load": 0.5}],
                 "network": {"ecn": {"threshold": "30KB"}}}


def test_the_documented_grid_is_the_example() -> None:
    root = Path(__file__).resolve().parents[1]
    text = (root / "examples" / "grids" / "leaf-spine-load.toml").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    page = root / "docs" / "guide" / "compare.md"
    assert f"```text\n{body.strip()}\n```" in page.read_text()
    g = sweeps.read_grid(root / "examples" / "grids" / "leaf-spine-load.toml")
    assert len(sweeps.points(g, g.schemes or [])) == 27


def test_a_point_is_known_by_everything_its_row_depends_on() -> None:
    p = sweeps.Point(0, {"network.buffer": "300KB"}, 1, "none")
    base = sweeps._key("scenario", p, 0.5)
    assert base == sweeps._key("scenario", p, 0.5)
    assert base != sweeps._key("scenario", p, 0.2)  # --settle changes the measures
    assert base != sweeps._key("scenario 2", p, 0.5)
    assert base != sweeps._key("scenario", sweeps.Point(0, p.values, 2, "none"), 0.5)


def test_the_summary_gives_means_with_intervals_and_counts_what_it_left_out(
        scenario: Path, tmp_path: Path) -> None:
    # three seeds; BarberQ never evicts where the bottleneck is the senders' NICs
    g = grid(tmp_path, 'seeds = [1, 2, 3]\nschemes = ["none", "static", "barberq"]\n'
                       '[parameters]\n"tenants[1].guarantee" = ["4Gbps", "6Gbps"]\n')
    df = tenantnet.sweep(scenario, g, tmp_path / "out", jobs=2)
    assert set(df[df["scheme"] == "barberq"]["status"]) == {"did not act"}
    assert set(df[df["scheme"] != "barberq"]["status"]) == {"ok"}
    assert "never evicted" in df[df["scheme"] == "barberq"]["engagement"].iloc[0]
    s = pd.read_parquet(tmp_path / "out" / "summary.parquet")
    assert len(s) == 6 and (s["points"] == 3).all()
    q = s[s["scheme"] == "barberq"].iloc[0]
    assert q["guarantees_pct_n"] == 0 and q["guarantees_pct_missing"] == (
        "3 of 3 seeds: did not act")
    st = s[(s["scheme"] == "static") & (s["tenants[1].guarantee"] == "6Gbps")].iloc[0]
    runs = df[(df["scheme"] == "static") & (df["tenants[1].guarantee"] == "6Gbps")]
    assert st["work_conservation_pct"] == pytest.approx(runs["work_conservation_pct"].mean())
    assert st["work_conservation_pct_lo"] <= st["work_conservation_pct"] <= \
        st["work_conservation_pct_hi"] and st["work_conservation_pct_n"] == 3
    # no flow has a size here: the short-flow figure is missing, with its reason
    assert st["short_p99_slowdown_n"] == 0
    assert "no flow under 100 KB finished" in st["short_p99_slowdown_missing"]
    assert df["missing"].str.contains("short_p99_slowdown: no flow under 100 KB").all()
    assert (tmp_path / "out" / "sweep.png").is_file()


def test_a_sweep_folder_holds_one_sweep_and_refuses_a_foreign_one(scenario: Path,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "out"
    tenantnet.sweep(scenario, {"schemes": ["none", "static"]}, out, jobs=1)
    before = set((out / "points").iterdir())
    tenantnet.sweep(scenario, {"schemes": ["static"]}, out, jobs=1)
    after = set((out / "points").iterdir())
    assert len(after) == 1 and after < before  # the "none" point is gone, static kept
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["written_by"] == "tenantnet sweep"
    assert set(manifest["files"]) == {p.relative_to(out).as_posix() for p in out.rglob("*")
                                      if p.is_file() and p.name != "manifest.json"}
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.csv").write_text("1")
    res = cli("sweep", str(scenario), "--grid", str(grid(tmp_path, "")), "-o", str(mine),
              "--schemes", "none", "-q")
    assert res.returncode == 2 and "not written by tenantnet" in res.stderr
    assert [p.name for p in mine.iterdir()] == ["data.csv"]


def test_a_points_key_names_the_simulators_version() -> None:
    """A sweep resumed after an upgrade runs its points again rather than mixing two
    simulators' results: the version is part of each point's key."""
    p = sweeps.Point(0, {"a": 1}, 1, "none")
    assert sweeps._key("x", p, 0.5) == sweeps._key("x", p, 0.5, tenantnet.__version__)
    assert sweeps._key("x", p, 0.5) != sweeps._key("x", p, 0.5, "0.0.0-older")
