"""Results folders (issue 37): replaced whole, so nothing of an earlier run stays;
a manifest lists what the run wrote, and readers read only that; a folder tenantnet
did not write is refused unless told --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tenantnet
from helpers import cli
from tenantnet.jobs import outdir

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def short(name: str, duration: str, tmp_path: Path) -> Path:
    d = tenantnet.Scenario.from_file(EXAMPLES / f"{name}.toml").data()
    d["simulation"]["duration"] = duration
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(d))
    return p


def files(d: Path) -> set[str]:
    return {p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()}


def listed(d: Path) -> set[str]:
    doc = json.loads((d / "manifest.json").read_text())
    return set(doc["files"]) | {"manifest.json"}


def test_run_replaces_the_folder_whole(tmp_path: Path) -> None:
    d = tmp_path / "d"
    a = short("qshare-two-queues", "1200ms", tmp_path)
    assert cli("run", str(a), "--out", str(d), "-q").returncode == 0
    assert (d / "qshare_tenants.parquet").is_file()
    (d / "notes.txt").write_text("mine")  # a file the user left in a results folder
    b = short("dumbbell-newreno", "5ms", tmp_path)
    res = cli("run", str(b), "--out", str(d), "-q")
    assert res.returncode == 0, res.stderr
    now = files(d)
    assert not any(f.startswith("qshare_") for f in now) and "notes.txt" not in now
    assert now == listed(d)  # every file is listed
    r = tenantnet.Results.read(d)
    assert r.qshare_tenants is None and r.summary["scenario"] != "qshare-two-queues"
    doc = json.loads((d / "manifest.json").read_text())
    assert doc["written_by"] == "tenantnet run" and "report.html" in doc["files"]


def test_readers_read_only_what_the_manifest_lists(tmp_path: Path) -> None:
    a = tenantnet.run(json.loads(short("qshare-two-queues", "1200ms", tmp_path).read_text()))
    b = tenantnet.run(json.loads(short("dumbbell-newreno", "5ms", tmp_path).read_text()))
    d = tmp_path / "api"
    a.write(d)
    b.write(d)  # the API writes into a folder as asked: a's QShare tables stay there
    assert (d / "qshare_tenants.parquet").is_file()
    assert tenantnet.Results.read(d).qshare_tenants is None  # but are not read back
    res = cli("report", str(d), "-q")
    assert res.returncode == 0, res.stderr
    assert "QShare" not in (d / "report.html").read_text()
    assert "report.html" in json.loads((d / "manifest.json").read_text())["files"]
    # a folder of an earlier version, without a manifest, is read as it is
    (d / "manifest.json").unlink()
    assert tenantnet.Results.read(d).qshare_tenants is not None


@pytest.mark.slow
def test_demo_replaces_an_earlier_demo_and_compare_an_earlier_compare(tmp_path: Path) -> None:
    d = tmp_path / "d"
    a = short("qshare-two-queues", "1200ms", tmp_path)
    assert cli("run", str(a), "--out", str(d), "-q").returncode == 0
    res = cli("demo", "--out", str(d), "-q")
    assert res.returncode == 0, res.stderr
    now = files(d)
    assert "flows.parquet" not in now and "qshare_tenants.parquet" not in now
    assert {"comparison.csv", "report.html", "mbfq/flows.parquet"} <= now == listed(d)
    demo = tenantnet.Scenario.builtin("demo").data()
    src = tmp_path / "demo.json"
    src.write_text(json.dumps(demo))
    res = cli("compare", str(src), "--out", str(d), "--schemes", "none,static", "--seeds",
              "1", "-q")
    assert res.returncode == 0, res.stderr
    now = files(d)
    assert not any(f.startswith(("mbfq/", "comparison")) for f in now), now
    assert {"verdicts.csv", "static/seed-1/flows.parquet"} <= now == listed(d)
    res = cli("compare", str(src), "--out", str(d), "--schemes", "mbfq", "--seeds", "1", "-q")
    assert res.returncode == 0, res.stderr
    assert not any(f.startswith(("none/", "static/")) for f in files(d))


@pytest.mark.parametrize("command", [
    ["run", str(EXAMPLES / "dumbbell-newreno.toml")], ["demo"],
    ["compare", str(EXAMPLES / "dumbbell-newreno.toml")],
    ["reproduce", "barberq-fig1"]])
def test_a_folder_tenantnet_did_not_write_is_refused_unless_forced(
        tmp_path: Path, command: list[str]) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "thesis.tex").write_text("precious")
    res = cli(*command, "--out", str(d), "-q")
    assert res.returncode == 2 and res.stderr.startswith("error:"), res.stderr
    assert "not written by tenantnet" in res.stderr and "--force" in res.stderr
    assert files(d) == {"thesis.tex"}
    if command[0] in ("run", "demo"):  # cheap enough to run here
        res = cli(*command, "--out", str(d), "-q", "--force")
        assert res.returncode == 0, res.stderr
        assert "thesis.tex" not in files(d)


def test_the_current_folder_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    res = cli("demo", "--out", ".", "-q", "--force", cwd=tmp_path)
    assert res.returncode == 2 and "current folder" in res.stderr, res.stderr
    assert (tmp_path / "x").exists()


def test_an_empty_folder_is_fine_and_publish_leaves_nothing_on_failure(tmp_path: Path) -> None:
    d = tmp_path / "empty"
    d.mkdir()
    outdir.check_out(d)

    def boom(folder: Path) -> None:
        (folder / "half.parquet").write_text("")
        raise RuntimeError("half-way")
    (d / "kept").write_text("")
    outdir.write_manifest(d, "test")
    with pytest.raises(RuntimeError):
        outdir.publish(d, boom, "test")
    assert files(d) == {"kept", "manifest.json"}
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]  # no temporary left


def test_a_table_written_page_by_page_has_the_bytes_written_to_the_path(
        tmp_path: Path) -> None:
    # through an open file, so that Ctrl-C stops a large table within a page
    # (tests/test_interrupt.py times it); the file is the one pyarrow writes to a path
    import numpy as np
    import pandas as pd

    from tenantnet.jobs.outdir import write_parquet
    df = pd.DataFrame({"t": np.arange(300_000) * 1e-5, "bytes": np.arange(300_000) % 977,
                       "port": ["s0:1", "s1:2", "h3:0"] * 100_000})
    df.to_parquet(tmp_path / "a.parquet", index=False, engine="pyarrow")
    write_parquet(df, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert pd.read_parquet(tmp_path / "b.parquet").equals(df)
