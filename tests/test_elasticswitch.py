"""ElasticSwitch as Trinity's evaluation runs it (issue 14, part 2): C-ES (the
public module without -DTRINITY) and A-ES (with Trinity's rate control), on Fig. 6's
traffic: one connection against ten on the 1 Gb/s dumbbell."""

from __future__ import annotations

from typing import Any

import pytest

import tenantnet
from builders.pipes import fig6, wire_mbps
from helpers import simulate


def es(sc: dict[str, Any], profile: str) -> dict[str, Any]:
    sc["vswitch"] = {"policy": "elasticswitch", "elasticswitch": {"profile": profile}}
    return sc


@pytest.mark.parametrize("profile", ["trinity-code", "aggressive", "paper"])
@pytest.mark.parametrize("g", [100, 300])
def test_each_pair_keeps_its_guarantee_and_takes_some_spare(profile: str, g: int) -> None:
    r, _ = simulate(es(fig6("elasticswitch", f"{g}Mbps", f"{g}Mbps"), profile))
    got = wire_mbps(r)
    print(f"\n{profile}, {g}/{g}: {got.round(1).to_dict()} wire Mb/s")
    for t in ("A", "B"):
        assert got[t] >= 0.98 * g, (t, got[t])
        # above the guarantee: the limiter grows while the path is uncongested
        assert got[t] > 1.2 * g, (t, got[t])
    assert r.summary["packets_dropped"] == 0


def test_conservative_es_leaves_spare_bandwidth_unused() -> None:
    """Fig. 7(a): C-ES falls back to the guarantee on every mark, so a fifth or more
    of the spare bandwidth goes unused; A-ES, and the paper's RA, which cuts by half
    the marked fraction (never below the guarantee), use more of it; the paper's
    RA keeps 10 % of C as headroom, so it leaves at least that."""
    used = {}
    for profile in ("trinity-code", "aggressive", "paper"):
        r, _ = simulate(es(fig6("elasticswitch", "100Mbps", "100Mbps"), profile))
        used[profile] = wire_mbps(r).sum() - 200
    print(f"\nspare used of 800 Mb/s: {used}")
    assert used["trinity-code"] < 0.8 * 800
    assert used["aggressive"] > used["trinity-code"]
    assert used["paper"] > used["trinity-code"]
    assert used["paper"] < 800 - 0.1 * 1000


def test_the_paper_profile_knobs_are_checked() -> None:
    for key, value, want in (("headroom", 1.0, "from 0 up to"),
                             ("weighted_increase", 0.0, "positive")):
        sc = es(fig6("elasticswitch", "100Mbps", "100Mbps"), "paper")
        sc["vswitch"]["elasticswitch"][key] = value
        with pytest.raises(tenantnet.ScenarioError) as e:
            tenantnet.Scenario.from_dict(sc).simulation()
        msg = str(e.value)
        print(msg)
        assert f"vswitch.elasticswitch.{key}" in msg and want in msg, msg


def test_es_marks_its_single_queue_and_hosts_do_not() -> None:
    r, _ = simulate(es(fig6("elasticswitch", "100Mbps", "100Mbps", duration="300ms"),
                       "trinity-code"))
    q = r.queue_stats
    core = q[(q["node"] == "switch-left") & (q["peer"] == "switch-right")]
    assert list(core["queue"]) == [0]
    # the preset's K = 30 KB marks the shared queue; tenants' TCP has ECN off, so
    # every mark comes from ES's ECT
    assert core["ecn_marks"].sum() > 0
    # every mark of the run is a switch port's: host NICs do not mark
    assert r.summary["ecn_marks"] == q["ecn_marks"].sum()


def test_an_unknown_profile_is_named() -> None:
    sc = es(fig6("elasticswitch", "100Mbps", "100Mbps"), "seawall")
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(sc).simulation()
    msg = str(e.value)
    print(msg)
    for frag in ("vswitch.elasticswitch.profile", "seawall", "trinity-code", "aggressive"):
        assert frag in msg, (frag, msg)


def test_a_new_flow_gets_room_in_a_limiter_a_long_flow_keeps_full() -> None:
    """Table IV's set-up: A's 1 KB responses share A's limiter with A's own long
    flow. Senders waiting for room are woken in the order they stopped, so each
    response gets its turn (it once waited forever behind the long flow, which took
    every packet of room as it opened)."""
    from tenantnet.reproduce.trinity_tables import table_scenario
    r, _ = simulate(table_scenario("c-es", (200, 200, 200), 1, queries=20, a_long=True))
    q = r.queries["qct_s"]
    print(f"\nC-ES, 1 KB behind a long flow: QCT {(q * 1e3).round(2).tolist()} ms")
    assert q.notna().all()
    # the limiter's 64 KB queue at about 330 Mb/s: a response waits a few ms
    assert q.max() < 0.01
