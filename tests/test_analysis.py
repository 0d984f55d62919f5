"""The analysis layer the reproductions and compare share (tenantnet.measure.analysis)."""

from __future__ import annotations

import pandas as pd

from tenantnet.measure.analysis import by_scope, window


def samples() -> pd.DataFrame:
    # times as a run sums them: 0.1 + 0.2 is 0.30000000000000004
    t = [0.1, 0.1 + 0.1, 0.1 + 0.2, 0.4, 0.5]
    return pd.DataFrame({"time_s": t, "x": range(5)})


def test_a_window_holds_the_samples_after_its_start_and_up_to_its_end() -> None:
    s = samples()
    assert list(window(s, 0.1, 0.3)["x"]) == [1, 2]  # 0.30000000000000004 is 0.3
    assert list(window(s, 0.3)["x"]) == [3, 4]  # nor is it after 0.3
    assert list(window(s, until=0.2)["x"]) == [0, 1]
    assert window(s) is s


def test_a_series_by_time_is_windowed_on_its_index() -> None:
    s = samples().set_index("time_s")["x"]
    assert list(window(s, 0.1, 0.3, col=None)) == [1, 2]
    assert list(window(s.to_frame(), 0.2, col=None)["x"]) == [2, 3, 4]


def test_by_scope_gives_one_column_per_element_of_a_scope() -> None:
    tp = pd.DataFrame({
        "time_s": [0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.1],
        "scope": ["vm", "vm", "tenant", "vm", "vm", "tenant", "vm"],
        "id": ["a", "b", "t", "a", "b", "t", "a"],
        "tenant": ["t", "t", "t", "t", "t", "t", "u"],
        "gbps": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
    })
    s = by_scope(tp, "vm", only=["b", "a", "z"])
    assert list(s.columns) == ["b", "a", "z"]
    assert s["b"].tolist() == [2.0, 5.0]
    assert s["a"].tolist() == [4.0, 4.0]  # two rows at 0.1 averaged
    assert s["z"].isna().all()
    assert by_scope(tp, "vm", agg="sum", tenant="t")["a"].tolist() == [1.0, 4.0]
    assert by_scope(tp, "tenant", by="tenant").columns.tolist() == ["t"]
