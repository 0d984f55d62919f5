"""The "Your own network" example (issue 59): a fabric as node-link JSON, tenants placed
by a CSV, a trace made by its script and a traffic matrix, compared across schemes."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

import tenantnet
from helpers import cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "your-network"


def test_the_script_makes_the_trace_the_example_ships(tmp_path: Path) -> None:
    work = tmp_path / "your-network"
    shutil.copytree(EXAMPLE, work)
    p = subprocess.run([sys.executable, str(work / "make_trace.py")], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    shipped = gzip.decompress((EXAMPLE / "trace.csv.gz").read_bytes())
    assert gzip.decompress((work / "trace.csv.gz").read_bytes()) == shipped
    t = pd.read_csv(work / "trace.csv.gz")
    # its load rises at the peak and falls in the evening
    per_phase = [t[(t["start"] >= a) & (t["start"] < b)]["size"].sum() / (b - a)
                 for a, b in ((0, 0.3), (0.3, 0.7), (0.7, 1.0))]
    assert per_phase[1] > 1.5 * per_phase[0] and per_phase[1] > per_phase[2]
    assert set(t["tenant"]) == {"web", "search", "cache"}


def test_the_example_runs_with_every_file(tmp_path: Path) -> None:
    r = tenantnet.run(EXAMPLE / "network.toml", progress=None)
    s = r.summary
    assert s["hosts"] == 40 and s["switches"] == 6 and s["conservation_ok"]
    assert set(r.vms["tenant"]) == {"web", "search", "analytics", "backup", "cache"}
    assert len(r.vms) == 80  # a row each in tenants.csv
    # backup's rows carry their own guarantee; the others take their tenant's
    g = r.vms.groupby("tenant")["guarantee_gbps"].unique()
    assert {t: list(v) for t, v in g.items()} == {"web": [4.0], "search": [2.0],
                                                  "analytics": [3.0], "backup": [1.0],
                                                  "cache": [1.0]}
    made = r.flows.groupby("tenant").size()
    assert made["analytics"] > 100 and made["web"] > 300
    assert r.flows["fct_s"].notna().mean() > 0.9


def test_compare_on_the_example_cut_short(tmp_path: Path) -> None:
    work = tmp_path / "your-network"
    shutil.copytree(EXAMPLE, work)
    toml = work / "network.toml"
    toml.write_text(toml.read_text().replace('duration = "1s"', 'duration = "100ms"')
                    .replace('stop = "1s"', 'stop = "100ms"'))
    p = cli("compare", str(toml), "--seeds", "2", "-q", "-o", str(tmp_path / "out"),
            timeout=900)
    assert p.returncode == 0, p.stderr
    v = pd.read_csv(tmp_path / "out" / "verdicts.csv")
    assert len(v) >= 5
    assert (tmp_path / "out" / "report.html").exists()
