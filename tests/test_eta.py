"""How long a command's runs take: the estimate said before they start (a trial of
each kind of run here), the ETA as they go, and the runs a command counts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import tenantnet
from helpers import cli
from tenantnet.jobs import runlog
from tenantnet.sim import eta

ROOT = Path(__file__).resolve().parents[1]


def test_a_duration_reads_in_seconds_minutes_or_hours() -> None:
    assert [eta.human(s) for s in (0.4, 45, 60, 190, 3600 * 2 + 300)] == \
        ["0 s", "45 s", "1 min", "3 min 10 s", "2 h 5 min"]


def test_the_makespan_follows_the_pool_each_worker_taking_the_next_run() -> None:
    assert eta.makespan([4, 1, 1, 1, 1], 2) == 4
    assert eta.makespan([1, 1, 1, 1], 2) == 2
    assert eta.makespan([3, 3, 3], 1) == 9 and eta.makespan([], 2) == 0


def test_the_eta_follows_the_pace_so_far_and_says_when_it_is_slower() -> None:
    e = eta.Eta(["a", "b", "c", "d"], [1.0, 1.0, 1.0, 1.0], 1)
    assert e.up_front("timed") == "4 runs on 1 worker: about 4 s here (timed)"
    assert e.left() == "about 4 s left" and e.pace() is None
    e.started = time.monotonic() - 1.0  # the first run took its estimate
    e.finished(0)
    assert e.pace() == pytest.approx(1.0, rel=0.05) and e.left() == "about 3 s left"
    e.started = time.monotonic() - 6.0  # the second took five times as long
    e.finished(1)
    text = e.left()
    assert text.startswith("about 6 s left, 3.0x slower than estimated (the machine is busy")
    assert e.label("compare")(2, 4, ["c"]).startswith("compare: 2/4 runs done, about 6 s")


def test_a_trial_times_the_start_of_a_run_per_estimated_event() -> None:
    d = tenantnet.Scenario.builtin("demo").data()
    speed, events = eta.trial(d)
    assert events == pytest.approx(tenantnet.Scenario.from_dict(d).validate().events)
    # 3 s of the demo estimated; its start (about TRIAL_EVENTS of them) takes
    # between 1 ns and 1 us an estimated event on any machine this runs on
    assert 1e-9 < speed < 1e-6


def test_runs_are_counted_in_this_process_and_its_workers() -> None:
    d = tenantnet.Scenario.builtin("demo").data()
    d["simulation"]["duration"] = "10ms"
    with runlog.counting() as count:
        assert count() == 0
        tenantnet.run(d)
        tenantnet.compare(d, ["none", "static"], seeds=1)
        assert count() == 3
    assert runlog.RUN_LOG not in __import__("os").environ


def test_compare_says_its_runs_and_their_time_up_front(tmp_path: Path) -> None:
    d = tmp_path / "demo.toml"
    text = (ROOT / "python" / "tenantnet" / "scenarios" / "demo.toml").read_text()
    d.write_text(text.replace('duration = "3s"', 'duration = "50ms"'))
    out = cli("compare", str(d), "--schemes", "none,static", "--seeds", "2", "-o",
              str(tmp_path / "c"))
    assert out.returncode == 0, out.stderr
    assert "compare: 2 schemes x 2 seeds: 4 runs on 2 workers: about " in out.stderr
    assert "here (timed by a " in out.stderr
    quiet = cli("compare", str(d), "--schemes", "none", "--seeds", "1", "-o",
                str(tmp_path / "q"), "-q")
    assert quiet.returncode == 0 and "runs on" not in quiet.stderr


def test_every_reproduction_has_a_recorded_time() -> None:
    import json

    from tenantnet.reproduce import REPRODUCTIONS
    ref = json.loads(eta.REFERENCE.read_text())
    assert set(ref["reproductions"]) == set(REPRODUCTIONS)
    # a few reproductions place tenants without simulating: no runs to count
    assert ref["calibration_s"] > 0 and all(
        r["runs"] >= 0 and r["wall_s"] > 0 for r in ref["reproductions"].values())
    assert sum(r["runs"] > 0 for r in ref["reproductions"].values()) >= 28
