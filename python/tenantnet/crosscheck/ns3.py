"""``tenantnet crosscheck ns3 SCENARIO``: a scenario run by tenantnet and by ns-3, flow by
flow.

ns-3 (3.44) comes from the package registry as a wheel that carries its C++ headers
(``ns3/include``) and shared libraries (``ns3/lib64``): ``pip install --no-deps
'ns3==3.44.*'`` (``make test`` does this; the ``ns3`` extra installs the same wheel
with its Python bindings' cppyy, which the cross-check does not need). tenantnet's own
ns-3 program (``tenantnet/crosscheck/ns3-program/crosscheck.cc`` and its headers, ns-3's
public API but for one function that ``upstream.h`` wraps to apply ns-3's later fix) is
compiled against them with the system's C++ compiler on first use and kept in a cache
folder.

Supported: the ``dumbbell`` topology with one ``incast`` workload of one round (every
sender starts at once), or long flows on pairs of hosts (``fixed`` workloads of one flow
each, ``left<i>`` to ``right<i>``, of one size, all starting at once); and the
``leaf_spine`` topology (and the ``star``, as one leaf without spines) with any
workloads of sized TCP flows (tenantnet runs first, and ns-3 replays its flows, each on
the paths tenantnet's ECMP chose for its data and its ACKs). The program
mirrors the scenario's link rate and delay, the switches' and the hosts' buffers (one
FIFO a port; RED marking above the ECN threshold on the instantaneous queue when ECN is
on), TCP NewReno, CUBIC or DCTCP, SACK or not, MSS, initial window, minimum RTO and delayed
ACKs. Settings matched where the simulators differ (the docs' cross-check page says why
each matters):

* ns-3 installs fq_codel on every device without a queue disc: the program installs a
  FIFO first.
* ns-3 opens each connection with a handshake and times a lost SYN out after 3 s:
  the SYN's timeout is the minimum RTO, and a flow's time runs from its connection's
  establishment, as tenantnet's flows have none.
* ns-3's segments carry 20 + 20 bytes of headers, 12 of timestamps and 2 of PPP:
  tenantnet runs with a 54-byte header and 56-byte ACKs (SACK blocks add to both).
* ns-3 has no RACK: ``recovery = "rack"`` is compared with ns-3's SACK (RFC 6675
  with PRR), and the report says so. ``recovery = "reno_sack"`` runs against ns-3
  without SACK and with PRR, which counts duplicate ACKs as SACKed segments as Linux
  does (``AddRenoSack``).
* ns-3's recovery algorithm also sets how the window comes down after ECE: with SACK
  (PRR) a little on each ACK, as Linux; tenantnet runs with ``cwr_reduction = "prr"``
  then, and with its immediate cut (ns-3's classic recovery) without SACK.
* ns-3's receivers delay every in-order ACK (``DelAckCount``, ``DelAckTimeout``, 200 ms
  by default); the program's (``ns3-program/receiver.h``) also acknowledge at once the
  first ``quick_acks`` segments of a connection and, with ``ack_push``, the segment
  that ends a flow, as Linux and the ``linux`` profile do, with the scenario's
  delayed-ACK timer.
* ns-3's TcpLinuxReno halves the window on a loss, as Linux's Reno does, where
  tenantnet's default halves the flight: tenantnet runs with ``loss_ssthresh = "cwnd"``
  unless the scenario sets it.
* ns-3 3.44's SACK recovery has four defects that its development tree fixed after
  the release (a SACKed retransmission kept in the pipe, PRR's delivered data counted
  twice with SACK, PRR's RecoverFS taken from the pipe, 32-bit wraps in PRR): the
  program applies the fixes (``ns3-program/upstream.h``: the scoreboard's update
  wrapped, PRR as a recovery algorithm of its own) unless
  :attr:`Setup.upstream_fixes` is off.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import _core
from ..sim.api import advance
from ..sim.results import Results
from ..sim.scenario import Scenario

PROGRAM = Path(__file__).parent / "ns3-program" / "crosscheck.cc"
SOURCES = sorted(PROGRAM.parent.glob("*.[ch]*"))
"""The program's files: a change to any of them rebuilds it."""
LIBS = ("core", "network", "internet", "point-to-point", "traffic-control", "applications")
NS3_HEADER = 54
"""Bytes ns-3 puts around a segment's payload: IPv4 20, TCP 20, timestamps 12, PPP 2."""
NS3_ACK = 56
"""A pure ACK in ns-3 on a point-to-point link (SACK blocks not counted)."""


