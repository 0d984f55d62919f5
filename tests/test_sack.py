"""SACK loss recovery (``transport.recovery = "sack"`` and ``"rack"``) at packet level,
beside NewReno.

The RFC rules themselves (scoreboard, pipe, NextSeg, PRR, RACK's reordering window and
TLP) are unit-tested in the core (``transport/sack/tests.rs``, ``transport/rack/tests.rs``,
``transport/tcp_sender/tests_sack.rs``, ``tests_rack.rs``); here the whole path: the
receiver's blocks on the ACKs, through the fabric, into the sender.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import tenantnet
from helpers import simulate


def incast(recovery: str, senders: int, size: str, buffer: str, *,
           protocol: str = "tcp", ecn_threshold: str | None = None) -> dict[str, Any]:
    """`senders` flows of `size` into right0 over a 10 Gb/s dumbbell, min RTO 10 ms, the
    `htsim` profile's other keys (an ACK a packet, exact clocks) beside `recovery`."""
    net: dict[str, Any] = {"buffer": buffer}
    if ecn_threshold:
        net["ecn_threshold"] = ecn_threshold
    return {
        "simulation": {"duration": "200ms", "seed": 1, "stop_when_done": True},
        "topology": {"kind": "dumbbell", "hosts_per_side": senders, "link_rate": "10Gbps",
                     "link_delay": "10us"},
        "network": net,
        "transport": {"protocol": protocol, "recovery": recovery, "min_rto": "10ms",
                      "profile": "htsim"},
        "workloads": [{"kind": "incast", "receiver": "right0",
                       "senders": [f"left{i}" for i in range(senders)], "size": size,
                       "rounds": 1, "interval": "1ms"}],
        "output": {"sample_interval": "1ms", "throughput": ["flow", "link"]},
    }


def test_a_window_of_losses_is_repaired_in_one_recovery_without_spurious_resends() -> None:
    """Slow start overshoots a 30 KB buffer: some twenty segments of one window are
    dropped. SACK resends each exactly once, without a timeout, and finishes before
    NewReno, which repairs one hole a round trip."""
    runs = {rec: simulate(incast(rec, 1, "4MB", "30KB"))[0] for rec in ("newreno", "sack")}
    sack, newreno = runs["sack"], runs["newreno"]
    f = sack.flows.iloc[0]
    drops = sack.summary["packets_dropped"]
    print(f"sack: {drops} drops, {f.retransmits} resent, FCT {f.fct_s * 1e3:.3f} ms; "
          f"newreno FCT {newreno.flows.fct_s.iloc[0] * 1e3:.3f} ms")
    assert drops >= 10, "the scenario loses several segments of a window"
    assert f.timeouts == 0
    assert f.retransmits == drops, "every drop is a data segment, resent once"
    assert f.fct_s < newreno.flows.fct_s.iloc[0]


def test_without_losses_sack_changes_nothing() -> None:
    """DCTCP keeps the queue under K: nothing is dropped, no ACK carries a block, and
    every flow's completion is the same to the picosecond as with NewReno."""
    rs = [simulate(incast(rec, 8, "1MB", "1MB", protocol="dctcp", ecn_threshold="65pkt"))[0]
          for rec in ("newreno", "sack")]
    assert rs[0].summary["packets_dropped"] == 0
    pd.testing.assert_frame_equal(rs[0].flows, rs[1].flows)
    pd.testing.assert_frame_equal(rs[0].links, rs[1].links)


def test_an_incast_with_sack_completes_conserves_packets_and_repeats_exactly() -> None:
    sc = incast("sack", 16, "200KB", "100KB")
    a, _ = simulate(sc)  # simulate checks packet conservation
    b, _ = simulate(sc)
    assert a.summary["flows_completed"] == 16
    assert a.summary["packets_dropped"] > 0
    pd.testing.assert_frame_equal(a.flows, b.flows)
    # ACKs carry their blocks on the wire: 64-byte ACKs plus 4 + 8 bytes a block
    # on the reverse bottleneck, where NewReno's are 64 bytes each
    nr, _ = simulate(incast("newreno", 16, "200KB", "100KB"))
    for r, more in ((nr, False), (a, True)):
        L = r.links
        back = L[(L["node"] == "switch-right") & (L["peer"] == "switch-left")].iloc[0]
        extra = back["tx_bytes"] - 64 * back["tx_packets"]
        assert (extra > 0) == more and extra % 4 == 0, (extra, back["tx_packets"])


def test_rack_resends_lost_retransmissions_where_rfc6675_waits_for_the_timer() -> None:
    """20 flows of 200 KB into a 100 KB buffer: retransmissions are lost again. RFC 6675
    alone finds those only by the timeout; RACK marks them lost by time and resends
    them, so no flow times out, nothing is resent that was not dropped, and the
    slowest flow finishes in a fraction of the 10 ms minimum RTO. (With 16 flows, since
    PRR's slow-start segment goes only on safe ACKs, SACK loses few enough
    retransmissions that 2 flows time out: 20 keep the case clear, 5 against 0.)"""
    runs = {rec: simulate(incast(rec, 20, "200KB", "100KB"))[0] for rec in ("sack", "rack")}
    sack, rack = runs["sack"].flows, runs["rack"].flows
    drops = runs["rack"].summary["packets_dropped"]
    print(f"sack: {sack.timeouts.sum()} timeouts, last {sack.fct_s.max() * 1e3:.3f} ms; "
          f"rack: {rack.timeouts.sum()} timeouts, {rack.retransmits.sum()} resent of "
          f"{drops} drops, last {rack.fct_s.max() * 1e3:.3f} ms")
    assert sack.timeouts.sum() >= 3
    assert rack.timeouts.sum() == 0
    assert rack.retransmits.sum() == drops, "no spurious retransmission"
    assert rack.fct_s.max() < 0.5 * sack.fct_s.max()
    assert rack.fct_s.max() < 0.010


def test_without_losses_rack_changes_nothing_but_its_probe_timer() -> None:
    """Without drops RACK marks nothing lost and no probe fires before its ACK: every
    flow's completion is the same to the picosecond as with NewReno."""
    sc = incast("newreno", 8, "1MB", "1MB", protocol="dctcp", ecn_threshold="65pkt")
    base, _ = simulate(sc)
    sc["transport"]["recovery"] = "rack"
    rack, _ = simulate(sc)
    assert rack.summary["packets_dropped"] == 0
    pd.testing.assert_frame_equal(base.flows, rack.flows)


@pytest.mark.parametrize("recovery", ["newreno", "sack", "rack"])
def test_the_estimate_counts_the_scoreboards_only_with_sack(recovery: str) -> None:
    f = tenantnet.Scenario.from_dict(incast(recovery, 16, "200KB", "100KB")).validate()
    rows = [(p.key, p.bytes) for p in f if "SACK scoreboards" in p.what]
    racks = [(p.key, p.bytes) for p in f if "RACK-TLP states" in p.what]
    assert rows == ([] if recovery == "newreno" else [("transport.recovery", 16 * 440.0)])
    assert racks == ([("transport.recovery", 16 * 640.0)] if recovery == "rack" else [])
