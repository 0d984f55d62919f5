"""Packet capture (`[output] capture`): the packets chosen ports put on the wire, as a
table and as pcap files that tshark reads, the same on any number of threads."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tenantnet
from tenantnet.errors import ScenarioError
from test_parallel import permutation, ran


def scenario(capture: list[str], limit: int | None = None) -> dict[str, Any]:
    """Two DCTCP flows into one host through a marking switch (data, ACKs with ECE,
    CE marks), for 2 ms."""
    output: dict[str, Any] = {"capture": capture}
    if limit is not None:
        output["capture_packets"] = limit
    return {
        "name": "capture",
        "simulation": {"duration": "2ms", "seed": 3},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps",
                     "link_delay": "2us"},
        "network": {"buffer": "100pkt", "ecn_threshold": "20pkt"},
        "transport": {"protocol": "dctcp"},
        "workloads": [{"kind": "incast", "receiver": "h0", "senders": ["h1", "h2"],
                       "size": "1MB"}],
        "output": output,
    }


def run(d: dict[str, Any]) -> tenantnet.Results:
    return tenantnet.Scenario.from_dict(d, "<test>").simulation().run().results()


def tshark(path: Path, *fields: str, filt: str | None = None,
           opts: tuple[str, ...] = ()) -> list[list[str]]:
    cmd = ["tshark", "-r", str(path), *opts, "-T", "fields", "-E", "separator=,"]
    cmd += [a for f in fields for a in ("-e", f)]
    if filt:
        cmd += ["-Y", filt]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split(",") for line in out.splitlines()]


@pytest.mark.skipif(shutil.which("tshark") is None,
                    reason="tshark is not installed (make install-test installs it)")
def test_tshark_reads_each_ports_pcap_with_its_packet_count(tmp_path: Path) -> None:
    r = run(scenario(["switch", "h1"]))
    r.write(tmp_path)
    links = r.links.set_index(["node", "peer"])
    files = sorted((tmp_path / "capture").glob("*.pcap"))
    assert [f.name for f in files] == ["h1-switch.pcap", "switch-h0.pcap", "switch-h1.pcap",
                                      "switch-h2.pcap"]
    for f in files:
        node, peer = f.stem.split("-")
        rows = tshark(f, "frame.number")
        assert len(rows) == int(links.loc[(node, peer), "tx_packets"]) > 0, f.name
    # h0's port: the data from h1 and h2, seen as TCP with their addresses, CE marks
    # (the switch marks where the two flows meet) and the first packet's time exact
    to_h0 = tmp_path / "capture" / "switch-h0.pcap"
    data = tshark(to_h0, "ip.src", "ip.dst", "ip.dsfield.ecn", "tcp.len", filt="tcp")
    assert {(s, d) for s, d, *_ in data} == {("10.0.0.2", "10.0.0.1"),
                                            ("10.0.0.3", "10.0.0.1")}
    assert {e for _, _, e, _ in data} == {"2", "3"}  # ECT(0) and CE
    cap = r.capture
    assert cap is not None
    first = cap[(cap["node"] == "switch") & (cap["peer"] == "h0")].iloc[0]
    (t,), = tshark(to_h0, "frame.time_epoch", filt="frame.number == 1")
    assert t == f"{int(first['time_ps']) // 1000 // 10**9}." \
                f"{int(first['time_ps']) // 1000 % 10**9:09d}"
    # the ACKs h0 sends carry ECE for the marks, and every IP checksum is good
    acks = tshark(tmp_path / "capture" / "switch-h1.pcap", "tcp.flags.ece", filt="tcp")
    assert {a for a, in acks} == {"0", "1"}
    status = tshark(to_h0, "ip.checksum.status", opts=("-o", "ip.check_checksum:TRUE"))
    assert {s for s, in status} == {"1"}  # 1: good


def test_the_table_counts_every_packet_the_ports_sent() -> None:
    r = run(scenario(["switch->h0", "h2"]))
    cap = r.capture
    assert cap is not None
    counts = cap.groupby(["node", "peer"], observed=True).size()
    links = r.links.set_index(["node", "peer"])["tx_packets"]
    assert counts.to_dict() == {k: int(links[k]) for k in [("h2", "switch"), ("switch", "h0")]}
    data = cap[cap["kind"] == "data"]
    assert (data["wire_bytes"] == data["payload_bytes"] + 40).all()
    assert cap["time_ps"].is_monotonic_increasing
    assert r.summary["capture"] == {"rows": len(cap), "truncated": False}


def test_a_capture_past_its_limit_keeps_the_earliest_packets() -> None:
    full = run(scenario(["switch"])).capture
    cut = run(scenario(["switch"], limit=100))
    assert full is not None and cut.capture is not None
    pd.testing.assert_frame_equal(cut.capture, full.iloc[:100].reset_index(drop=True))
    assert cut.summary["capture"] == {"rows": 100, "truncated": True}


@pytest.mark.parametrize("limit", [None, 500])
def test_a_capture_is_the_same_on_1_and_2_threads(limit: int | None) -> None:
    d = permutation(4, "1ms")
    d["output"]["capture"] = ["core0", "pod0-edge0"]
    if limit:
        d["output"]["capture_packets"] = limit
    one, _ = ran(d, 1)
    two, sim = ran(d, 2)
    assert sim.threads == 2
    assert one == two


@pytest.mark.parametrize(("capture", "message"), [
    (["nowhere"], r"output.capture\[0\].*no node named \"nowhere\""),
    (["switch->h9"], r"output.capture\[0\].*switch has no port toward \"h9\""),
])
def test_a_port_that_is_not_there_is_refused(capture: list[str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        tenantnet.Scenario.from_dict(scenario(capture), "<test>").simulation()


def test_a_limit_of_zero_is_refused() -> None:
    with pytest.raises(ScenarioError, match=r"output.capture_packets.*from 1 to 2\^32"):
        tenantnet.Scenario.from_dict(scenario(["switch"], limit=0), "<test>").simulation()
