"""A simulation stepped from Python: run it to a time, read its counters, change switch
queue weights or DSCP maps while it runs, and take its results.

>>> sim = tenantnet.Scenario.from_file("scenario.toml").simulation()   # doctest: +SKIP
>>> sim.run_until(0.010)                                               # doctest: +SKIP
>>> sim.set_queue_weights("leaf0", [3, 1], peer="spine0")              # doctest: +SKIP
>>> res = sim.run().results()                                          # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..errors import ScenarioError, check_type, check_whole, is_whole
from .results import Results


@dataclass(frozen=True)
class FootprintPart:
    """One part of a run's memory estimate."""

    kind: str
    """``fixed`` (allocated when the run is built), ``recording`` or ``packets``."""
    what: str
    """What the bytes hold, e.g. ``"2.7e6 throughput samples (91 every 1us)"``."""
    key: str
    """The scenario key that drives it."""
    bytes: float


@dataclass(frozen=True)
class Footprint:
    """A run's memory estimate: iterate it for its parts; ``str()`` says it in words."""

    parts: tuple[FootprintPart, ...]
    summary: str
    """``about 13.2 MiB of memory (6.7 MiB for …, …) and about 9.6e7 events (…)``."""
    events: float
    """Events the run is estimated to process."""

    @property
    def bytes(self) -> float:
        """The estimated total."""
        return sum(p.bytes for p in self.parts)

    def __iter__(self) -> Iterator[FootprintPart]:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def __str__(self) -> str:
        return self.summary

    @classmethod
    def of(cls, core: _core.Simulation) -> Footprint:
        """The estimate a core simulation was built with."""
        return cls(tuple(FootprintPart(*p) for p in core.footprint), core.footprint_summary,
                   core.events_estimate)


