"""The command line on bad input: one ``error:`` line, exit code 2, nothing written, no
traceback (issue 11, items 13-16); its help and version (item 25); progress on a
terminal (item 27)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import cli

BASE = """\
[simulation]
duration = "1ms"
[topology]
kind = "star"
hosts = 4
[[workloads]]
kind = "long_lived"
src = "h1"
dst = "h2"
"""




def bad(p: subprocess.CompletedProcess[str], *fragments: str) -> None:
    print(p.stderr)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) <= 4, "one error line (argparse adds usage)"
    for f in fragments:
        assert f in p.stderr, (f, p.stderr)


# -- 13: run --seed no longer re-parses the file in Python -------------------------------

@pytest.mark.parametrize("text,fragment", [
    ("simulation = [\n", "not valid TOML: line 1, column 15"),
    ('[simulation]\nduration = "1ms"\nduration = "2ms"\n', "line 3, column 1: duplicate key"),
    ("when = 1979-05-27T07:32:00Z\n" + BASE, "when = 1979-05-27T07:32:00Z: unknown key"),
    ("simulation = 5\n", "simulation = 5: expected a table"),
    ("a = " + "[" * 3000 + "]" * 3000 + "\n", "max recursion depth"),
])
def test_run_with_a_seed_reports_bad_files_in_one_line(tmp_path: Path, text: str,
                                                       fragment: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text(text)
    p = cli("run", str(f), "--out", str(tmp_path / "o"), "--seed", "3")
    bad(p, f"error: {f}", fragment)
    assert len(p.stderr) < 400, "no copy of a huge line"
    assert not (tmp_path / "o").exists()


def test_a_file_not_in_utf8_is_named(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_bytes(b"\xff\xfe[simulation]\n")
    bad(cli("run", str(f), "--out", str(tmp_path / "o"), "--seed", "3"),
        "not a text file in UTF-8")


def test_one_seed_range_everywhere(tmp_path: Path) -> None:
    # the largest seed a scenario file can hold (TOML's largest integer) is the
    # largest --seed, the API's and a sweep grid's
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    top = 2**63 - 1
    p = cli("run", str(f), "--out", str(tmp_path / "o"), "--seed", str(top), "-q",
            "--no-report")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["seed"] == top
    for seed in ("-1", str(top + 1), str(2**64), "x"):
        bad(cli("run", str(f), "--out", str(tmp_path / "n"), "--seed", seed),
            "--seed", f"expected a whole number from 0 to {top}")
    assert not (tmp_path / "n").exists()
    f.write_text(BASE.replace("[simulation]", f"[simulation]\nseed = {top}"))
    assert cli("validate", str(f)).returncode == 0
    f.write_text(BASE.replace("[simulation]", f"[simulation]\nseed = {top + 1}"))
    bad(cli("validate", str(f)), f"seed = {top + 1}", f"beyond {top} (2^63 - 1)")


# -- 14: outputs are checked before the run ---------------------------------------------------

def test_an_output_that_is_a_file_is_refused_before_running(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE.replace('"1ms"', '"2s"'))
    out = tmp_path / "taken"
    out.write_text("mine")
    t0 = time.monotonic()
    bad(cli("run", str(f), "--out", str(out)), f"{out}: exists and is not a folder")
    assert time.monotonic() - t0 < 10, "refused before a 2 s run"
    assert out.read_text() == "mine"


def test_results_replace_an_earlier_run_whole(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    out = tmp_path / "o"
    assert cli("run", str(f), "--out", str(out), "-q").returncode == 0
    first = (out / "summary.json").read_text()
    assert cli("run", str(f), "--out", str(out), "-q", "--seed", "9").returncode == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 9 != json.loads(first)["seed"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o.")], "no leftovers"


# -- 15: report on folders that are not results ------------------------------------------------

def test_report_on_a_missing_or_corrupt_folder(tmp_path: Path) -> None:
    bad(cli("report", str(tmp_path / "nowhere")), "not a folder")
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    d = tmp_path / "res"
    assert cli("run", str(f), "--out", str(d), "--no-report", "-q").returncode == 0
    (d / "flows.parquet").write_bytes(b"not parquet")
    bad(cli("report", str(d)), f"{d}: cannot read the results")
    (d / "flows.parquet").unlink()
    bad(cli("report", str(d)), "missing flows.parquet")
    (d / "summary.json").write_text("{")
    bad(cli("report", str(d)), "missing flows.parquet")
    assert not (d / "report.html").exists()


# -- 16: the QShare command ------------------------------------------------------------------

@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("qs")
    tenants = d / "t.csv"
    tenants.write_text("vms,guarantee_mbps\n4,100\n6,200\n3,50\n")
    p = cli("qshare", "place", "--k", "4", "--slots", "4", "--tenants", str(tenants),
            "--out", str(d / "p"))
    assert p.returncode == 0, p.stderr
    assert cli("qshare", "bind", str(d / "p")).returncode == 0
    return d / "p"


def copy_of(placed: Path, tmp: Path) -> Path:
    import shutil
    return Path(shutil.copytree(placed, tmp / "copy"))


@pytest.mark.parametrize("state,fragment", [
    ("[1, 2]", "expected a JSON object"),
    ('{"topology": 5}', "topology = 5: expected a table"),
    ("not json", "not valid JSON"),
])
def test_a_corrupt_state_is_refused(placed: Path, tmp_path: Path, state: str,
                                    fragment: str) -> None:
    d = copy_of(placed, tmp_path)
    (d / "state.json").write_text(state)
    bad(cli("qshare", "bind", str(d)), "state.json", fragment)


@pytest.mark.parametrize("edit,fragment", [
    (lambda s: s | {"queues": 0}, "queues = 0: expected a whole number from 1 to 64"),
    (lambda s: s | {"log": [{"op": "dance", "id": 1}]}, "log[0]"),
    (lambda s: s | {"log": [{"op": "place", "guarantees_bps": [0]}]}, "log[0]"),
])
def test_a_state_of_the_wrong_shape_is_refused(placed: Path, tmp_path: Path, edit: object,
                                               fragment: str) -> None:
    d = copy_of(placed, tmp_path)
    s = json.loads((d / "state.json").read_text())
    (d / "state.json").write_text(json.dumps(edit(s)))  # type: ignore[operator]
    bad(cli("qshare", "bind", str(d)), fragment)


@pytest.mark.parametrize("binding", ["{}", '{"dedicated": "x", "ports": [], "dscp": {}}', "["])
def test_a_corrupt_binding_is_refused(placed: Path, tmp_path: Path, binding: str) -> None:
    d = copy_of(placed, tmp_path)
    (d / "binding.json").write_text(binding)
    bad(cli("qshare", "bind", str(d)), "binding.json")
    bad(cli("qshare", "emit-sonic", str(d), "--out", str(tmp_path / "s")), "binding.json")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("args,fragment", [
    (["bind", "{d}", "--max-weight", "0"], "--max-weight"),
    (["bind", "{d}", "--seed", "-1"], "--seed"),
    (["bind", "{d}", "--k", "nan"], "--k"),
    (["place", "--fill", "-1", "--out", "{t}/o"], "--fill"),
    (["place", "--fill", "1", "--ha", "1.5", "--out", "{t}/o"], "--ha"),
    (["place", "--fill", "1", "--ha", "-1", "--out", "{t}/o"], "--ha"),
    (["place", "--fill", "1", "--ha", "nan", "--out", "{t}/o"], "--ha"),
    (["place", "--k", "4", "--fill", "1", "--out", "{t}/file"], "exists and is not a folder"),
])
def test_bad_qshare_arguments(placed: Path, tmp_path: Path, args: list[str],
                              fragment: str) -> None:
    (tmp_path / "file").write_text("x")
    d = copy_of(placed, tmp_path)
    p = cli("qshare", *[a.format(d=d, t=tmp_path) for a in args])
    bad(p, fragment)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("usage,fragment", [
    ("tenant,server,inbound_bps,outbound_bps\n0,h0\n", "line 2: no value for inbound_bps"),
    ("tenant,server,inbound_bps,outbound_bps\n0,h0,-5,1\n", "expected finite rates >= 0"),
    ("tenant,server,inbound_bps,outbound_bps\n0,h0,nan,1\n", "expected finite rates >= 0"),
    ("tenant,server,inbound_bps,outbound_bps\n99,h0,1,1\n", "tenant 99 is not placed"),
])
def test_bad_usage_rows(placed: Path, tmp_path: Path, usage: str, fragment: str) -> None:
    f = tmp_path / "u.csv"
    f.write_text(usage)
    bad(cli("qshare", "bind", str(copy_of(placed, tmp_path)), "--usage", str(f)), fragment)


@pytest.mark.parametrize("rows,fragment", [
    ("vms,guarantee_mbps\n4,nan\n", "guarantee_mbps"),
    ("vms,guarantee_mbps\n4,inf\n", "guarantee_mbps"),
    ("vms,guarantee_mbps\n4,1e30\n", "guarantee_mbps"),
    ("vms,guarantee_mbps\n4,0.0000001\n", "1e-6 <= guarantee_mbps"),
])
def test_bad_guarantees(tmp_path: Path, rows: str, fragment: str) -> None:
    f = tmp_path / "t.csv"
    f.write_text(rows)
    bad(cli("qshare", "place", "--k", "4", "--tenants", str(f), "--out", str(tmp_path / "o")),
        fragment)
    f.write_bytes(b"\x00\xff\xfe")
    bad(cli("qshare", "place", "--k", "4", "--tenants", str(f), "--out", str(tmp_path / "o")),
        "not a UTF-8 text file")
    assert not (tmp_path / "o").exists()


def test_a_topology_with_a_date_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "topo.toml"
    f.write_text('[topology]\nkind = "star"\nhosts = 4\nwhen = 1979-05-27\n')
    bad(cli("qshare", "place", "--topology", str(f), "--fill", "1", "--out",
            str(tmp_path / "o")), f"{f}: topology holds a value")


def test_an_impossible_tenant_is_rejected_without_allocating(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("vms,guarantee_mbps\n200000000,100\n2,100\n")
    t0 = time.monotonic()
    p = cli("qshare", "place", "--k", "4", "--tenants", str(f), "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert "1 tenants placed, 1 rejected" in p.stdout
    assert time.monotonic() - t0 < 20
    from tenantnet.sim.qshare import FAT_TREE_16, Controller
    c = Controller(FAT_TREE_16 | {"k": 4}, slots=4)
    out = c.fill(1, mean_vms=1e12, give_up=5)
    assert out["admitted"] == 0 and out["rejected"] == 5
    with pytest.raises(ValueError, match="mean_vms"):
        c.fill(1, mean_vms=float("nan"))


def test_emit_sonic_says_how_many_switches_need_nothing(placed: Path, tmp_path: Path) -> None:
    p = cli("qshare", "emit-sonic", str(placed), "--out", str(tmp_path / "s"))
    assert p.returncode == 0, p.stderr
    n = len([f for f in (tmp_path / "s").glob("*.json") if f.name != "manifest.json"])
    assert f"{n} switch configs" in p.stdout and "carry no tenant" in p.stdout, p.stdout


# -- 25: help, version ----------------------------------------------------------------------

def test_help_lists_what_there_is() -> None:
    from tenantnet.cli.main import BENCHMARKS
    from tenantnet.reproduce import REPRODUCTIONS
    h = cli("reproduce", "--help").stdout
    assert all(name in h for name in REPRODUCTIONS), h
    h = cli("bench", "--help").stdout
    assert all(name in h for name in BENCHMARKS), h
    v = cli("--version")
    import tenantnet
    assert v.returncode == 0 and v.stdout.strip() == f"tenantnet {tenantnet.__version__}"
    for cmd in (["run"], ["validate"], ["qshare", "place"], ["report"], ["demo"]):
        h = cli(*cmd, "--help").stdout
        assert "{" not in h.split("\n")[0] and "<bool>" not in h, h
    assert "[topology]" in cli("qshare", "place", "--help").stdout


# -- 27: progress on a terminal ---------------------------------------------------------------

def on_a_terminal(args: list[str], cwd: Path) -> str:
    """Runs the command with stderr on a pseudo-terminal; returns what it showed there."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    p = subprocess.Popen([sys.executable, "-m", "tenantnet", *args], cwd=cwd, stderr=slave,
                         stdout=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    p.wait()
    os.close(master)
    assert p.returncode == 0
    return seen.decode("utf-8", "replace")


def test_long_commands_show_what_they_do_on_a_terminal(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE.replace('"1ms"', '"50ms"'))
    seen = on_a_terminal(["run", str(f), "--out", "o"], tmp_path)
    assert "running s.toml" in seen and "writing report" in seen, seen[-2000:]
    seen = on_a_terminal(["reproduce", "barberq-fig1", "--out", "r"], tmp_path)
    assert "Fig. 1: BarberQ (1/3)" in seen, seen[-2000:]
    seen = on_a_terminal(["qshare", "place", "--k", "4", "--fill", "1", "--out", "q"], tmp_path)
    assert "filling" in seen, seen[-2000:]
