"""`tenantnet reproduce trinity-fig6` and `trinity-fig7`: the files they write, and
the published claims that our model reproduces. The claims it does not (Trinity's
full use of the spare bandwidth; C-ES at about 230 Mb/s; A-ES failing a guarantee)
are reported in the `_vs_paper` files with ok = False and their status says why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from helpers import htsim_scheduled
from tenantnet.reproduce import trinity
from tenantnet.reproduce.claims import COLUMNS


def claims(path: Path) -> pd.Series:
    df = pd.read_csv(path)
    assert list(df.columns) == list(COLUMNS)
    return df.set_index("claim")["ok"]


def test_fig6_writes_its_figure_data_and_comparison(tmp_path: Path) -> None:
    with htsim_scheduled():  # the paper RC's 500 Mb/s: 444 under the defaults
        written = trinity.reproduce_fig6(tmp_path)
    assert {p.name for p in written} == {"trinity_fig6.csv", "trinity_fig6_series.csv",
                                         "trinity_fig6_vs_paper.csv", "trinity_fig6.png"}
    pts = pd.read_csv(tmp_path / "trinity_fig6.csv")
    assert len(pts) == 2 * len(trinity.FIG6_SCHEMES) * len(trinity.NS)
    ok = claims(tmp_path / "trinity_fig6_vs_paper.csv")
    print("\n" + pd.read_csv(tmp_path / "trinity_fig6_vs_paper.csv").to_string())
    for g in (100, 300):
        assert ok[f"Trinity (paper RC): A2 at {g}/{g} Mb/s, N = 10, within 5 % of 500 Mb/s"]
        assert ok[f"static: A2 at {g}/{g} Mb/s within 2 % of its guarantee"]
        assert ok[f"no protection: A2 at {g}/{g} Mb/s, N = 10, within 20 % of C/(N+1)"]
    assert ok["C-ES: A2 at 100/100 Mb/s, N = 10, at least 20 % below Trinity's"]
    # every enforcing scheme keeps A's guarantee at every N (no protection does not)
    for s in ("static", "c-es", "trinity", "trinity-code"):
        d = pts[pts["scheme"] == s]
        g = d["guarantees_mbps"].str.split("/").str[0].astype(float)
        assert (d["a2_mbps"] >= 0.98 * g).all(), s
    # the 5 ms series of Fig. 6(c) covers 0.5 s for each scheme
    series = pd.read_csv(tmp_path / "trinity_fig6_series.csv")
    assert series.groupby("scheme").size().min() == 100


def test_fig7_c_es_keeps_guarantees_and_wastes_spare(tmp_path: Path) -> None:
    trinity.reproduce_fig7(tmp_path)
    assert (tmp_path / "trinity_fig7.png").stat().st_size > 10_000
    ok = claims(tmp_path / "trinity_fig7_vs_paper.csv")
    print("\n" + pd.read_csv(tmp_path / "trinity_fig7.csv").to_string())
    for panel in ("a", "b"):
        assert ok[f"({panel}) ElasticSwitch (C-ES): keeps both guarantees"]
        assert ok[f"({panel}) ElasticSwitch (C-ES): leaves at least 20 % of the spare unused"]
        assert ok[f"({panel}) Trinity (paper RC): keeps both guarantees"]
    pts = pd.read_csv(tmp_path / "trinity_fig7.csv").set_index(["panel", "scheme"])
    total = pts["a2_mbps"] + pts["b2_mbps"]
    # Trinity's red class puts more of the spare to use than C-ES's resets
    assert total[("a", "trinity")] > 1.15 * total[("a", "c-es")]


def test_tables_trinity_keeps_short_flows_fast_where_es_does_not(
        trinity_tables_scaled: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """Tables II-IV scaled to 300 exchanges per size (the command runs 2000)."""
    from tenantnet.reproduce import trinity_tables as tt
    pts = trinity_tables_scaled[0]
    print("\n" + pts.round(0).to_string())
    assert (pts["unfinished"] == 0).all()
    p = pts.set_index(["table", "size_kib", "scheme"])
    for t in tt.TABLES:
        for size in tt.SIZES_KIB:
            tr, es = p.loc[(t, size, "trinity")], p.loc[(t, size, "c-es")]
            assert es["mean_us"] > tr["mean_us"] and es["p99_us"] > tr["p99_us"], (t, size)
            if t == "IV":
                # behind its own long flow ES's short flows wait in the pair's queue;
                # Trinity's go first (paper: 4.5-5.5x)
                assert es["mean_us"] > 3 * tr["mean_us"], size
    for size in tt.SIZES_KIB:
        a, b = p.loc[("II", size, "trinity")], p.loc[("III", size, "trinity")]
        assert abs(b["mean_us"] / a["mean_us"] - 1) < 0.15, size
        a, b = p.loc[("II", size, "c-es")], p.loc[("III", size, "c-es")]
        assert b["mean_us"] > a["mean_us"], size
    # the 1 KB tail: ES / Trinity p99 at least 2 in Tables II and III (paper 3.1, 3.4)
    for t in ("II", "III"):
        assert p.loc[(t, 1, "c-es"), "p99_us"] > 2 * p.loc[(t, 1, "trinity"), "p99_us"], t


def test_fig12_a_lone_tenant_takes_the_link_and_udp_is_never_held() -> None:
    """Fig. 12 at a 1 ms interval. Alone, A's red rate is not cut by a "trapped"
    verdict that only means its red packets were still on their way (read literally,
    the test held A at its 200 Mb/s guarantee for 40 ms); B's UDP is counted but
    never resequenced (its drops leave gaps no packet fills: held, it arrived in
    20 ms bursts)."""
    from tenantnet.reproduce import trinity_convergence as tc
    s = tc.fig12_series()
    paper = s[s["profile"] == "paper"]
    alone = paper[(paper["time_s"] > 0.01 + 1e-9) & (paper["time_s"] <= tc.FIG12_UDP_START_S)]
    print("\nA alone, 5 ms samples:", alone["A"].round(0).tolist())
    assert (alone["A"] > 900).all()
    after = paper[paper["time_s"] > tc.FIG12_UDP_START_S + 0.005 + 1e-9]
    print("B (UDP) after it starts:", after["B"].round(0).tolist())
    assert (after["B"] >= 0.95 * 200).all()
    # both above their 200 Mb/s guarantee on average (the paper: about 500 each)
    assert after["A"].mean() > 200 and after["B"].mean() > 200


def test_fig2_conservative_es_shows_valleys() -> None:
    from tenantnet.reproduce import trinity_convergence as tc
    s = tc.fig2_series()
    ok = tc.fig2_compare(s).set_index("claim")["ok"]
    print("\n" + tc.fig2_compare(s).to_string())
    assert ok["(b) ElasticSwitch (C-ES): mean per tenant after 20 ms, ideal 500 Mb/s"]
    b = s[(s["panel"] == "b") & (s["scheme"] == "c-es") & (s["time_s"] > 0.02)]
    # a valley: back at the guarantee after every mark
    assert b["A"].min() < 1.1 * 150


def test_fig9_trinity_keeps_memcached_fast_under_udp(
        trinity_fig9_scaled: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """Fig. 9 scaled to 200 queries per client (the command runs 1000)."""
    s = trinity_fig9_scaled[0].set_index("scheme")
    print("\n" + s.round(0).to_string())
    for scheme in ("static", "c-es", "trinity", "trinity-code", "base (no UDP)"):
        assert s.loc[scheme, "unfinished"] == 0, scheme
    # the attack barely touches Trinity's queries (green, first in the switch)
    assert s.loc["trinity", "p99_us"] < 1.25 * s.loc["base (no UDP)", "p99_us"]
    # ES's queries share the switch's queue with the UDP its limiters let through
    assert s.loc["c-es", "p99_us"] > 1.5 * s.loc["trinity", "p99_us"]
    # without protection the requests are lost under the UDP: RTOs of 200 ms and more
    assert s.loc["none", "p99_us"] > 200 * s.loc["trinity", "p99_us"]


def test_fig8_shuffles_static_wastes_and_trinity_uses_the_spare(
        trinity_fig8_scaled: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """Fig. 8 with every size cut to 3 % (the command runs them whole)."""
    from builders.scaled import FIG8_SCALE as scale
    from tenantnet.reproduce import trinity_shuffle as ts
    pts = trinity_fig8_scaled[0]
    print("\n" + pts.to_string())
    assert (pts["unfinished"] == 0).all()
    p = pts.set_index(["scheme", "job"])["completion_s"]
    # static: FileStore's 32 pairs at 5 Mb/s: 9.6 GB at 160 Mb/s, about 510 s whole
    assert p[("static", "FileStore")] >= 480 * scale
    # Trinity and C-ES put the spare to use; ES is no faster than Trinity
    assert p[("trinity", "FileStore")] < 0.4 * p[("static", "FileStore")]
    assert p[("c-es", "FileStore")] >= 0.99 * p[("trinity", "FileStore")]
    # byte conservation: under every scheme the later job ends after the bound
    for scheme in ts.FIG8_SCHEMES:
        assert max(p[(scheme, "FileStore")], p[(scheme, "MapReduce")]) >= ts.bound_s(scale)
    # without protection FileStore's 8 connections per pair win
    assert p[("none", "FileStore")] < p[("none", "MapReduce")]


def test_fig12_refined_cuts_once_per_epoch_and_uses_more_of_the_link() -> None:
    """The `refined` profile's departures (issue 40): marks on red packets of an
    epoch before the last cut are not applied, and a caution channel grows slowly near
    the rate it was last cut from. On Fig. 12 at 1 ms the link is better used after
    B's UDP starts than under `paper` (87.2 %), whose outputs are unchanged by the
    epochs (its red packets all carry epoch 0)."""
    from tenantnet.reproduce import trinity_convergence as tc

    def after(profile: str) -> pd.DataFrame:
        vs = {"policy": "trinity", "trinity": {"profile": profile, "interval": "1ms"}}
        s = tc.series(vs, 200, 200, tc.FIG12_UDP_START_S, tc.FIG12_DURATION_S, b_udp=True)
        return s[s["time_s"] > tc.FIG12_UDP_START_S + tc.SAMPLE_S + 1e-9]

    with htsim_scheduled():  # under the defaults B's mean is 398 Mb/s under `paper`
        paper, refined = after("paper"), after("refined")
    use = {k: float((d["A"] + d["B"]).mean()) / 10 for k, d in
           (("paper", paper), ("refined", refined))}
    print("\nlink use after the UDP start, %:", {k: round(v, 1) for k, v in use.items()})
    assert use["refined"] > use["paper"] + 5
    assert use["refined"] > 93
    # both keep their 200 Mb/s guarantee on average, and neither starves
    for d in (paper, refined):
        assert d["A"].mean() > 400 and d["B"].mean() > 400
