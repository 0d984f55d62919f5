"""`tenantnet reproduce trinity-fig6` and `trinity-fig7`: the files they write, and
the published claims that our model reproduces. The claims it does not (Trinity's
full use of the spare bandwidth; C-ES at about 230 Mb/s; A-ES failing a guarantee)
are reported in the `_vs_paper` files with ok = False and listed in issue 14's note."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tenantnet.reproduce import trinity


def claims(path: Path) -> pd.Series:
    df = pd.read_csv(path)
    assert set(df.columns) == {"claim", "ours", "paper", "ok", "note"}
    return df.set_index("claim")["ok"]


def test_fig6_writes_its_figure_data_and_comparison(tmp_path: Path) -> None:
    written = trinity.reproduce_fig6(tmp_path)
    assert {p.name for p in written} == {"trinity_fig6.csv", "trinity_fig6_series.csv",
                                         "trinity_fig6_vs_paper.csv", "trinity_fig6.png"}
    pts = pd.read_csv(tmp_path / "trinity_fig6.csv")
    assert len(pts) == 2 * len(trinity.FIG6_SCHEMES) * len(trinity.NS)
    ok = claims(tmp_path / "trinity_fig6_vs_paper.csv")
    print("\n" + pd.read_csv(tmp_path / "trinity_fig6_vs_paper.csv").to_string())
    for g in (100, 300):
        assert ok[f"static: A2 at {g}/{g} Mb/s within 2 % of its guarantee"]
        assert ok[f"no protection: A2 at {g}/{g} Mb/s, N = 10, within 20 % of C/(N+1)"]
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
