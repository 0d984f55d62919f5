"""CUBIC (`transport.protocol = "cubic"`) against the closed form of a sawtooth: one
long flow through a buffer of B packets on a path of D packets in flight. Each loss
comes at W = D + B and cuts the window to beta W (NewReno's 1/2, CUBIC's 717/1024),
from where it grows linearly (CUBIC's Reno-friendly window, since K is seconds at
this bandwidth-delay product); the link is busy while the window is at least D, so
its share of the link is the time average of min(W, D) / D over a cycle."""

from __future__ import annotations

import pytest

import tenantnet

SCENARIO = """
name = "one-flow"
[simulation]
duration = "1s"
seed = 1
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "25us"
[network]
buffer = "{buffer}pkt"
[transport]
protocol = "{protocol}"
min_rto = "5ms"
[[workloads]]
kind = "long_lived"
src = "h0"
dst = "h1"
"""

PACKET_S = 1500 * 8 / 10e9
ACK_S = 64 * 8 / 10e9
RTT_S = 4 * 25e-6 + 2 * PACKET_S + 2 * ACK_S
D = RTT_S / PACKET_S
"""Packets in flight on the path: a round trip over two links each way, with a data
packet's and an ACK's serialisation at each hop."""


def busy_share(beta: float, buffer: int) -> float:
    """The closed form's share of the link a sawtooth from beta W to W keeps busy."""
    w = D + buffer
    lo = beta * w
    under = (D * D - lo * lo) / (2 * D) if lo < D else 0.0
    return (under + (w - max(lo, D))) / (w - lo)


@pytest.mark.parametrize("buffer", [5, 20])
@pytest.mark.parametrize(("protocol", "beta"), [("tcp", 0.5), ("cubic", 717 / 1024)])
def test_a_long_flows_share_of_the_link_is_its_sawtooths(protocol: str, beta: float,
                                                         buffer: int) -> None:
    sc = tenantnet.Scenario.from_toml(SCENARIO.format(buffer=buffer, protocol=protocol),
                                      "one-flow.toml")
    f = sc.simulation().run().results().flows
    goodput = 10e9 / 8 * 1460 / 1500  # bytes a second of payload on a full link
    share = float(f["bytes_delivered"].iloc[0]) / goodput
    assert share == pytest.approx(busy_share(beta, buffer), abs=0.02)
    assert int(f["retransmits"].iloc[0]) > 100  # a sawtooth: a loss every few ms
