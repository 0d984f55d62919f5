"""pcap files of a run's captured packets (``[output] capture``): one file per port,
``capture/NODE-PEER.pcap``, in the classic libpcap format with nanosecond timestamps
(magic ``0xa1b23c4d``) and Ethernet framing, which Wireshark, tshark and tcpdump read.

Each packet is written as the headers the simulator's packet stands for, cut at 54
bytes (the payload is not kept: each record's original length is the packet's size on
the wire plus the 14-byte Ethernet header):

* **Time**: the simulated instant its first bit left the port, in nanoseconds
  (picoseconds truncated).
* **Addresses**: host ``i`` (its index in the topology) is ``10.0.0.0 + i + 1`` and MAC
  ``02:00:00`` followed by the same three low bytes.
* **IPv4**: DSCP and ECN as the packet carries them (ECT(0) or CE), the total length
  its size on the wire, DF set, TTL 64, the header checksum computed. Protocol TCP for
  TCP flows, UDP for UDP flows, and 253 (RFC 3692's experimental protocol) for a host
  policy's control packets, which have no transport header here.
* **TCP**: flow ``f`` goes from port ``10000 + f mod 50000`` to ``5001 + (f div 50000)
  mod 1000`` (its ACKs the other way); data segments carry their sequence number (the
  simulator counts bytes from 0) with PSH and ACK set and acknowledgement 0; ACKs carry
  the cumulative ACK, with ECE when set. The header bytes the packet carries beyond
  IP's and TCP's 40 (its SACK blocks, timestamps) count as TCP options, which are cut
  off with the payload; the TCP checksum is 0, as with checksum offload.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

SNAP = 54
"""Bytes of each packet kept: Ethernet, IPv4 and TCP headers without options."""

_GLOBAL = (0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
"""The file header: nanosecond magic, version 2.4, snaplen 65535, Ethernet."""

_PROTO = {"data": 6, "ack": 6, "udp": 17, "control": 253}


def _record_dtype() -> object:
    # deferred for start-up: loads numpy
    import numpy as np

    return np.dtype([
        ("ts_sec", "<u4"), ("ts_nsec", "<u4"), ("incl", "<u4"), ("orig", "<u4"),
        ("eth_dst", "V6"), ("eth_src", "V6"), ("eth_type", ">u2"),
        ("ver_ihl", "u1"), ("tos", "u1"), ("ip_len", ">u2"), ("ip_id", ">u2"),
        ("frag", ">u2"), ("ttl", "u1"), ("proto", "u1"), ("ip_sum", ">u2"),
        ("ip_src", ">u4"), ("ip_dst", ">u4"),
        ("sport", ">u2"), ("dport", ">u2"), ("seq", ">u4"), ("ack", ">u4"),
        ("off_flags", ">u2"), ("window", ">u2"), ("tcp_sum", ">u2"), ("urg", ">u2"),
    ])


def file_name(node: str, peer: str) -> str:
    """The pcap file of the port from `node` to `peer`."""
    safe = re.compile(r"[^A-Za-z0-9_.]+")
    return f"{safe.sub('_', node)}-{safe.sub('_', peer)}.pcap"


def write_pcaps(capture: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Writes a pcap file per port of `capture` (the run's ``capture`` table) into
    ``out_dir/capture``; the files' paths."""
    if capture.empty:
        return []
    d = out_dir / "capture"
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for (node, peer), rows in capture.groupby(["node", "peer"], sort=True, observed=True):
        path = d / file_name(str(node), str(peer))
        path.write_bytes(pcap_bytes(rows))
        out.append(path)
    return out