class Simulation:
    """A simulation of one scenario, at time 0 when made.

    ``results()`` may be called at any time: it returns everything up to the current
    time, and the run can go on afterwards (later results cover the whole run). Runs
    release the GIL; the same scenario and seed give the same results however the run
    is stepped.
    """

    def __init__(self, core: _core.Simulation):
        self._core = core

    @property
    def now_s(self) -> float:
        """Current simulated time, seconds."""
        return self._core.now_s

    @property
    def end_s(self) -> float:
        """The simulated time the run ends at, seconds."""
        return self._core.end_s

    @property
    def finished(self) -> bool:
        """Whether the run reached its end (its duration, or every sized flow done with
        ``stop_when_done``)."""
        return self._core.finished

    @property
    def events(self) -> int:
        """Events processed so far."""
        return self._core.events

    @property
    def flow_paths(self) -> list[list[str]]:
        """Each flow's data path as port names (``"node->peer"``), from the source's
        NIC to the last switch's port toward the destination: the ECMP choice its
        hash makes. In flow order, as the ``flow`` column of the results."""
        return self._core.flow_paths

    @property
    def flow_ack_paths(self) -> list[list[str]]:
        """Each flow's ACK path as port names, from the destination's NIC to the last
        switch's port toward the source: the ECMP choice of the flow's reverse hash. In
        flow order."""
        return self._core.flow_ack_paths

    @property
    def footprint(self) -> Footprint:
        """The memory the run was estimated to need, part by part."""
        return Footprint.of(self._core)

    @property
    def memory_in_use(self) -> float:
        """Bytes the run holds now (estimated at the footprint's costs)."""
        return self._core.memory_in_use

    def set_threads(self, threads: int | None, exact: bool = False,
                    cores: int | None = None) -> Simulation:
        """Lets the run use up to ``threads`` threads (1 to 4096; ``None``: chosen for
        the run, by the rule in the Performance guide, among ``cores`` of the
        machine's cores, all when ``None``), and no more than the machine has idle
        cores when the run starts (``exact``: as many as asked whatever the load,
        which tests of the parallel engine need). A run under ``simulation.ties =
        "partitioned"`` is cut into partitions, one per thread, and gives the same bytes
        for any number; one that cannot be cut runs on one, and :attr:`threads_note`
        says why. Only before the run starts."""
        if threads is not None and not is_whole(threads, 1, 4096):
            raise ValueError(f"threads = {threads!r}: expected a whole number from 1 to 4096")
        if cores is not None and not is_whole(cores, 1, 4096):
            raise ValueError(f"cores = {cores!r}: expected a whole number from 1 to 4096")
        if not isinstance(exact, bool):
            raise TypeError(f"exact = {exact!r}: expected True or False")
        self._core.set_threads(0 if threads is None else int(threads), exact,
                               0 if cores is None else int(cores))
        return self

    @property
    def threads(self) -> int:
        """The threads the run uses (1 before it starts and when it cannot be cut)."""
        return int(self._core.threads)

    @property
    def threads_note(self) -> str | None:
        """Why the run uses one thread although more were asked for, or how the
        machine's other work made its threads run alone, once it started."""
        note: str | None = self._core.threads_note
        return note

    def run_until(self, t_s: float) -> Simulation:
        """Runs every event up to simulated time ``t_s`` seconds (capped at the end;
        ``math.inf`` runs to the end). Raises :class:`ScenarioError` if the run outgrew
        its memory budget."""
        if isinstance(t_s, bool) or not isinstance(t_s, int | float) or math.isnan(t_s) \
                or t_s < 0:
            raise ValueError(f"run_until({t_s!r}): expected a simulated time in seconds, "
                             "at least 0 (math.inf runs to the end)")
        try:
            self._core.run_until(float(t_s))
        except _core.ScenarioError as e:
            raise ScenarioError(*e.args) from None
        return self

    def run(self) -> Simulation:
        """Runs to the end."""
        return self.run_until(math.inf)

    def run_profiling_cut(self, threads: int) -> dict[str, Any]:
        """Runs to the end as :meth:`run` does (the same results) and says what a
        parallel run on ``threads`` threads would face: the network cut by pod into
        ``parts`` partitions (``hosts`` in each), the ``lookahead_s`` a partition may run
        alone (the smallest delay of the ``cut_links``), the ``events`` of each
        partition and the ``global_events`` of the whole fabric, the ``windows`` a
        conservative engine would synchronise at, the ``port_state_windows`` it would if
        each window ran until a cut port's packet in service had ended (plus its
        link's delay; never more windows), ``cut_packets`` sent between
        partitions, ``balance_bound`` (events over the busiest partition's events summed
        over the windows: the speedup if synchronising cost nothing) and
        ``sequential_because`` when the cut would not run in parallel. Only on a
        simulation that has not started."""
        if isinstance(threads, bool) or not isinstance(threads, int) \
                or not 1 <= threads <= 4096:
            raise ValueError(f"run_profiling_cut({threads!r}): expected 1 to 4096 threads")
        try:
            out: dict[str, Any] = json.loads(self._core.run_profiling_cut(threads))
        except _core.ScenarioError as e:
            raise ScenarioError(*e.args) from None
        return out

    def counters(self) -> dict[str, int]:
        """Packet counters so far: sent, data_sent, delivered, dropped, evicted,
        ecn_marks."""
        return dict(self._core.counters())

    def set_queue_weights(self, switch: str, weights: Sequence[int],
                          peer: str | None = None) -> None:
        """Sets the queue weights of every port of ``switch`` (or only its port toward
        ``peer``) from now on: the scheduler's weights and the buffer and ECN shares
        derived from them. Weights are whole numbers from 1 to 2^32 - 1, one per queue;
        ports with a single queue have no weights to set. A host's name sets its NIC's
        (under ``network.host_nic = "dscp"``, where host NICs have the switches'
        queues)."""
        _node_args(switch, peer)
        check_type("weights", weights, isinstance(weights, Sequence) and not isinstance(
            weights, str), "a list of whole numbers, one per queue")
        ws = [check_whole(f"weights[{i}]", w, 1, 2**32 - 1) for i, w in enumerate(weights)]
        self._core.set_queue_weights(switch, ws, peer)

    def set_dscp_map(self, switch: str, mapping: Mapping[int, int],
                     peer: str | None = None) -> None:
        """Replaces the DSCP -> queue map of every port of ``switch`` (or only its port
        toward ``peer``) from now on (DSCP 0-63 to a queue of the port); DSCPs not
        listed go to queue 0. A host's name sets its NIC's map (under
        ``network.host_nic = "dscp"``)."""
        _node_args(switch, peer)
        check_type("mapping", mapping, isinstance(mapping, Mapping),
                   "a dictionary of DSCP to queue")
        m = {check_whole("DSCP", d, 0, 63): check_whole(f"queue of DSCP {d}", q, 0, 255)
             for d, q in mapping.items()}
        self._core.set_dscp_map(switch, m, peer)

    def results(self) -> Results:
        """Everything the run produced up to now, as DataFrames."""
        return Results.from_core(*self._core.results())

    def summary(self) -> tuple[dict[str, Any], list[float]]:
        """The run's summary up to now (what ``Results.summary`` holds) and each flow's
        mean goodput over the simulated time in Gb/s (``Results.flow_gbps``), without
        building the tables: pandas, numpy and pyarrow stay unloaded (benchmarks)."""
        summary_json, tables = self._core.results()
        summary: dict[str, Any] = json.loads(summary_json)
        kind, data = tables["flows"]["bytes_delivered"][:2]
        if kind != "u64":
            raise ValueError(f"flows.bytes_delivered: unexpected encoding {kind!r}")
        span = float(summary["simulated_s"])
        # at t = 0 nothing was delivered: every goodput is 0, not a division by zero
        return summary, [b * 8 / span / 1e9 if span > 0 else 0.0
                         for (b,) in struct.iter_unpack("<Q", data)]


def _node_args(switch: Any, peer: Any) -> None:
    """A switch's (or host's) name and its peer's name, or None."""
    check_type("switch", switch, isinstance(switch, str), "a switch's or host's name")
    check_type("peer", peer, peer is None or isinstance(peer, str),
               "the name of the node at the port's far end, or None")
