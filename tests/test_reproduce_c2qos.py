"""`tenantnet reproduce c2qos-fig7`, `c2qos-fig10` (scaled to 0.25 s phases) and
`c2qos-fig13` (10x faster): the checks the mechanisms set hold (Fig. 7's cycle
rates, C2TB strict's and MIN-MAX's rates and shares of §VI-A, HBS's probe near its
native latency, the NIC handler's recovery), and the files are written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tenantnet.reproduce.c2qos import reproduce_fig10
from tenantnet.reproduce.c2qos_fig7 import reproduce_fig7
from tenantnet.reproduce.c2qos_fig13 import reproduce_fig13


def passed(v: pd.DataFrame) -> pd.Series:
    return v["ok"].astype(str).eq("True")


def test_fig10_scaled(tmp_path: Path) -> None:
    written = reproduce_fig10(tmp_path, phase_s=0.25)
    names = {p.name for p in written}
    assert {"c2qos_fig10.png", "c2qos_fig10_vs_paper.csv",
            "c2qos_fig10_series.csv"} <= names
    v = pd.read_csv(tmp_path / "c2qos_fig10_vs_paper.csv")
    strict = v[v["policy"] == "C2TB strict"]
    assert len(strict) == 9 and passed(strict).all(), strict
    hbs = v[v["claim"] == "C2TB + HBS median at most 1.5 x native"]
    assert passed(hbs).all()
    # MIN-MAX (the backlog reading): VM3 at 1.9-2.4 Gb/s with VM1 above 4 in phase
    # 1, both at or above their MIN in phase 2; the literal reading too in phase 2
    mm = v[v["policy"] == "C2TB MIN-MAX"]
    assert len(mm) == 4 and passed(mm).all(), mm
    lit = v[(v["policy"] == "C2TB MIN-MAX, literal Alg. 1") & (v["phase"] == "2")]
    assert passed(lit).all(), lit
    # ingress policing lets the 64-byte VMs take the core (paper: 20 % each)
    pol = v[v["claim"] == "VM2 + VM4 take >= 30 % of the core"]
    assert passed(pol).all()
    # with the receive path through the core, Fig. 10(g) is ordered and HBS stays
    # near native; policing's loss then overshoots the paper's 12 % (ACKs dropped
    # at the full receive queue)
    g = v[v["policy"] == "Fig. 10(g), rx via PMD"]
    assert len(g) == 5 and passed(g).sum() == 2, g
    lost = v[(v["policy"] == "ingress policing, rx via PMD")]["ours"]
    assert float(lost.iloc[0]) > 25


def test_fig7(tmp_path: Path) -> None:
    written = reproduce_fig7(tmp_path)
    assert {p.name for p in written} == {"c2qos_fig7.png", "c2qos_fig7_rates.csv",
                                         "c2qos_fig7_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig7_vs_paper.csv")
    # MAX_i, strict and the default MIN-MAX reading meet Fig. 7 within 1 %
    gated = v[v["reading"].isin(["arithmetic", "strict", "MIN-MAX, backlog (default)"])]
    assert len(gated) == 20 and passed(gated).all(), gated
    # the other two readings each fail one case, a finding with its reason given
    for reading in ("MIN-MAX, proportional", "MIN-MAX, literal Alg. 1"):
        r = v[v["reading"] == reading]
        bad = r[~passed(r)]
        assert bad["case"].nunique() == 1, r
        assert bad["status"].str.startswith("differs: ").all(), r
        assert bad["status"].str.len().min() > 50, r
    # the paper column holds only what §IV-A-1 prints: MAX_i
    assert set(v.loc[v["paper"].notna(), "case"]) <= {"MAX_i", "all four backlogged"}


def test_fig13_scaled(tmp_path: Path) -> None:
    written = reproduce_fig13(tmp_path, t0=0.6, duration=1.4, monitor=0.1)
    assert {p.name for p in written} == {"c2qos_fig13.png", "c2qos_fig13_rates.csv",
                                         "c2qos_fig13_nic.csv", "c2qos_fig13_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig13_vs_paper.csv")
    handled = v[v["policy"] == "C2QoS + NIC handler"]
    assert len(handled) == 5 and passed(handled).all(), handled
    rise = v[v["claim"] == "VM1 above its 2 Gb/s"]
    assert passed(rise).all()
