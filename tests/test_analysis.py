"""The analysis layer the reproductions and compare share (tenantnet.analysis)."""

from __future__ import annotations

import pandas as pd

from tenantnet.analysis import window


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
