"""BarberQ's macrobenchmark (§III-B, Figs. 3 and 4; issue 17), scaled down: web
search on the 144-host leaf-spine with 2000 flows per run at 50 % and 90 % load.
`tenantnet reproduce barberq-fig3` and `barberq-fig4` run the paper's 10 000 flows
of four workloads at five loads."""

from __future__ import annotations

import pandas as pd
import pytest

from tenantnet.reproduce import barberq_macro as m


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return m.macro(("BarberQ", "Best-Effort", "Strawman", "Per-queue ECN", "PMSB"),
                   flows=2000, workloads=["websearch"], loads=[0.5, 0.9])


def test_every_flow_completes(runs: pd.DataFrame) -> None:
    print("\n" + runs[["load", "scheme", "fct_all_ms", "fct_small_ms", "drops",
                       "evictions", "ecn_marks"]].to_string())
    assert (runs["completed"] == 2000).all()
    assert (runs.loc[runs["scheme"] == "BarberQ", "evictions"] > 0).all()
    ecn = runs["scheme"].isin(["Per-queue ECN", "PMSB"])
    assert (runs.loc[ecn, "ecn_marks"] > 0).all() and (runs.loc[~ecn, "ecn_marks"] == 0).all()


def by(runs: pd.DataFrame, scheme: str, col: str) -> pd.Series:
    return runs[runs["scheme"] == scheme].set_index("load")[col]


def test_fig3_barberq_beats_best_effort_and_the_strawman(runs: pd.DataFrame) -> None:
    c = m.claims(runs[runs["scheme"].isin(m.FIG3)], 3)
    print("\n" + c.to_string())
    # small flows: best effort lets the DWRR queues take the buffer from the strict
    # queue; BarberQ evicts their tails for it (the strawman ties with BarberQ here:
    # its strict queue keeps a fixed 125 KB, which small flows never fill)
    ok = c.set_index("claim")["ok"]
    assert ok["BarberQ's small-flow mean FCT <= Best-Effort's at every workload and load"]
    # all flows: best effort lacks guarantees, the strawman work conservation
    for other in ("Best-Effort", "Strawman"):
        assert ok[f"BarberQ's all-flow mean FCT <= {other}'s at every workload and load"]
        assert (by(runs, other, "fct_all_ms") > by(runs, "BarberQ", "fct_all_ms")).all()


def test_fig4_barberq_beats_pmsb_on_small_flows(runs: pd.DataFrame) -> None:
    c = m.claims(runs[runs["scheme"].isin(m.FIG4)], 4)
    print("\n" + c.to_string())
    assert c.iloc[0]["ok"], "PMSB's small flows are slower than BarberQ's on average"


def test_the_schemes_set_what_the_paper_says() -> None:
    pq = m.scenario("cache", 0.6, "Per-queue ECN", 100)
    assert pq["network"]["ecn_scope"] == "queue" and pq["network"]["ecn_threshold"] == "550KB"
    assert pq["transport"]["ecn"] is True and pq["network"]["buffer_policy"] == "tail_drop"
    assert m.scenario("cache", 0.6, "PMSB", 100)["network"]["ecn_scope"] == "pmsb"
    b = m.scenario("hadoop", 0.8, "BarberQ", 100)
    assert b["network"]["buffer_policy"] == "barberq" and "ecn_threshold" not in b["network"]
    assert b["workloads"][0] | {"cdf": "hadoop", "load": 0.8, "flows": 100} == b["workloads"][0]
    assert m.scenario("cache", 0.6, "Strawman", 100)["network"]["buffer_policy"] == \
        "static_partition"
    with pytest.raises(ValueError, match="unknown scheme"):
        m.scenario("cache", 0.6, "Fancy", 100)


def test_fig4_under_linux_loss_recovery_pmsb_stays_within_the_papers_range() -> None:
    """Under NewReno BarberQ's evictions cost it timeouts a Linux host does not pay, and
    PMSB's overall mean FCT falls to 0.73 x BarberQ's here (paper: down to 0.87); with
    RACK-TLP (the ``linux`` profile, the paper's RTO_min kept) BarberQ's timeouts fall
    threefold or more, the overall ratio stays at or above 0.8 and PMSB's small flows
    stay slower than BarberQ's. 4 000 flows a point: with 2 000 the small flows' ratio
    read 0.999 under the profile's transmit wait, where the full reproduction's 10 000
    read 1.026 (and 4 000 here 1.129): too few small flows to tell a few per cent."""
    kw = {"flows": 4000, "workloads": ["websearch", "cache"], "loads": [0.5, 0.9]}
    runs = {p: m.macro(("BarberQ", "PMSB"), profile=p, **kw) for p in ("htsim", "linux")}
    table = pd.concat([m.claims(runs["htsim"], 4), m.claims(runs["linux"], 4, "linux")])
    print("\n" + table.to_string())
    linux = m.claims(runs["linux"], 4, "linux")
    assert linux["ok"].all(), linux.to_string()
    # each row's status follows its verdict, and a row not reproduced says why
    assert ((table["status"] == "reproduced") == table["ok"]).all()
    assert all(s.startswith("not reproduced: NewReno") for s in table.loc[~table["ok"], "status"])
    t = {p: r[r["scheme"] == "BarberQ"].set_index(["workload", "load"])["timeouts"]
         for p, r in runs.items()}
    assert (3 * t["linux"] <= t["htsim"]).all(), (t["linux"].tolist(), t["htsim"].tolist())
