"""Ctrl-C (issue 38): a long run, compare, sweep or reproduction stops within a
second of SIGINT with exit code 130 and one line, leaving no partial results folder
(a sweep keeps the points it finished)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import tenantnet
from helpers import default_sigint

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def interrupt(args: list[str], cwd: Path, ready: Callable[[], bool],
              wait: float = 120, twice: bool = False
              ) -> tuple[subprocess.CompletedProcess[str], float]:
    """Starts ``tenantnet ARGS``, sends SIGINT once `ready()` holds (`twice`: and again
    a moment later, as Ctrl-C pressed twice, or a wrapper in the same process group
    passing it on), and returns the finished process and the seconds it took to end
    after the signal."""
    env = dict(os.environ, TENANTNET_DEBUG="")
    proc = subprocess.Popen([sys.executable, "-m", "tenantnet", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + wait
    while not ready() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, ("it ended before it could be interrupted", proc.stderr)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    if twice:
        time.sleep(0.02)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took


def check(p: subprocess.CompletedProcess[str], took: float, parent: Path) -> None:
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert p.stderr.strip().splitlines()[-1] == "interrupted", p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert not [q.name for q in parent.iterdir() if q.name.startswith(".")], \
        "a temporary folder was left"


def after(seconds: float) -> Callable[[], bool]:
    """Ready `seconds` after the first look."""
    at: list[float] = []

    def ready() -> bool:
        at.append(time.monotonic())
        return at[-1] - at[0] >= seconds
    return ready


def started(path: Path) -> Callable[[], bool]:
    """Ready once the command has made its temporary folder beside `path`."""
    return lambda: any(q.name.startswith(f".{path.name}.") for q in path.parent.iterdir())


@pytest.mark.parametrize("twice", [False, True])
def test_run(tmp_path: Path, twice: bool) -> None:
    src = tmp_path / "perm.toml"
    src.write_text(tenantnet.Scenario.builtin("permutation").text)
    out = tmp_path / "o"
    # the run builds its scenario, then simulates for seconds before writing anything
    p, took = interrupt(["run", str(src), "--out", str(out)], tmp_path, after(2.5),
                        twice=twice)
    check(p, took, tmp_path)
    assert not out.exists()


def test_a_second_ctrl_c_while_a_run_writes_leaves_no_folder(tmp_path: Path) -> None:
    src = tmp_path / "perm.toml"
    d = tenantnet.Scenario.builtin("permutation").data()
    d["simulation"]["duration"] = "20ms"
    d["output"] = {"throughput": ["flow", "link"], "sample_interval": "10us",
                   "queues": True}  # tables that take a while to write
    src.write_text(tenantnet.Scenario.from_dict(d).text)
    src = src.rename(src.with_suffix(".json"))
    out = tmp_path / "o"
    p, took = interrupt(["run", str(src), "--out", str(out), "--no-report"], tmp_path,
                        lambda: any((q / "throughput.parquet").exists()
                                    for q in tmp_path.iterdir() if q.name.startswith(".o.")),
                        twice=True)
    check(p, took, tmp_path)
    assert not out.exists()


@pytest.mark.parametrize("twice", [False, True])
def test_compare(tmp_path: Path, twice: bool) -> None:
    out = tmp_path / "o"
    p, took = interrupt(["compare", str(EXAMPLES / "compare-leaf-spine.toml"), "--out",
                         str(out), "-j", "2"], tmp_path, started(out), twice=twice)
    check(p, took, tmp_path)
    assert not out.exists()
    time.sleep(0.5)
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".o.")]


def test_sweep_keeps_its_finished_points(tmp_path: Path) -> None:
    out = tmp_path / "o"
    grid = EXAMPLES / "grids" / "leaf-spine-load.toml"
    points = out / "points"
    p, took = interrupt(["sweep", str(EXAMPLES / "compare-leaf-spine.toml"), "--grid",
                         str(grid), "--out", str(out), "-j", "2"], tmp_path,
                        lambda: points.is_dir() and len(list(points.glob("*.parquet"))) >= 1)
    check(p, took, tmp_path)
    kept = list(points.glob("*.parquet"))
    assert kept and not (out / "sweep.parquet").exists()
    assert not list(points.glob(".*.tmp"))


@pytest.mark.parametrize("name", ["barberq-fig3"])
def test_reproduce(tmp_path: Path, name: str) -> None:
    out = tmp_path / "o"
    p, took = interrupt(["reproduce", name, "--out", str(out)], tmp_path, started(out))
    check(p, took, tmp_path)
    assert not out.exists()


def test_a_press_during_a_shielded_cleanup_waits_for_its_end() -> None:
    # the press reaches the process through another thread (the main one is busy in
    # the cleanup), as SIGINT does when the simulator's or pyarrow's threads take it:
    # blocking the signal in the main thread alone let this one in half-way
    from tenantnet.jobs.interrupts import shielded
    go = threading.Event()

    def press() -> None:
        go.wait()
        os.kill(os.getpid(), signal.SIGINT)
    helper = threading.Thread(target=press)  # started before the cleanup, as those are
    helper.start()
    steps = 0
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's
    try:
        with pytest.raises(KeyboardInterrupt), shielded():
            go.set()
            helper.join()
            for _ in range(200_000):  # Python instructions, where a handler would run
                steps += 1
    finally:
        signal.signal(signal.SIGINT, before)
    assert steps == 200_000


STOPPING = """
import os, signal, sys, time
from tenantnet.jobs.interrupts import stop_once
stop_once()
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    for _ in range({later}):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    print("cleaned up", flush=True)
"""


@pytest.mark.parametrize("later", [2, 3])
def test_the_command_line_stops_once_and_a_third_press_forces(later: int) -> None:
    p = subprocess.run([sys.executable, "-c", STOPPING.format(later=later)],
                       capture_output=True, text=True, timeout=30, preexec_fn=default_sigint)
    if later == 2:  # pressed twice more while stopping: the cleanup runs to its end
        assert (p.returncode, p.stdout, p.stderr) == (0, "cleaned up\n", "")
    else:  # three times more: it ends where it stands
        assert (p.returncode, p.stdout, p.stderr) == (130, "", "interrupted\n")
