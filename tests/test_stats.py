"""Figures over seeds (issue 37): Student's t-interval, verdicts that say
"inconclusive" when the interval straddles the threshold, numbers with the decimals
that show their side of it, and missing values counted with their reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tenantnet.measure import stats, verdicts


@pytest.mark.parametrize(("df", "t"), [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622),
                                       (30, 2.0423), (120, 1.9799)])
def test_t_quantiles_are_the_table_s(df: int, t: float) -> None:
    assert stats.t975(df) == pytest.approx(t)


def test_t_quantiles_between_and_beyond_the_table() -> None:
    # interpolated in 1/df: between its neighbours, decreasing, toward the normal's
    assert stats.t975(40) > stats.t975(50) > stats.t975(60)
    assert stats.t975(50) == pytest.approx(2.0086, abs=1e-3)  # the exact value
    assert 1.96 < stats.t975(10_000) < stats.t975(1000) < 1.98
    with pytest.raises(ValueError):
        stats.t975(0)


def test_the_interval_is_mean_plus_minus_t_s_over_root_n() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    e = stats.estimate(x)
    half = 2.7764 * float(np.std(x, ddof=1)) / math.sqrt(5)
    assert (e.mean, e.lo, e.hi, e.n, e.total) == pytest.approx((3.0, 3 - half, 3 + half, 5, 5))
    assert e.has_interval
    # clipped to the figure's range
    e = stats.estimate([99.0, 100.0, 100.0], bounds=(0, 100))
    assert e.hi == 100 and e.lo < 99.67


def test_missing_values_are_counted_with_their_reason_not_dropped_silently() -> None:
    e = stats.estimate([0.9, math.nan, 0.95, math.nan],
                       ["", "no interval with two tenants", "", "no interval with two tenants"])
    assert (e.n, e.total) == (2, 4) and e.mean == pytest.approx(0.925)
    assert e.reasons() == "2 of 4 seeds: no interval with two tenants"
    none = stats.estimate([math.nan], ["failed"])
    assert none.n == 0 and math.isnan(none.mean) and none.reasons() == "1 of 1 seeds: failed"
    one = stats.estimate([0.5])
    assert not one.has_interval and one.lo == one.hi == 0.5


def test_the_verdict_of_an_interval() -> None:
    above = verdicts.PROPERTIES[3]  # fairness: Jain >= 0.9
    assert stats.judge(stats.Estimate(0.95, 0.91, 0.99, 3, 3), above.holds) == "✔"
    assert stats.judge(stats.Estimate(0.85, 0.80, 0.89, 3, 3), above.holds) == "✘"
    assert stats.judge(stats.Estimate(0.90, 0.88, 0.92, 3, 3), above.holds) == "≈"
    below = verdicts.PROPERTIES[2]  # latency: ratio <= 2
    assert stats.judge(stats.Estimate(1.5, 1.2, 1.9, 3, 3), below.holds) == "✔"
    assert stats.judge(stats.Estimate(2.5, 1.9, 3.1, 3, 3), below.holds) == "≈"


def test_numbers_show_which_side_of_the_threshold_they_are_on() -> None:
    # the pair: 0.899998 and 0.900004 both read "0.90" with two decimals
    assert stats.decimals([0.899998], 0.9, 2) == 6
    assert stats.decimals([0.900004], 0.9, 2) == 6
    assert stats.decimals([0.95, 0.97], 0.9, 2) == 2
    assert stats.decimals([94.6], 95, 0) == 1 and stats.decimals([94.98], 95, 0) == 2
    assert stats.decimals([0.9], 0.9, 2) == 2  # equal stays equal
    fair = verdicts.PROPERTIES[3]
    a, b = verdicts.cells([stats.Estimate(0.899998, 0.899998, 0.899998, 1, 1),
                           stats.Estimate(0.900004, 0.900004, 0.900004, 1, 1)], fair)
    # six decimals would show noise, not information: both sit at the threshold
    assert (a, b) == ("≈ 0.9000 (at the threshold)",) * 2
    # one that two extra decimals tell apart shows its side
    g, h = verdicts.cells([stats.Estimate(0.8996, 0.8996, 0.8996, 1, 1),
                           stats.Estimate(0.9004, 0.9004, 0.9004, 1, 1)], fair)
    assert (g, h) == ("✘ 0.8996", "✔ 0.9004")
    c, d = verdicts.cells([stats.Estimate(0.9, 0.85, 0.95, 3, 3), None], fair)
    assert c == "≈ inconclusive: 0.90 [0.85, 0.95]" and d == ""
    (e,) = verdicts.cells([stats.Estimate(0.97, 0.95, 0.99, 3, 5)], fair)
    assert e == "✔ 0.97 [0.95, 0.99] (3 of 5 seeds)"
    assert verdicts.cells([stats.Estimate(math.nan, math.nan, math.nan, 0, 3)], fair) == ["—"]


def test_latency_is_judged_seed_by_seed_against_the_best_scheme() -> None:
    p99 = {"a": [10.0, 20.0, 30.0], "b": [25.0, 30.0, 80.0], "c": [math.nan, 5.0, 5.0]}
    best, ratio, why = verdicts.latency_ratios(p99, ["a", "b"])
    assert best == "a"  # c is not judged
    assert ratio["a"] == [1.0, 1.0, 1.0]
    assert ratio["b"] == pytest.approx([2.5, 1.5, 80 / 30])
    assert math.isnan(ratio["c"][0]) and why["c"][0] == "no flow under 100 KB finished"
    assert verdicts.few_flows([120, 99]).startswith("its short-flow p99 rests on as few as 99")
    assert verdicts.few_flows([100, 200]) == ""