def pcap_bytes(rows: pd.DataFrame) -> bytes:
    """A pcap file of `rows` (of the ``capture`` table), in their order."""
    # deferred for start-up: loads numpy
    import numpy as np

    n = len(rows)
    r = np.zeros(n, dtype=_record_dtype())  # type: ignore[call-overload]
    ns = rows["time_ps"].to_numpy(np.uint64) // np.uint64(1000)
    r["ts_sec"] = ns // np.uint64(1_000_000_000)
    r["ts_nsec"] = ns % np.uint64(1_000_000_000)
    wire = rows["wire_bytes"].to_numpy(np.int64)
    r["incl"] = SNAP
    r["orig"] = wire + 14
    src = rows["src_host"].to_numpy(np.uint32) + np.uint32(1)
    dst = rows["dst_host"].to_numpy(np.uint32) + np.uint32(1)
    r["eth_src"] = _macs(src)
    r["eth_dst"] = _macs(dst)
    r["eth_type"] = 0x0800
    r["ver_ihl"] = 0x45
    r["tos"] = (rows["dscp"].to_numpy(np.uint8) << 2) | rows["ecn"].to_numpy(np.uint8)
    r["ip_len"] = np.minimum(wire, 65535)
    r["ip_id"] = np.arange(n) & 0xFFFF
    r["frag"] = 0x4000
    r["ttl"] = 64
    kind = rows["kind"].astype(str).to_numpy()
    r["proto"] = [_PROTO[k] for k in kind]
    r["ip_src"] = np.uint32(0x0A000000) + src
    r["ip_dst"] = np.uint32(0x0A000000) + dst
    _transport(r, rows, kind)
    r["ip_sum"] = _ip_checksums(r)
    head = np.array(_GLOBAL, dtype="<u4")
    head16 = head[1:3].astype("<u2").tobytes()
    return bytes(head[:1].tobytes() + head16 + head[3:].tobytes() + r.tobytes())


def _macs(host: object) -> object:
    """Each host's MAC, 02:00:00 and the host number's three low bytes."""
    # deferred for start-up: loads numpy
    import numpy as np

    h = np.asarray(host, dtype=np.uint32)
    b = np.zeros((len(h), 6), dtype=np.uint8)
    b[:, 0] = 2
    b[:, 3], b[:, 4], b[:, 5] = (h >> 16) & 0xFF, (h >> 8) & 0xFF, h & 0xFF
    return b.view("V6").ravel()


def _transport(r: object, rows: pd.DataFrame, kind: object) -> None:
    """The TCP (or UDP) header fields of records `r` (module doc)."""
    # deferred for start-up: loads numpy
    import numpy as np

    rec = np.asarray(r)
    k = np.asarray(kind)
    flow = rows["flow_id"].fillna(0).to_numpy(np.int64)
    a = 10000 + flow % 50000
    b = 5001 + (flow // 50000) % 1000
    ack = k == "ack"
    rec["sport"] = np.where(ack, b, a)
    rec["dport"] = np.where(ack, a, b)
    seq = rows["seq"].to_numpy(np.uint64) & np.uint64(0xFFFFFFFF)
    rec["seq"] = np.where(ack, 0, seq)
    rec["ack"] = np.where(ack, seq, 0)
    ece = rows["ece"].to_numpy(np.uint16) * 0x40
    flags = np.where(ack, 0x10 | ece, 0x18)
    tcp = (k == "data") | ack
    # the header bytes past IP's and TCP's 40 (SACK blocks, timestamps) as options
    wire = rows["wire_bytes"].to_numpy(np.int64)
    extra = np.clip(wire - rows["payload_bytes"].to_numpy(np.int64) - 40, 0, 40)
    rec["off_flags"] = np.where(tcp, ((5 + extra // 4) << 12) | flags, 0)
    rec["window"] = np.where(tcp, 65535, 0)
    udp = k == "udp"
    # UDP: ports, then the length and checksum where TCP's sequence number lies
    rec["seq"] = np.where(udp, (np.minimum(rows["wire_bytes"].to_numpy(np.int64) - 20,
                                           65535) << 16), rec["seq"])
    control = k == "control"
    for f in ("sport", "dport", "seq", "ack"):
        rec[f] = np.where(control, 0, rec[f])


def _ip_checksums(r: object) -> object:
    """The IPv4 header checksum of each record (RFC 791: the ones' complement of the
    ones' complement sum of the header's 16-bit words)."""
    # deferred for start-up: loads numpy
    import numpy as np

    rec = np.asarray(r)
    raw = rec.view(np.uint8).reshape(len(rec), -1)[:, 16 + 14:16 + 34]
    words = raw.reshape(len(rec), 10, 2).astype(np.uint32)
    total = (words[:, :, 0] << 8 | words[:, :, 1]).sum(axis=1)
    while (total >> 16).any():
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF
