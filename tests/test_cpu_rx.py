"""`rx_path = "pmd"` (spec c2qos.md §7 A11): packets to the VMs wait in their host
NIC's receive queue until the host's first PMD core forwards them, each at c(s,
single flow) times its destination VM's factors; the queue is polled first in the
round robin and above every HBS class, has no C2TB bucket, and drops (counted)
when full. The expected values are the cost model's own arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from builders.cpu import HZ, run, scenario
from tenantnet import _core


def test_received_packets_cost_their_cycles_at_the_receivers_core() -> None:
    # 1 Gb/s of 1024-byte UDP from vm0 (left0) to sink (right0): nothing is lost,
    # so right0's core forwards every packet at c(1024, single) = 1016 cycles
    d = scenario(["1Gbps"], ["1024B"], cpu={"rx_path": "pmd"})
    r = run(d)
    cpu = r.summary["cpu"]
    assert cpu["packets_rx"] > 0 and cpu["packets_rx_dropped"] == 0
    assert cpu["cycles_rx"] == cpu["packets_rx"] * _core.c2qos_packet_cycles(1024)
    rx = r.pmd[(r.pmd["host"] == "right0") & (r.pmd["time_s"] > 0.02)]["rx"]
    want = 1e9 / (1024 * 8) * 1016 / HZ
    assert rx.mean() == pytest.approx(want, rel=0.01)
    # the sender's core forwards nothing back (UDP)
    assert r.pmd[r.pmd["host"] == "left0"]["rx"].max() == 0.0


def test_a_full_receive_queue_drops_and_counts() -> None:
    # two senders on two hosts offer the sink's one core twice what it forwards
    d = two_senders({"rx_path": "pmd", "rx_ring": 512})
    r = run(d)  # packet and cycle conservation with packets held in receive queues
    cpu = r.summary["cpu"]
    assert cpu["packets_rx_dropped"] > 0
    sink = r.pmd[(r.pmd["host"] == "right0") & (r.pmd["time_s"] > 0.02)]
    assert sink["busy"].min() > 0.99 and sink["rx"].min() > 0.99
    # what reaches the sink is what one core forwards: 2.2 GHz / 695 cycles
    secs = 0.1
    assert cpu["packets_rx"] / secs == pytest.approx(HZ / 695, rel=0.05)


def test_tcp_acks_cost_the_senders_core() -> None:
    # a TCP sender's ACKs come back through its own host's receive queue, at
    # c(64, single) each
    d = scenario([], ["1500B"], cpu={"rx_path": "pmd"}, tcp=True)
    d["transport"] = {"delayed_ack": False}  # an ACK for every data packet
    r = run(d)
    left = r.pmd[(r.pmd["host"] == "left0") & (r.pmd["time_s"] > 0.02)]
    assert left["rx"].mean() > 0.01
    cpu = r.summary["cpu"]
    assert cpu["cycles_rx"] > 0
    # the sink's core forwards the data, the sender's the 64-byte ACKs
    data = r.pmd[(r.pmd["host"] == "right0") & (r.pmd["time_s"] > 0.02)]["rx"].mean()
    acks = left["rx"].mean()
    per_packet = _core.c2qos_packet_cycles(1500) / _core.c2qos_packet_cycles(64)
    assert data / acks == pytest.approx(per_packet, rel=0.02)
    bypass = run(scenario([], ["1500B"], tcp=True))
    assert bypass.summary["cpu"]["cycles_rx"] == 0


def test_rx_ring_is_checked() -> None:
    import tenantnet
    from tenantnet.errors import ScenarioError
    for cpu, key in (({"rx_ring": 0}, "vswitch.cpu.rx_ring"),
                     ({"rx_path": "nic"}, "vswitch.cpu.rx_path")):
        with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
            tenantnet.Scenario.from_dict(scenario(["1Gbps"], ["64B"], cpu=cpu)).simulation()


def two_senders(cpu: dict[str, Any]) -> dict[str, Any]:
    """vm0 on left0 and vm1 on left1 each send 64-byte UDP at 5 Gb/s to sink."""
    d = scenario(["5Gbps", "5Gbps"], ["64B", "64B"], cpu=cpu)
    d["topology"]["hosts_per_side"] = 2
    d["tenants"][0]["vms"][1]["host"] = "left1"
    return d
