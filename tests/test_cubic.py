"""CUBIC (`transport.protocol = "cubic"`) against the closed form of a sawtooth, and
HyStart's exit from slow start. The sawtooth: one
long flow through a buffer of B packets on a path of D packets in flight. Each loss
comes at W = D + B and cuts the window to beta W (NewReno's 1/2, CUBIC's 717/1024),
from where it grows linearly (CUBIC's Reno-friendly window, since K is seconds at
this bandwidth-delay product); the link is busy while the window is at least D, so
its share of the link is the time average of min(W, D) / D over a cycle. Both run
under the `htsim` transport profile (`tcp` is NewReno, an ACK a packet, exact clocks),
as the closed form and the HyStart arithmetic assume."""

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
profile = "htsim"
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


HYSTART = """
name = "one-transfer"
[simulation]
duration = "200ms"
seed = 1
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1ms"
[network]
buffer = "3000pkt"
[transport]
profile = "htsim"
protocol = "{protocol}"
min_rto = "5ms"
[[workloads]]
kind = "incast"
receiver = "h0"
senders = ["h1"]
size = "20MB"
"""


@pytest.mark.parametrize("protocol", ["tcp", "cubic"])
def test_hystart_ends_slow_start_before_the_buffer_overflows(protocol: str) -> None:
    """A 20 MB transfer over a 4 ms path at 10 Gb/s (D = 3333 packets in flight) with
    3000 packets of buffer. Slow start's queue grows a packet per ACK, so Reno's
    round at 5120 segments overflows it. HyStart's ACK train ends slow start in the
    round that starts at 2560 segments, once its ACKs have lasted half the least RTT
    (about 1740 ACKs, at a window of about 4300 < D + B): no loss at all, and the
    transfer ends in under half Reno's time."""
    sc = tenantnet.Scenario.from_toml(HYSTART.format(protocol=protocol), "t.toml")
    f = sc.simulation().run().results().flows
    retransmits, fct = int(f["retransmits"].iloc[0]), float(f["fct_s"].iloc[0])
    if protocol == "cubic":
        assert (retransmits, fct < 0.06) == (0, True), fct
    else:
        assert retransmits > 100 and fct > 0.09, (retransmits, fct)
