"""`tenantnet reproduce c2qos-fig1`, `c2qos-fig3`, `c2qos-fig11` and `c2qos-fig12`,
scaled down: the checks the mechanisms decide hold, the files are written, and the
explanations the reports give for the paper's numbers we do not reach are measured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tenantnet import _core
from tenantnet.reproduce import c2qos_fig11, c2qos_fig12
from tenantnet.reproduce.c2qos import run_cpu
from tenantnet.reproduce.c2qos_fig1 import reproduce_fig1
from tenantnet.reproduce.c2qos_fig3 import reproduce_fig3


def passed(v: pd.DataFrame) -> pd.Series:
    return v["ok"].astype(str).eq("True")


def test_packet_cycles_and_the_worst_wait() -> None:
    # the model's anchor (1016 cycles at 1024 B) and 2.2 GHz / 695 = 3.165 Mpps
    assert _core.c2qos_packet_cycles(1024) == 1016
    assert _core.c2qos_packet_cycles(64) == 695
    assert _core.c2qos_packet_cycles(64, "multiple") > 695
    assert _core.c2qos_packet_cycles(1024, "single", 1.4) == round(1016 * 1.4)
    with pytest.raises(ValueError, match="single"):
        _core.c2qos_packet_cycles(64, "many")
    with pytest.raises(ValueError, match="deployment factor"):
        _core.c2qos_packet_cycles(64, "single", 0.0)
    # spec §6.5: N = 4 per class, one batch 23.6 us, k = 1: W = 94.4, 188.8, ...
    w = _core.hbs_worst_wait([4, 4, 4, 4], [1, 1, 1, 1], 23.6)
    assert w == pytest.approx([94.4, 188.8, 283.2, 377.6])
    # a class allowed k = 2 batches per lower batch weighs twice for the next
    assert _core.hbs_worst_wait([1, 1], [2, 1], 10.0) == pytest.approx([10.0, 30.0])


def test_fig1_scaled(tmp_path: Path) -> None:
    written = reproduce_fig1(tmp_path, phase_s=0.25)
    assert {p.name for p in written} == {"c2qos_fig1.png", "c2qos_fig1_series.csv",
                                         "c2qos_fig1_phases.csv", "c2qos_fig1_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig1_vs_paper.csv")
    gated = v[v["ok"].notna()]
    assert len(gated) == 12 and passed(gated).all(), gated
    st = pd.read_csv(tmp_path / "c2qos_fig1_phases.csv")
    bps = st[(st["case"] == "BPS") & (st["limiter"] == "ingress policing")].set_index("phase")
    # spec §6.2: round robin with both backlogged gives VM2 5.85 Gb/s
    assert bps.loc[2, "VM2_gbps"] == pytest.approx(5.85, rel=0.02)


def test_fig3_scaled(tmp_path: Path) -> None:
    written = reproduce_fig3(tmp_path, duration_s=0.2)
    assert {p.name for p in written} == {"c2qos_fig3.png", "c2qos_fig3_latency.csv",
                                         "c2qos_fig3_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig3_vs_paper.csv")
    gated = v[v["ok"].notna()]
    assert len(gated) == 4 and passed(gated).all(), gated


def test_fig11_accuracy_and_levels(tmp_path: Path) -> None:
    written = c2qos_fig11.reproduce_fig11(tmp_path, duration_s=0.3, seeds=1)
    assert {p.name for p in written} == {"c2qos_fig11.png", "c2qos_fig11_accuracy.csv",
                                         "c2qos_fig11_latency.csv", "c2qos_fig11_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig11_vs_paper.csv")
    acc = v[v["policy"].isin(["Fig. 11(a)", "Fig. 11(b)"])]
    assert len(acc) == 4 + 10 and passed(acc).all(), acc
    lat = pd.read_csv(tmp_path / "c2qos_fig11_latency.csv")
    med, avg = c2qos_fig11.levels(lat)
    # the robust part of the ordering at this scale: classes 1 and 2 below the
    # round-robin average, class 4 well above it; class 3 sits within a few percent
    # of the average (M/G/1 priority queues put it below the FCFS mean above 2/3
    # load), so the full ordering is checked on the full-size run, not here
    assert med[1] < med[2] < avg < med[4], (med, avg)
    assert med[4] > 1.1 * avg
    iqr = v[v["claim"].str.startswith("IQR")]
    assert passed(iqr).all(), iqr


def test_fig12_explanation() -> None:
    # the report's reason for C2TB's extra Nginx latency: the NIC's FIFO behind the
    # FTP VMs' full batches, not the core; with a 100 Gb/s NIC it goes away
    def median(cpu: dict[str, object], ftp: bool, nic: str) -> tuple[float, float]:
        d = c2qos_fig12.fig12_scenario(cpu, 0.2, ftp)
        d["topology"]["link_rate"] = nic
        m = c2qos_fig12.measure(run_cpu(d), 0.2, ftp)
        return float(np.median(m["rt_us"])), float(m["ftp_test"])

    c2tb = c2qos_fig12.POLICIES["C2TB only"]
    native, _ = median(c2tb, False, "10Gbps")
    slow, ftp = median(c2tb, True, "10Gbps")
    fast, _ = median(c2tb, True, "100Gbps")
    assert ftp == pytest.approx(4.0, rel=0.02)  # C2TB keeps FTP at its 4 Gb/s
    assert slow > 1.5 * native
    assert fast < 1.1 * native


def test_fig12_scaled(tmp_path: Path) -> None:
    written = c2qos_fig12.reproduce_fig12(tmp_path, phase_s=0.2)
    assert {p.name for p in written} == {"c2qos_fig12.png", "c2qos_fig12_response.csv",
                                         "c2qos_fig12_ftp.csv", "c2qos_fig12_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig12_vs_paper.csv")
    keep = v[v["claim"] == "FTP keeps 4 Gb/s (-2 %)"]
    assert len(keep) == 2 and passed(keep).all(), keep
    # every row the paper's numbers fail carries its reason
    bad = v[v["ok"].astype(str).eq("False")]
    assert (bad["note"].str.len() > 80).all(), bad


def test_figs5_6_the_simulated_core_charges_the_models_costs(tmp_path: Path) -> None:
    """Figs. 5-6: every ratio the paper prints, as the simulated PMD core charges it,
    and the plot and tables written."""
    from tenantnet.reproduce import c2qos_model as cm
    written = cm.reproduce_figs5_6(tmp_path)
    assert {p.name for p in written} == {"c2qos_fig5_6.png", "c2qos_fig5_6.csv",
                                         "c2qos_fig5_6_vs_paper.csv"}
    v = pd.read_csv(tmp_path / "c2qos_fig5_6_vs_paper.csv")
    print("\n" + v.to_string())
    assert passed(v).all(), v.to_string()
    pts = pd.read_csv(tmp_path / "c2qos_fig5_6.csv")
    # per-packet cost grows with size alone (ingress), never with the rate
    b = pts[pts["panel"] == "5b"]["cycles_per_packet"]
    assert b.is_monotonic_increasing and b.iloc[-1] > b.iloc[0]
