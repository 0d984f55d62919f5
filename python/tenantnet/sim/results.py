"""Results of a run: pandas DataFrames and the summary, and their files.

Files written by :meth:`Results.write`:

* ``flows.parquet``: flow_id, tenant, src, dst, size_bytes (empty for long-lived),
  start_s, end_s (empty if unfinished), fct_s, retransmits, timeouts,
  bytes_delivered, protocol, workload
* ``throughput.parquet``: time_s, scope (flow, tenant, link, queue, vm or tenant_link:
  a tenant's bytes on a switch-to-switch port, id the port), id, tenant, gbps
* ``queues.parquet``: time_s, switch, port, queue, bytes, peer
* ``links.parquet``: per port: node, port, peer, rate_gbps, tx_bytes, tx_packets,
  drops, evictions, ecn_marks, mean_queue_bytes, max_queue_bytes, utilization
* ``queue_stats.parquet``: per switch-port queue: node, port, peer, queue, weight,
  tx_bytes, tx_packets, drops, evictions, ecn_marks, mean_bytes, max_bytes
* ``vms.parquet``: per VM: vm, tenant, host, policy (none, static, mbfq),
  guarantee_gbps (at the end), weight, tx_bytes, mean_gbps, drops
* ``vm_rates.parquet``: per VM per vswitch tick (every ``vswitch.interval``): time_s, vm,
  tenant, send_gbps (SR over the last interval), allocated_gbps (the rate its
  token bucket enforces from then on; empty while it is off), target_gbps (MBFQ's
  TR), ru, rg_gbps and rw_gbps (Trinity: the sums of R_G and R_W over the VM's
  channels), limit_gbps (ElasticSwitch: the sum of its pair limiters' rates),
  guarantee_gbps, nic_utilization
* ``queries.parquet``: per query of the ``request_response`` and ``pingpong``
  workloads: query_id,
  workload, tenant, client, servers (how many it asked), start_s, end_s (when its
  last response arrived; empty if it did not), qct_s (the query completion time; with
  one server, the request's FCT as a client measures it)
* with the vswitch CPU model (``[vswitch.cpu]``) only:

  * ``vm_cpu.parquet``: per VM per vswitch tick: time_s, vm, cycles (forwarding its
    batches in the interval; a batch counts when it starts), cpu_share (of its PMD
    core), packets (forwarded), policed (dropped by ingress policing), tokens (its
    C2TB bucket at the tick; empty without C2TB), class (its HBS class at the tick;
    empty without HBS)
  * ``pmd.parquet``: per PMD core per tick: time_s, host, core, busy, poll (empty
    polls), idle, each a share of the core's cycles
  * ``nic_monitor.parquet`` (with ``[vswitch.cpu.nic_handler]``): per host per
    monitor interval: time_s, host, nic_gbps (its NIC's transmit rate over the
    interval), policing (1 while the handler has ingress policing on)

* with QShare's controller (``[qshare]``) only:

  * ``qshare_tenants.parquet``: per control interval per tenant: time_s (the
    decision), tenant, u_factor (Eq. 1 over the interval that ended), score (Eq. 2),
    dedicated (1 for a D-tenant), dscp (its tag: 0 in the shared queue)
  * ``qshare_queues.parquet``: per port configuration pushed, a row per queue:
    time_s (when applied), link (the controller's name, "upper to lower"), port
    (``owner->peer``), queue, weight, tenants (names in the queue, space-separated)

* with a packet capture (``[output] capture``) only:

  * ``capture.parquet``: per packet a captured port put on the wire: time_ps (its
    first bit), node, peer, flow_id (empty for control packets), src_host, dst_host
    (host indices), kind (data, ack, udp, control), seq (data) or the cumulative ACK,
    payload_bytes, wire_bytes, dscp, ecn (0, 2 for ECT(0), 3 for CE), ece, retx
  * ``capture/NODE-PEER.pcap``: the same packets per port, for Wireshark and tshark
    (:mod:`tenantnet.sim.pcap`)

* with a flow trace (``[output] trace_flows`` or ``trace_fraction``) only:

  * ``flow_trace.parquet``: per traced TCP flow, each time the simulator drove its
    sender (its start, every ACK, every timer): time_s, flow_id, cwnd_bytes,
    ssthresh_bytes (empty until set), srtt_s (empty before a sample), rto_s, state
    (open, disorder, cwr, recovery, loss), snd_una, snd_max

* ``summary.json``: simulated time, wall time, events, packet counts, ECN marks,
  seed, tenantnet version, per-workload facts; with VMs, ``vswitch``: how many of
  their packets a token bucket held (``packets_shaped``) and how many control
  packets their policies sent (``control_packets``); with the CPU model, ``cpu``
* ``manifest.json``: every file the run wrote (:mod:`tenantnet.jobs.outdir`): reading a
  folder reads only those
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..jobs.outdir import OutputError, listed, write_manifest, write_parquet
from .pcap import write_pcaps

if TYPE_CHECKING:  # imported when first used: `import tenantnet` stays light
    import numpy as np
    import pandas as pd

TABLES = ("flows", "throughput", "queues", "links", "queue_stats", "vms", "vm_rates",
          "queries")
OPTIONAL_TABLES = ("vm_cpu", "pmd", "nic_monitor", "qshare_tenants", "qshare_queues",
                   "capture", "flow_trace")
"""Tables only some runs have (None in :class:`Results` otherwise): the CPU model's,
QShare's controller's, the packet capture's and the flow trace's."""


def _column(enc: tuple[Any, ...]) -> Any:
    # deferred for start-up: loads numpy, pandas
    import numpy as np
    import pandas as pd

    kind = enc[0]
    if kind == "u64":
        return np.frombuffer(enc[1], dtype="<u8").astype(np.int64)
    if kind == "f64":
        return np.frombuffer(enc[1], dtype="<f8").copy()
    if kind == "opt_f64":
        vals = np.frombuffer(enc[1], dtype="<f8").copy()
        mask = np.frombuffer(enc[2], dtype=np.uint8).astype(bool)
        return pd.arrays.FloatingArray(vals, mask)
    if kind == "opt_u64":
        vals = np.frombuffer(enc[1], dtype="<u8").astype(np.int64)
        mask = np.frombuffer(enc[2], dtype=np.uint8).astype(bool)
        return pd.arrays.IntegerArray(vals, mask)
    if kind == "str":
        codes = np.frombuffer(enc[1], dtype="<u4")
        labels = np.array(enc[2], dtype=object)
        return pd.array(labels[codes] if len(labels) else np.array([], dtype=object),
                        dtype="string")
    raise ValueError(f"unknown column encoding {kind!r}")


def _frame(cols: dict[str, tuple[Any, ...]]) -> pd.DataFrame:
    # deferred for start-up: loads pandas
    import pandas as pd

    return pd.DataFrame({name: _column(enc) for name, enc in cols.items()})


def jain(x: np.ndarray) -> float:
    """Jain's fairness index of the rates ``x``: 1 when all are equal, 1/n when one
    takes everything; 0 when all are 0."""
    s = float(x.sum())
    return s * s / (len(x) * float((x * x).sum())) if s > 0 else 0.0


@dataclass
class Results:
    """Everything a run produced."""

    summary: dict[str, Any]
    flows: pd.DataFrame
    throughput: pd.DataFrame
    queues: pd.DataFrame
    links: pd.DataFrame
    queue_stats: pd.DataFrame
    vms: pd.DataFrame
    vm_rates: pd.DataFrame
    queries: pd.DataFrame
    vm_cpu: pd.DataFrame | None = None
    pmd: pd.DataFrame | None = None
    nic_monitor: pd.DataFrame | None = None
    qshare_tenants: pd.DataFrame | None = None
    qshare_queues: pd.DataFrame | None = None
    capture: pd.DataFrame | None = None
    flow_trace: pd.DataFrame | None = None

    @classmethod
    def from_core(cls, summary_json: str, tables: dict[str, dict[str, tuple[Any, ...]]]) -> Results:
        """Wraps what ``_core.Simulation.results()`` returns."""
        frames = {name: _frame(tables[name]) for name in TABLES}
        extra = {name: _frame(tables[name]) for name in OPTIONAL_TABLES if name in tables}
        return cls(summary=json.loads(summary_json), **frames, **extra)

    @classmethod
    def read(cls, out_dir: str | Path) -> Results:
        """Reads results that :meth:`write` wrote: the tables its manifest lists
        (every table there is, in a folder without one)."""
        # deferred for start-up: loads pandas
        import pandas as pd

        d = Path(out_dir)
        files = listed(d)
        for name in ("summary.json", *(f"{t}.parquet" for t in TABLES)):
            if files is not None and name not in files:
                raise FileNotFoundError(f"{d}: its manifest does not list {name}")
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        frames = {name: pd.read_parquet(d / f"{name}.parquet") for name in TABLES}
        extra = {name: pd.read_parquet(d / f"{name}.parquet") for name in OPTIONAL_TABLES
                 if (f"{name}.parquet" in files if files is not None else
                     (d / f"{name}.parquet").exists())}
        return cls(summary=summary, **frames, **extra)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Writes the Parquet tables, ``summary.json`` and a manifest listing them
        into ``out_dir``; tables of another run already there are not listed, so
        :meth:`read` does not read them."""
        if not isinstance(out_dir, str | Path):
            raise TypeError(f"out_dir = {out_dir!r}: expected a folder's path, not "
                            f"{type(out_dir).__name__}")
        d = Path(out_dir)
        try:
            return self._write(d, write_manifest, write_parquet)
        except OSError as e:
            raise OutputError(f"{d}: cannot write the results there: "
                              f"{e.strerror or e}") from None

    def _write(self, d: Path, write_manifest: Any, write_parquet: Any) -> list[Path]:
        d.mkdir(parents=True, exist_ok=True)
        written = []
        for name in TABLES + OPTIONAL_TABLES:
            frame = getattr(self, name)
            if frame is None:
                continue
            path = d / f"{name}.parquet"
            write_parquet(frame, path)
            written.append(path)
        if self.capture is not None:
            written.extend(write_pcaps(self.capture, d))
        path = d / "summary.json"
        path.write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        written.append(path)
        write_manifest(d, "tenantnet run", files=[p.relative_to(d).as_posix()
                                                  for p in written])
        return written

    def pingpong(self) -> pd.DataFrame:
        """The ``pingpong`` probes' round trips, as qperf's ``tcp_lat`` reports them:
        workload, client, start_s and latency_s (half the round trip, seconds), one
        row per completed round trip."""
        kinds = [w.get("kind") for w in self.summary.get("workloads", [])]
        probes = [i for i, k in enumerate(kinds) if k == "pingpong"]
        q = self.queries[self.queries["workload"].isin(probes) & self.queries["qct_s"].notna()]
        out = q[["workload", "client", "start_s"]].copy()
        out["latency_s"] = q["qct_s"] / 2
        return out.reset_index(drop=True)

    def flow_gbps(self) -> pd.Series:
        """Each flow's mean goodput over the simulated time, Gb/s."""
        span = float(self.summary["simulated_s"])
        return self.flows["bytes_delivered"].astype(float) * 8 / span / 1e9
