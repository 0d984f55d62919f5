"""A switch port's queues as HTB classes, classified by DSCP (what an emulation builds
for ports with several queues), and the eBPF DSCP tagger a host puts on its NIC."""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time

import pytest

from helpers import namespaces_why_not
from tenantnet import ScenarioError
from tenantnet.linux.bpf import MAX_TAGS, program
from tenantnet.linux.queues import switch_queues
from tenantnet.linux.tc import Plan

# Real namespaces, links and wall-clock rates: `make test` runs these alone, after
# the rest has run on every core (the `serial` marker).
pytestmark = pytest.mark.serial

DSCP_IDENTITY = list(range(3)) + [0] * 61


def net(**kw: object) -> dict[str, object]:
    return {"queues": 3, "scheduler": "dwrr", "strict_queues": 1, "weights": None,
            "buffer_policy": "tail_drop", **kw}


def test_weighted_queues_share_by_quantum_and_take_their_dscps() -> None:
    qs = switch_queues(net(weights=[1, 1, 3]), DSCP_IDENTITY, 1_000_000_000, 12_000, 600_000)
    assert [(q.queue, q.prio, q.quantum, q.dscps) for q in qs] == [
        (0, 0, 12_000, (0, *range(3, 64))), (1, 0, 12_000, (1,)),
        (2, 0, 36_000, (2,))]
    assert all(q.rate_bps == 1_000_000 and q.limit_bytes is None for q in qs)
    p = Plan("static", "p1", 1_000_000_000, 600_000, 1500, queues=qs)
    cmds = p.commands()
    assert cmds[0] == "tc qdisc replace dev p1 root handle 1: htb default 100"
    assert cmds[-2:] == [
        "tc filter add dev p1 parent 1: protocol ip prio 1 u32 match ip tos 0x04 0xfc "
        "flowid 1:101",
        "tc filter add dev p1 parent 1: protocol ip prio 1 u32 match ip tos 0x08 0xfc "
        "flowid 1:102"]
    assert "classid 1:102 htb rate 1000000bit ceil 1000000000bit" in cmds[4]
    assert cmds[4].endswith("prio 0 quantum 36000")


def test_strict_queues_come_first_in_order_then_the_weighted_group() -> None:
    qs = switch_queues(net(scheduler="sp_dwrr", weights=[1, 2, 2]), DSCP_IDENTITY,
                       10_000_000_000, 12_000, 1_000_000)
    assert [(q.prio, q.quantum) for q in qs] == [(0, 12_000), (1, 24_000), (1, 24_000)]
    qs = switch_queues(net(scheduler="strict"), DSCP_IDENTITY, 10_000_000_000, 12_000, 1)
    assert [q.prio for q in qs] == [0, 1, 2]


def test_a_static_partition_gives_each_queue_its_share_of_the_buffer() -> None:
    qs = switch_queues(net(weights=[1, 1, 2], buffer_policy="static_partition"),
                       DSCP_IDENTITY, 10**9, 12_000, 800_000)
    assert [q.limit_bytes for q in qs] == [200_000, 200_000, 400_000]
    p = Plan("static", "p0", 10**9, 800_000, 1500, queues=qs)
    assert "handle 102: bfifo limit 400000b" in "\n".join(p.commands())


def test_single_queue_ports_have_no_queue_classes_and_shared_pools_are_refused() -> None:
    assert switch_queues(net(queues=1), DSCP_IDENTITY, 10**9, 12_000, 1) == []
    with pytest.raises(ScenarioError, match="buffer_policy = 'barberq'"):
        switch_queues(net(buffer_policy="barberq"), DSCP_IDENTITY, 10**9, 12_000, 1)


def test_the_tagger_checks_its_table() -> None:
    assert len(program([("10.0.0.1", 1)])) % 8 == 0
    with pytest.raises(ScenarioError, match="DSCP 64"):
        program([("10.0.0.1", 64)])
    with pytest.raises(ScenarioError, match=f"1 to {MAX_TAGS} addresses"):
        program([])


WHY_NOT = namespaces_why_not()


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
def test_the_tagger_sets_the_dscp_by_source_keeps_ecn_and_a_valid_checksum() -> None:
    from pyroute2 import NetNS

    from tenantnet.linux.bpf import attach
    from tenantnet.linux.emulation.netns import enter
    from tenantnet.linux.lab import Lab

    def sh(*cmd: str) -> None:
        subprocess.run(cmd, check=True)
    with Lab() as lab:
        a, b = lab.ns("a"), lab.ns("b")
        lab.link(a, "e0", b, "e1")
        sh("ip", "-n", a, "addr", "add", "10.9.0.1/32", "peer", "10.9.0.2", "dev", "e0")
        sh("ip", "-n", b, "addr", "add", "10.9.0.2/32", "peer", "10.9.0.1", "dev", "e1")
        for x in ("10", "11", "12", "200"):
            sh("ip", "-n", a, "addr", "add", f"10.1.0.{x}/32", "dev", "lo")
        sh("ip", "-n", b, "route", "add", "10.1.0.0/24", "via", "10.9.0.1", "dev", "e1")
        ipr = NetNS(a)
        try:
            attach(ipr, ipr.link_lookup(ifname="e0")[0],
                   [("10.1.0.10", 1), ("10.1.0.11", 46), ("10.1.0.200", 63)])
        finally:
            ipr.close()
        got: dict[str, int] = {}
        ready = threading.Event()

        def receive() -> None:
            enter(b)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("10.9.0.2", 7000))
            s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
            s.settimeout(5)
            ready.set()
            for _ in range(4):  # a packet with a bad checksum would never arrive
                _, anc, _, addr = s.recvmsg(16, 64)
                got[addr[0]] = struct.unpack("B", anc[0][2][:1])[0]

        def send() -> None:
            enter(a)
            for src, tos in (("10.1.0.10", 0), ("10.1.0.11", 1), ("10.1.0.12", 0x21),
                             ("10.1.0.200", 2)):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                s.bind((src, 0))
                s.sendto(b"x", ("10.9.0.2", 7000))
                time.sleep(0.01)
        rx = threading.Thread(target=receive)
        rx.start()
        assert ready.wait(5)
        tx = threading.Thread(target=send)
        tx.start()
        tx.join()
        rx.join()
    # DSCP in the top six bits, the sender's ECN bits kept; an address not in the
    # table untouched; one whose last byte is over 127 matched as well
    assert got == {"10.1.0.10": 1 << 2, "10.1.0.11": 46 << 2 | 1, "10.1.0.12": 0x21,
                   "10.1.0.200": 63 << 2 | 2}
