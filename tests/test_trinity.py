"""Trinity (issue 14): the switch preset, guarantees kept by green traffic, the
spare shared (Fig. 6: A2 within 5 % of 500 Mb/s under the paper's controller), short
flows in the green class, and the scenario checks."""

from __future__ import annotations

from typing import Any

import pytest

import tenantnet
from builders.pipes import fig6, wire_mbps
from helpers import simulate
from tenantnet.reproduce.trinity_tables import qct_us, table_scenario


def trinity(sc: dict[str, Any], profile: str) -> dict[str, Any]:
    sc["vswitch"] = {"policy": "trinity", "trinity": {"profile": profile}}
    return sc


def test_the_preset_gives_switch_ports_a_green_and_a_red_queue() -> None:
    r, _ = simulate(trinity(fig6("trinity", "100Mbps", "100Mbps", duration="300ms"),
                            "paper"))
    q = r.queue_stats
    core = q[(q["node"] == "switch-left") & (q["peer"] == "switch-right")].set_index("queue")
    print("\n" + core.to_string())
    assert list(core.index) == [0, 1]
    # green (queue 0, served first) carries the two 100 Mb/s guarantees; red the rest
    green = core.loc[0, "tx_bytes"] * 8 / 0.3 / 1e6
    assert 190 < green < 215, green
    assert core.loc[1, "tx_bytes"] > core.loc[0, "tx_bytes"]
    # only the red queue marks (K = 30 KB per queue), and nothing is dropped
    assert core.loc[0, "ecn_marks"] == 0 and core.loc[1, "ecn_marks"] > 0
    assert r.summary["packets_dropped"] == 0


@pytest.mark.parametrize("profile", ["paper", "code"])
@pytest.mark.parametrize("g", [100, 300])
def test_each_pair_keeps_its_guarantee_against_ten_connections(profile: str, g: int) -> None:
    sc = trinity(fig6("trinity", f"{g}Mbps", f"{g}Mbps"), profile)
    if profile == "paper":
        # Fig. 6's 500 Mb/s for A2 holds (481) under the htsim transport with scheduled
        # ties; under the defaults (linux, clocks 100 ppm apart, partitioned ties) A2
        # gets 444, the reproduction's changed verdict (docs: performance guide)
        sc["transport"]["profile"] = "htsim"
        sc["simulation"]["ties"] = "scheduled"
    r, _ = simulate(sc)
    got = wire_mbps(r)
    print(f"\n{profile}, {g}/{g} Mb/s: {got.round(1).to_dict()} wire Mb/s "
          f"(paper Fig. 6: A2 about 500)")
    for t in ("A", "B"):
        assert got[t] >= g * 0.98, (t, got[t])
    # and more than the guarantee: the red class takes spare bandwidth; under the
    # paper's controller A2 gets its guarantee and half the spare, 500 Mb/s (Fig. 6)
    assert got["A"] > 1.5 * g or g == 300
    if profile == "paper":
        assert abs(got["A"] / 500 - 1) <= 0.05, got["A"]


def test_short_flows_ride_green_past_other_tenants_long_flows() -> None:
    """Table II's set-up (trinity-tables), 45 exchanges of 20 KiB."""
    qct = {}
    for policy in ("none", "static", "trinity"):
        r, _ = simulate(table_scenario({"policy": policy}, (200, 200, 200), 20, queries=45))
        # without protection a few exchanges lose packets and wait out an RTO past the
        # end of the run: counted as lasting until the end
        assert r.queries["qct_s"].notna().all() or policy == "none", policy
        q = qct_us(r, r.summary["simulated_s"])
        qct[policy] = (q.mean(), q.quantile(0.99))
    print("\nmean / p99 QCT (us):", {k: tuple(round(x) for x in v) for k, v in qct.items()})
    # green priority: as fast as with the link reserved (static), far faster than FIFO
    assert qct["trinity"][0] < 1.1 * qct["static"][0]
    assert qct["trinity"][1] < 1.1 * qct["static"][1]
    assert qct["trinity"][1] < 0.2 * qct["none"][1]


def test_a_single_queue_switch_cannot_carry_trinity() -> None:
    sc = trinity(fig6("trinity", "100Mbps", "100Mbps"), "paper")
    sc["network"]["queues"] = 1
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(sc).simulation()
    msg = str(e.value)
    print(msg)
    for frag in ("network.queues", 'vswitch.policy = "trinity"', "2 strict-priority queues"):
        assert frag in msg, (frag, msg)


def test_resequencing_absorbs_green_overtaking_red() -> None:
    retx = {}
    for timeout in ("0s", "20ms"):
        sc = fig6("trinity", "300Mbps", "300Mbps")
        sc["vswitch"] = {"policy": "trinity", "trinity": {"reseq_timeout": timeout}}
        r, _ = simulate(sc)
        retx[timeout] = int(r.flows["retransmits"].sum())
        assert r.summary["packets_dropped"] == 0
    print(f"\nspurious retransmissions without / with resequencing: {retx}")
    # nothing is dropped, so every retransmission is spurious: reordering
    assert retx["0s"] > 500
    assert retx["20ms"] < 0.1 * retx["0s"]


def test_the_colour_transition_delay_keeps_guarantees_and_the_link() -> None:
    """τ (T:L744-754) at the spec's 500 µs on Fig. 6's set-up, 300/300 Mb/s: the
    deferred green is spent later, not lost, so each pair keeps its guarantee and the
    link stays as full as without τ (how the spare is split moves; see
    `TrinityParams::tau`)."""
    got = {}
    for tau in ("0s", "500us"):
        sc = fig6("trinity", "300Mbps", "300Mbps")
        sc["vswitch"] = {"policy": "trinity", "trinity": {"tau": tau}}
        r, _ = simulate(sc)
        got[tau] = wire_mbps(r)
        print(f"\ntau {tau}: {got[tau].round(1).to_dict()} wire Mb/s")
        assert (got[tau] >= 300 * 0.98).all(), got[tau]
    total = {k: v.sum() for k, v in got.items()}
    assert total["500us"] >= 0.98 * total["0s"], total


def test_vm_rates_record_each_senders_rg_and_rw() -> None:
    r, _ = simulate(trinity(fig6("trinity", "100Mbps", "100Mbps", duration="300ms"), "paper"))
    v = r.vm_rates.set_index("vm")
    senders = v.loc[["A1", "B1"]]
    print("\n" + senders[["time_s", "send_gbps", "rg_gbps", "rw_gbps"]].tail(4).to_string())
    # R_G is the pipe; R_W the red rate the controller set (Eq. 4 start: C_W = 900)
    assert (senders["rg_gbps"] == 0.1).all()
    assert senders["rw_gbps"].between(0.0, 0.9).all()
    assert senders["rw_gbps"].iloc[0] == 0.9
    # receivers have no channel of their own; ES's column is empty in a Trinity run
    assert v.loc[["A2", "B2"], "rg_gbps"].isna().all()
    assert r.vm_rates["limit_gbps"].isna().all()