class CrosscheckError(Exception):
    """The cross-check cannot run: what is missing or unsupported, in one line."""


def ns3_root() -> Path:
    """Where the ns3 wheel lies (its include/ and lib64/), found without importing it
    (its Python bindings need packages the cross-check does not)."""
    spec = importlib.util.find_spec("ns3")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        root = Path(loc)
        if (root / "include" / "ns3").is_dir() and (root / "lib64").is_dir():
            return root
    raise CrosscheckError("ns-3 is not installed: pip install --no-deps 'ns3==3.44.*' "
                          "(the wheel's headers and libraries are all the cross-check needs)")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tenantnet" / "ns3"


def build(root: Path | None = None, as_released: bool = False) -> Path:
    """The cross-check's ns-3 program, compiled if its source or ns-3 changed;
    `as_released` leaves ns-3 3.44's own loss-recovery functions in place (without
    ``upstream.h``'s, which with ``--upstream_fixes=0`` do the same: a test's yardstick)."""
    root = root or ns3_root()
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise CrosscheckError("no C++ compiler found (install g++ or set CXX)")
    text = b"".join(f.name.encode() + f.read_bytes() for f in SOURCES)
    flags = ["-DTENANTNET_NS3_AS_RELEASED"] if as_released else []
    key = hashlib.sha256(text + str(root).encode() + " ".join(flags).encode()).hexdigest()[:16]
    exe = cache_dir() / f"crosscheck-{key}"
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    lib = root / "lib64"
    cmd = [cxx, "-std=c++20", "-O2", *flags, f"-I{root / 'include'}", str(PROGRAM),
           "-Wl,--no-as-needed", f"-L{lib}", *(f"-lns3.44-{x}" for x in LIBS),
           f"-Wl,-rpath,{lib}", "-o", str(exe) + ".tmp"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CrosscheckError("compiling the ns-3 program failed: "
                              + " ".join(done.stderr.strip().splitlines()[-3:]))
    os.replace(str(exe) + ".tmp", exe)
    return exe


@dataclass
class Setup:
    """What the ns-3 program is given, read from the scenario."""
    senders: int
    size: int
    topology: dict[str, str]
    buffer: int
    host_buffer: int
    ecn_k: int
    host_ecn: bool
    cc: str
    sack: bool
    mss: int
    init_cwnd: int
    min_rto_s: float
    delack: int
    note: str
    delack_timeout_s: float = 0.2
    """The delayed-ACK timer (ns-3's default 200 ms; the scenario's, by setup)."""
    quick_acks: int = 0
    """Segments of a connection acknowledged at once (Linux's quick-ACK mode)."""
    ack_push: bool = False
    """Whether the segment that ends a flow is acknowledged at once."""
    pairs: bool = False
    kind: str = "dumbbell"
    flows_csv: str = ""
    """``leafspine``: the flows to replay, a line each (see ``leafspine.h``)."""
    events: int = 0
    """Events tenantnet's run took: what ns-3's time is estimated from."""
    recovery: str = ""
    """ns-3's recovery when it is not the default for `sack` (``prr``: Linux's
    without SACK, for ``recovery = "reno_sack"``)."""
    upstream_fixes: bool = True
    """Whether ns-3 runs with the fixes to 3.44's SACK recovery that its development
    tree made after the release (``ns3-program/upstream.h``)."""

    def args(self, flows_file: Path | None = None) -> list[str]:
        common = [*(f"--{k}={v}" for k, v in self.topology.items()),
                  f"--buffer={self.buffer}", f"--host_buffer={self.host_buffer}",
                  f"--ecn_k={self.ecn_k}", f"--host_ecn={int(self.host_ecn)}",
                  f"--cc={self.cc}", f"--sack={int(self.sack)}", f"--mss={self.mss}",
                  f"--init_cwnd={self.init_cwnd}", f"--min_rto={self.min_rto_s * 1e6:.0f}us",
                  f"--delack={self.delack}",
                  f"--delack_timeout={self.delack_timeout_s * 1e6:.0f}us",
                  f"--quick_acks={self.quick_acks}", f"--ack_push={int(self.ack_push)}",
                  f"--upstream_fixes={int(self.upstream_fixes)}"]
        if self.recovery:
            common.append(f"--recovery={self.recovery}")
        if self.kind == "leafspine":
            return ["--topology=leafspine", *common, f"--flows={flows_file}"]
        return [f"--senders={self.senders}", f"--size={self.size}", *common,
                f"--pairs={int(self.pairs)}"]

    def describe(self) -> str:
        """The set-up in one line, as the report heads it."""
        fabric = "a star" if self.topology.get("spines") == "0" else "a leaf-spine"
        what = (f"{self.senders} flows replayed on {fabric}" if self.kind == "leafspine"
                else f"{self.senders} senders x {self.size} B")
        sack = "SACK" if self.sack else "no SACK" + (", PRR" if self.recovery else "")
        ns3 = "with its later SACK-recovery fixes" if self.upstream_fixes else "as released"
        return (f"{what}, {self.cc}, {sack}, buffer "
                f"{self.buffer} B, ECN K {self.ecn_k or 'off'}, "
                f"min RTO {self.min_rto_s * 1e3:g} ms; ns-3 3.44 {ns3}")


PACKETS = re.compile(r"^\s*([0-9]+)\s*(pkts?|packets?)\s*$")


def size_bytes(text: str, packet: int) -> int:
    """A scenario size in bytes, packets counted at `packet` bytes."""
    m = PACKETS.match(text)
    return int(m.group(1)) * packet if m else int(_core.parse_size(text))


def refuse(d: dict[str, Any]) -> None:
    """CrosscheckError naming what the ns-3 program does not model."""
    topo = d.get("topology", {})
    if topo.get("kind") == "dumbbell":
        flows(d)
    elif topo.get("kind") not in ("leaf_spine", "star"):
        raise CrosscheckError(f"topology.kind = {topo.get('kind')!r}: the ns-3 cross-check "
                              "supports the dumbbell, the leaf_spine and the star")
    for key in ("tenants", "vswitch", "qshare", "cpu"):
        if d.get(key):
            raise CrosscheckError(f"{key}: not modelled by the ns-3 program; the cross-check "
                                  "compares transports on a plain fabric")
    net = d.get("network", {})
    for key, plain in (("queues", 1), ("buffer_policy", "tail_drop"), ("ecn_scope", "port"),
                       ("host_nic", "fifo"), ("clock_ppm", 0)):
        if net.get(key, plain) != plain:
            raise CrosscheckError(f"network.{key} = {net[key]!r}: the ns-3 program models "
                                  f"{plain!r} only")
    for key in ("host_jitter", "tx_jitter"):
        if _core.parse_duration(str(net.get(key, "0s"))) > 0:
            raise CrosscheckError(f"network.{key} = {net[key]!r}: ns-3's hosts take and send "
                                  "packets at once; the program models no wait")


def one_host(v: Any) -> str | None:
    """The host a workload's `src` or `dst` names, if it names exactly one."""
    if isinstance(v, str):
        return v
    return v[0] if isinstance(v, list) and len(v) == 1 and isinstance(v[0], str) else None


def flows(d: dict[str, Any]) -> tuple[int, str, bool]:
    """The flows the program can run: (senders, size, pairs). Either one incast of one
    round, or long flows on pairs: `fixed` workloads of one flow each, left<i> to
    right<i> for i = 0, 1, ..., all of one size and starting at 0."""
    works = d.get("workloads", [])
    if len(works) == 1 and works[0].get("kind") == "incast" and works[0].get("rounds", 1) == 1:
        return len(works[0]["senders"]), str(works[0]["size"]), False
    ends = [(one_host(w.get("src")), one_host(w.get("dst"))) for w in works]
    shapes = {(w.get("kind"), str(w.get("size")), w.get("flows_per_pair", 1),
               str(w.get("start", "0s"))) for w in works}
    on_pairs = ends == [(f"left{i}", f"right{i}") for i in range(len(works))]
    if works and on_pairs and len(shapes) == 1:
        kind, size, per_pair, start = shapes.pop()
        if kind == "fixed" and per_pair == 1 and start in ("0s", "0", "0ms"):
            return len(works), size, True
    raise CrosscheckError("workloads: the ns-3 cross-check supports one incast workload of "
                          "one round, or fixed workloads of one flow each from left<i> to "
                          "right<i> (i = 0, 1, ...), of one size, starting at 0")


def notes(tcp: dict[str, Any]) -> list[str]:
    """What the report adds about the comparison of `tcp` (the resolved transport)."""
    out = []
    if tcp["recovery"] == "rack":
        out.append("ns-3 has no RACK: compared with its SACK (RFC 6675, PRR)")
    if tcp["delayed_ack"] and tcp["min_rto_s"] < tcp["delayed_ack_timeout_s"]:
        out.append(f"the min RTO ({tcp['min_rto_s'] * 1e3:g} ms) is below the delayed-ACK "
                   f"timer ({tcp['delayed_ack_timeout_s'] * 1e3:g} ms): after a timeout, "
                   "ns-3's flows can wait for their timer again and again (docs: Cross-check "
                   "against ns-3, Under the linux profile)")
    return out


def setup(sc: Scenario) -> tuple[Setup, dict[str, Any]]:
    """The ns-3 program's settings for `sc` and the tenantnet scenario to compare with
    them (ns-3's header sizes); CrosscheckError naming what is not supported."""
    d = sc.data()
    refuse(d)
    ours = dict(d)
    ours["transport"] = {**d.get("transport", {}), "header": f"{NS3_HEADER}B",
                         "ack_size": f"{NS3_ACK}B"}
    # ns-3's links send at exactly their rate and its hosts hand packets to their
    # devices at once: so do ours, whatever the profile's clocks and transmit wait
    ours["network"] = {**d.get("network", {}), "clock_ppm": 0, "tx_jitter": "0us"}
    # and ns-3 runs simultaneous events in the order they were scheduled (its events'
    # insertion numbers): so do ours, unless the scenario names a rule
    ours["simulation"] = {"ties": "scheduled", **d.get("simulation", {})}
    tcp = json.loads(Scenario.from_dict(ours).simulation()._core.transport_json)
    topo, net = d["topology"], d.get("network", {})
    packet = tcp["mss"] + NS3_HEADER
    buffer = size_bytes(net.get("buffer", "1MB"), packet)
    ecn = size_bytes(net["ecn_threshold"], packet) if net.get("ecn_threshold") else 0
    rate, delay = topo.get("link_rate", "10Gbps"), topo.get("link_delay", "1us")
    if topo["kind"] in ("leaf_spine", "star"):
        senders, size, pairs, kind = 0, "0B", False, "leafspine"
        # the leaf-spine links' rate is read from the built fabric (`run_ours`); a
        # star is the program's leaf-spine of one leaf and no spine
        shape = ({"leaves": "1", "spines": "0", "hosts_per_leaf": str(topo["hosts"])}
                 if topo["kind"] == "star" else
                 {k: str(topo[k]) for k in ("leaves", "spines", "hosts_per_leaf")})
        wiring = {"rate": rate, "delay": delay, **shape}
    else:
        (senders, size, pairs), kind = flows(d), "dumbbell"
        wiring = {"rate": rate, "delay": delay,
                  "bottleneck_rate": topo.get("bottleneck_rate", rate),
                  "bottleneck_delay": topo.get("bottleneck_delay", delay)}
    s = Setup(
        senders=senders, size=size_bytes(size, packet), pairs=pairs, kind=kind,
        topology=wiring,
        buffer=buffer, host_buffer=size_bytes(net.get("host_buffer", f"{buffer}B"), packet),
        ecn_k=ecn if tcp["ect"] else 0, host_ecn=bool(net.get("host_ecn", True)),
        cc=tcp["cc"], sack=tcp["recovery"] in ("sack", "rack"),
        recovery="prr" if tcp["recovery"] == "reno_sack" else "",
        mss=tcp["mss"], init_cwnd=tcp["init_cwnd"], min_rto_s=tcp["min_rto_s"],
        delack=2 if tcp["delayed_ack"] else 1,
        delack_timeout_s=tcp["delayed_ack_timeout_s"], quick_acks=tcp["quick_acks"],
        ack_push=tcp["ack_push"],
        note="\n".join(notes(tcp)))
    # ns-3's data follows a handshake whose RTT sample puts the RTO at its minimum
    ours["transport"]["initial_rto"] = f"{round(s.min_rto_s * 1e9)}ns"
    if s.sack:
        # ns-3's PRR recovery also paces the window down after ECE
        ours["transport"]["cwr_reduction"] = "prr"
    # ns-3's TcpLinuxReno (and DCTCP on it) sets ssthresh from the window, as Linux
    ours["transport"].setdefault("loss_ssthresh", "cwnd")
    return s, ours


def _invoke(s: Setup, exe: Path | None, extra: list[str]) -> subprocess.CompletedProcess[str]:
    """The ns-3 program run on `s` with `extra` arguments; CrosscheckError if it fails."""
    exe = exe or build()
    with tempfile.TemporaryDirectory() as tmp:
        flows_file = Path(tmp) / "flows.csv"
        flows_file.write_text(s.flows_csv)
        done = subprocess.run([str(exe), *s.args(flows_file), *extra], capture_output=True,
                              text=True)
    if done.returncode != 0:
        raise CrosscheckError("the ns-3 program failed: "
                              + " ".join(done.stderr.strip().splitlines()[-3:]))
    return done


def run_ns3(s: Setup, exe: Path | None = None) -> tuple[pd.DataFrame, int]:
    """ns-3's flows (fct_s, timeouts, retransmits) and its drops."""
    lines = _invoke(s, exe, []).stdout.strip().splitlines()
    drops = int(lines[-1].split(",")[1])
    return pd.read_csv(io.StringIO("\n".join(lines[:-1]))), drops


CWND_LINE = re.compile(r"^flow ([0-9]+) ([0-9]+) ns cwnd ([0-9]+)$", re.M)
"""A window change in the program's verbose output (``--verbose=1``)."""


def windows(sc: Scenario, flow: int = 0, exe: Path | None = None) -> pd.DataFrame:
    """Flow `flow`'s congestion window over its life in both simulators: a row per
    change (``simulator``, ``time_s`` from the flow's first byte, ``cwnd_bytes``):
    tenantnet's flow trace, ns-3's ``CongestionWindow`` trace source."""
    s, ours = setup(sc)
    ours["output"] = {**ours.get("output", {}), "trace_flows": [flow],
                      "trace_rows": 10_000_000}
    r = run_ours(s, ours)
    assert r.flow_trace is not None
    mine = r.flow_trace[r.flow_trace["flow_id"] == flow]
    start = float(r.flows.set_index("flow_id")["start_s"][flow])
    err = _invoke(s, exe, ["--verbose=1"]).stderr
    rows = [(int(t) * 1e-9, int(w)) for f, t, w in CWND_LINE.findall(err) if int(f) == flow]
    theirs = pd.DataFrame(rows, columns=["time_s", "cwnd_bytes"])
    if len(theirs):  # from its connection's establishment: its first window
        theirs["time_s"] -= theirs["time_s"].iloc[0]
    return pd.concat([
        pd.DataFrame({"simulator": "tenantnet",
                      "time_s": mine["time_s"].astype(float).to_numpy() - start,
                      "cwnd_bytes": mine["cwnd_bytes"].astype(float).to_numpy()}),
        theirs.assign(simulator="ns-3")[["simulator", "time_s", "cwnd_bytes"]]],
        ignore_index=True)


def window_summary(w: pd.DataFrame, after_s: float = 0.0) -> pd.DataFrame:
    """Each simulator's window (:func:`windows`) as a step function from `after_s` to
    its last change, in time-weighted quantiles: p5, median and p95 (bytes)."""
    out = []
    for name, g in w.groupby("simulator", sort=False):
        g = g.sort_values("time_s", kind="stable")
        t, v = g["time_s"].to_numpy(), g["cwnd_bytes"].to_numpy()
        keep = t >= after_s
        if keep.sum() < 2:
            continue
        t, v = t[keep], v[keep]
        dt = np.diff(t)
        order = np.argsort(v[:-1], kind="stable")
        weight = np.cumsum(dt[order]) / dt.sum()
        q = {f"p{p}": float(v[:-1][order][np.searchsorted(weight, p / 100)])
             for p in (5, 50, 95)}
        out.append({"simulator": name, **q})
    return pd.DataFrame(out)


def spine_of(path: list[str]) -> int:
    """The spine a leaf-spine path crosses (``"leaf0->spine3"``), -1 within a leaf."""
    for port in path:
        m = re.search(r"->spine([0-9]+)$", port)
        if m:
            return int(m.group(1))
    return -1


def replay(flows: pd.DataFrame, data: list[list[str]], acks: list[list[str]]) -> str:
    """The flows file of the leaf-spine program: a line per flow (hosts by number,
    ``h<i>``), with the spines tenantnet's ECMP chose for its data and its ACKs."""
    unsized = flows[flows["size_bytes"].isna() | (flows["protocol"] == "udp")]
    if len(unsized):
        f = unsized.iloc[0]
        raise CrosscheckError(f"workload {f['workload']}: flow {f['flow_id']} is not a sized "
                              "TCP flow; the leaf-spine cross-check replays sized TCP flows")
    lines = []
    for f in flows.itertuples():
        i = int(f.flow_id)
        lines.append(f"{str(f.src)[1:]},{str(f.dst)[1:]},{int(f.size_bytes)},"
                     f"{round(f.start_s * 1e9)},{spine_of(data[i])},{spine_of(acks[i])}\n")
    return "".join(lines)


def run_ours(s: Setup, ours: dict[str, Any]) -> Results:
    """tenantnet's results; for the leaf-spine, also the flows file ns-3 replays and the
    rate of its leaf-spine links as tenantnet built them (`fabric_rate`, or what
    `oversubscription` leaves)."""
    sim = Scenario.from_dict(ours).simulation()
    advance(sim, progress=lambda *a: None)
    res = sim.results()
    s.events = sim.events
    if s.kind == "leafspine":
        s.flows_csv = replay(res.flows, sim.flow_paths, sim.flow_ack_paths)
        s.senders = len(res.flows)
        links = res.links
        up = links[links["node"].str.startswith("leaf") & links["peer"].str.startswith("spine")]
        if len(up):
            s.topology["bottleneck_rate"] = f"{round(up['rate_gbps'].iloc[0] * 1e9)}bps"
    return res


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov distance."""
    a, b = np.sort(a), np.sort(b)
    x = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, x, side="right") / len(a)
                               - np.searchsorted(b, x, side="right") / len(b))))


SMALL = 100_000
"""Flows under this many bytes are the small ones, whose slowdowns are reported."""


def summary(name: str, both: pd.DataFrame, prefix: str, drops: int) -> dict[str, Any]:
    """One simulator's row from the per-flow table (:func:`flow_by_flow`): its columns
    under `prefix` (``""`` for tenantnet's, ``"ns3_"`` for ns-3's), the small flows'
    slowdowns against tenantnet's ideal FCT."""
    fct_s, timeouts = both[f"{prefix}fct_s"], both[f"{prefix}timeouts"]
    fct = fct_s.dropna() * 1e3
    slow = (fct_s / both["ideal_fct_s"])[both["size_bytes"] < SMALL].dropna()
    return {"simulator": name, "flows": len(both), "completed": len(fct),
            "median_ms": fct.median(), "p90_ms": fct.quantile(0.9),
            "p99_ms": fct.quantile(0.99), "max_ms": fct.max(),
            "small_median_slowdown": slow.median() if len(slow) else np.nan,
            "small_p99_slowdown": slow.quantile(0.99) if len(slow) else np.nan,
            "flows_with_timeouts": int((timeouts > 0).sum()),
            "timeouts_per_flow": timeouts.mean(),
            "retransmits_per_flow": both[f"{prefix}retransmits"].mean(), "drops": drops}


RELATIVE = ("median_ms", "p90_ms", "p99_ms", "max_ms", "small_median_slowdown",
            "small_p99_slowdown")
"""The columns whose difference is reported relative to ns-3's."""


NS3_US_PER_EVENT = {"dumbbell": 6.0, "leafspine": 18.5}
"""ns-3's wall time per event of tenantnet's run of the same scenario, in µs, measured
on this project's machine kind (2 cores): 4.5 to 6.9 on the dumbbell's incasts and long
flows, 18.2 to 18.7 on the leaf-spine's 400-flow replay with SACK (13.4 for ns-3 3.44
as released, whose senders held back in recovery)."""
NS3_LIMIT_S = 86_400.0
"""Replays estimated to take ns-3 longer than this are refused."""


def roughly(seconds: float) -> str:
    """A duration the way an estimate is said: seconds, minutes, hours or days."""
    for unit, size in (("days", 86_400.0), ("h", 3_600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 1.0):.0f} s"


def ns3_estimate_s(s: Setup) -> float:
    """About how long ns-3 takes for `s`, once tenantnet has run it."""
    return s.events * NS3_US_PER_EVENT[s.kind] * 1e-6


def crosscheck(sc: Scenario, exe: Path | None = None,
               progress: Callable[[str], None] | None = None, upstream_fixes: bool = True
               ) -> tuple[pd.DataFrame, Setup, pd.DataFrame]:
    """Both simulators' per-flow FCT distribution and loss recovery, side by side, with
    the KS distance between the FCTs and tenantnet's differences relative to ns-3's;
    the setup; and every flow in both (:func:`flow_by_flow`). `progress` is told what
    runs, with ns-3's estimated time; a replay estimated past a day is refused
    (CrosscheckError) before ns-3 starts. ns-3 runs with its later fixes to 3.44's
    SACK recovery unless `upstream_fixes` is false (:attr:`Setup.upstream_fixes`)."""
    say = progress or (lambda _: None)
    s, ours = setup(sc)
    s.upstream_fixes = upstream_fixes
    say("tenantnet: running the scenario")
    r = run_ours(s, ours)
    estimate = ns3_estimate_s(s)
    if estimate > NS3_LIMIT_S:
        raise CrosscheckError(f"ns-3 would take about {roughly(estimate)} for "
                              f"these {len(r.flows)} flows ({s.events:,} events in tenantnet); "
                              f"the cross-check runs what ns-3 does within "
                              f"{roughly(NS3_LIMIT_S)}")
    say(f"ns-3: {len(r.flows)} flows, about {roughly(estimate)}")
    theirs, ns3_drops = run_ns3(s, exe)
    both = flow_by_flow(r.flows, theirs)
    rows = [summary("tenantnet", both, "", int(r.summary["packets_dropped"])),
            summary("ns-3", both, "ns3_", ns3_drops)]
    table = pd.DataFrame(rows)
    diff: dict[str, Any] = {"simulator": "tenantnet vs ns-3"}
    for col in RELATIVE:
        diff[col] = rows[0][col] / rows[1][col] - 1
    diff["ks"] = ks(both["fct_s"].dropna().to_numpy(), both["ns3_fct_s"].dropna().to_numpy())
    diff["flows_with_timeouts"] = rows[0]["flows_with_timeouts"] - rows[1]["flows_with_timeouts"]
    out = pd.concat([table, pd.DataFrame([diff])], ignore_index=True)
    for col in ("flows", "completed", "drops"):
        out[col] = out[col].astype("Int64")
    return out, s, both


def flow_by_flow(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """Each flow in both simulators: its ends, size, start and ideal FCT, then each
    one's FCT, timeouts and retransmissions (``ns3_`` for ns-3's)."""
    mine = ours.sort_values("flow_id").reset_index(drop=True)
    other = theirs.sort_values("flow").reset_index(drop=True)
    out = mine[["flow_id", "src", "dst", "size_bytes", "start_s", "ideal_fct_s", "fct_s",
                "timeouts", "retransmits"]].copy()
    for col in ("fct_s", "timeouts", "retransmits"):
        out[f"ns3_{col}"] = other[col].to_numpy()
    return out


def report(table: pd.DataFrame, s: Setup) -> str:
    """The table in words, as the command prints it."""
    shown = table.copy()
    for col in RELATIVE:
        shown[col] = ["" if pd.isna(v) else f"{v:+.1%}" if i == 2 else f"{v:.3f}"
                      for i, v in enumerate(shown[col])]
    text = shown.to_string(index=False, na_rep="")
    return "\n".join([s.describe(), text] + ([s.note] if s.note else []))

