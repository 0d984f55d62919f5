"""Trinity's default profile keeps every guarantee, fills the link and shares the
spare in proportion to the guarantees over random tenants (the `trinity-shares`
reproduction, scaled down: fewer cases, shorter runs, other seeds)."""

from __future__ import annotations

from tenantnet.reproduce import trinity_shares as ts


def test_the_default_profile_keeps_guarantees_and_shares_the_spare_by_them() -> None:
    cases = ts.random_cases(10, seed=7777)
    assert {len(c.guarantees) for c in cases} >= {2, 4}
    summary = ts.shares_summary(ts.shares_points(cases, ("trinity",), duration_s=1.0))
    assert len(summary) == 10
    for _, row in summary.iterrows():
        assert row["lowest_pct_of_guarantee"] >= 97, row.to_dict()
        assert row["link_pct"] >= 95, row.to_dict()
        # every pair a share of the spare, at least a quarter of its proportional one
        assert row["min_share_of_proportional"] >= 0.25, row.to_dict()
    assert summary["jain"].mean() >= 0.95, summary["jain"].tolist()
