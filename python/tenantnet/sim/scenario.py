"""Scenarios: load them from a TOML file, TOML text or a dictionary, and check them.

The Rust core parses and validates; this module only carries the text and where it
came from, so errors name the right file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tomllib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..errors import SEED_MAX, ScenarioError, check_type, is_whole
from .simulation import Footprint, Simulation
from .tables import Encoded, scenario_tables, trace_frame, write_table

if TYPE_CHECKING:
    from .simulation import Footprint, Simulation

TRANSPORT_ENV = "TENANTNET_TRANSPORT_PROFILE"
"""When set (``htsim`` or ``linux``), every scenario built in this process and in the
workers it starts runs with ``transport.profile`` set to it, its other transport keys
kept (so a paper's own min RTO stays, as keys beside a profile always win): how
``tenantnet reproduce --transport`` runs a reproduction under another transport
without a change to its code. A scenario's name then says so, so that its run's
summary records it. See :func:`transport_profile`."""


TIES_ENV = "TENANTNET_TIES"
"""When set (``scheduled`` or ``partitioned``), every scenario built in this process and
in the workers it starts runs with ``simulation.ties`` set to it: how ``tenantnet
reproduce --ties`` runs a reproduction under the other rule for simultaneous events
without a change to its code. A scenario's name then says so, as with
:data:`TRANSPORT_ENV`."""

THREADS_ENV = "TENANTNET_THREADS"
"""When set (a whole number from 1 to 4096), the threads every simulation built in this
process may use (:meth:`Simulation.set_threads`), unless it is given its own; it wins
over :data:`CORES_ENV`."""

CORES_ENV = "TENANTNET_CORES"
"""Set by the worker pool of ``compare``, ``sweep``, ``reproduce`` and ``advise``
(:mod:`tenantnet.jobs.pool`) for each run it starts: how many of the machine's cores
the run's simulations may take when their threads are chosen for them, its share of
the cores the runs beside it leave (``Simulation.set_threads(None, cores=N)``)."""


def _whole_env(var: str, what: str) -> int | None:
    """The whole number from 1 to 4096 in variable `var` (`what` it counts), or None
    when it is not set."""
    text = os.environ.get(var)
    if text is None:
        return None
    if not text.strip().isdigit() or not 1 <= int(text) <= 4096:
        raise ScenarioError(f"{var} = {text!r}: expected a whole number of {what} "
                            "from 1 to 4096")
    return int(text)


def threads_from_env() -> int | None:
    """:data:`THREADS_ENV`'s number of threads, or None when it is not set."""
    return _whole_env(THREADS_ENV, "threads")


def cores_from_env() -> int | None:
    """:data:`CORES_ENV`'s share of cores, or None when it is not set."""
    return _whole_env(CORES_ENV, "cores")


ENV_KEYS = {TRANSPORT_ENV: ("transport", "profile"), TIES_ENV: ("simulation", "ties")}
"""The environment variables that set a key of every scenario: (table, key) of each."""


@contextmanager
def env_setting(var: str, value: str | None) -> Iterator[None]:
    """Within the block, every scenario built (here and in the workers started here)
    has the key :data:`ENV_KEYS` gives ``var`` set to ``value``; None changes nothing."""
    before = os.environ.get(var)
    if value is not None:
        os.environ[var] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = before


def transport_profile(profile: str | None) -> AbstractContextManager[None]:
    """Within the block, every scenario built (here and in the workers started here)
    runs under ``transport.profile = profile`` (:data:`TRANSPORT_ENV`); None changes
    nothing."""
    return env_setting(TRANSPORT_ENV, profile)


MemoryBudget = int | str | None
"""Bytes (an int), a size such as ``"16GiB"``, or None for the default (8 GiB)."""


def memory_budget_bytes(budget: MemoryBudget, source: str = "memory_budget") -> int | None:
    """``budget`` in bytes (None stays None); raises :class:`ScenarioError` naming
    ``source`` if it is not a positive size."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, int | str):
        raise ScenarioError(f"{source} = {budget!r}: expected a size such as \"16GiB\"")
    if isinstance(budget, str):
        try:
            budget = _core.parse_size(budget)
        except ValueError as e:
            raise ScenarioError(f"{source} = {e}") from None
    if budget <= 0 or budget >= 2**64:
        raise ScenarioError(f"{source} = {budget}: expected a positive size such as \"16GiB\"")
    return budget


def _key(path: str, k: object) -> str:
    name = _core.quote_key(str(k))
    return f"{path}.{name}" if path else name


def _check_plain(v: object, path: str, source: str) -> None:
    """Raises :class:`ScenarioError` at the first value a scenario cannot hold: a
    non-finite number, or anything but tables, lists, strings, numbers and booleans."""
    if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v <= SEED_MAX:
        raise ScenarioError(f"{source}: {path} = {v}: expected a whole number from "
                            f"{-2**63} to {SEED_MAX} (a scenario's integers)", source, path,
                            str(v))
    if isinstance(v, float) and not math.isfinite(v):
        raise ScenarioError(f"{source}: {path} = {v}: expected a finite number", source, path,
                            str(v))
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{source}: {_key(path, k)}: keys must be strings, "
                                    f"not {type(k).__name__}", source, _key(path, k))
            _check_plain(x, _key(path, k), source)
    elif isinstance(v, list | tuple):
        for i, x in enumerate(v):
            _check_plain(x, f"{path}[{i}]", source)
    elif not isinstance(v, str | int | float | bool):
        raise ScenarioError(f"{source}: {path} = {v!r}: expected a table, list, string, "
                            f"number or boolean, not {type(v).__name__}", source, path)


@dataclass(frozen=True)
class Scenario:
    """Scenario text plus where it came from."""

    text: str
    source: str = "<scenario>"
    base_dir: Path = field(default_factory=lambda: Path("."))
    fmt: str = "toml"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Scenario(text = {type(self.text).__name__}): expected the "
                            "scenario's text; for a dictionary use Scenario.from_dict, for a "
                            "file Scenario.from_file")
        if self.fmt not in ("toml", "json"):
            raise TypeError(f"Scenario(fmt = {self.fmt!r}): expected \"toml\" or \"json\"")
    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Reads a scenario file (``.toml``, or ``.json``)."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioError(f"{p}: not a text file in UTF-8 (byte {e.start} is "
                                f"0x{e.object[e.start]:02x})", str(p)) from None
        except OSError as e:
            raise ScenarioError(f"{p}: cannot read the scenario: {e.strerror}", str(p)) from None
        fmt = "json" if p.suffix == ".json" else "toml"
        if fmt == "json":
            # JSON's numbers have no size limit: an integer beyond 64 bits would reach the
            # core as a float, shown as another number; named here as written
            parsed = None
            with contextlib.suppress(ValueError):  # the core says what is wrong with it
                parsed = json.loads(text, parse_float=lambda x: 0.0)
            _check_plain(parsed, "", str(p))
        return cls(text, str(p), p.parent, fmt)

    @classmethod
    def from_toml(cls, text: str, source: str = "<toml>", base_dir: str | Path = ".") -> Scenario:
        """A scenario from TOML text."""
        return cls(text, source, Path(base_dir), "toml")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>",
                  base_dir: str | Path = ".") -> Scenario:
        """A scenario from a dictionary shaped like the TOML file."""
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}: expected a dictionary of scenario keys, not "
                                f"{type(data).__name__}", source)
        _check_plain(data, "", source)
        return cls(json.dumps(data), source, Path(base_dir), "json")

    @classmethod
    def builtin(cls, name: str) -> Scenario:
        """One of the scenarios shipped in ``tenantnet/scenarios`` (``demo``, ``permutation``)."""
        ref = resources.files("tenantnet") / "scenarios" / f"{name}.toml"
        if not ref.is_file():
            raise ScenarioError(f"no built-in scenario named {name!r}")
        return cls(ref.read_text(encoding="utf-8"), f"<builtin:{name}>", Path("."), "toml")

    def data(self) -> dict[str, Any]:
        """The scenario as a dictionary."""
        try:
            d = json.loads(self.text) if self.fmt == "json" else tomllib.loads(self.text)
        except (ValueError, tomllib.TOMLDecodeError) as e:
            self._core(None, None)  # the core says what is wrong as validate does
            raise ScenarioError(f"{self.source}: not valid {self.fmt.upper()}: {e}",
                                self.source) from None
        if not isinstance(d, dict):
            raise ScenarioError(f"{self.source}: expected a table of scenario keys", self.source)
        return d

    def with_overrides(self, **sections: dict[str, Any]) -> Scenario:
        """A copy with keys replaced, e.g. ``with_overrides(simulation={"seed": 2})``."""
        d = self.data()
        for sec, kv in sections.items():
            check_type(sec, kv, isinstance(kv, dict), f"a dictionary of [{sec}]'s keys")
            cur = d.setdefault(sec, {})
            if not isinstance(cur, dict):
                raise ScenarioError(f"{self.source}: {sec} = {cur!r}: expected a table",
                                    self.source, sec)
            cur.update(kv)
        _check_plain(d, "", self.source)
        return Scenario(json.dumps(d), self.source, self.base_dir, "json")

    def validate(self, memory_budget: MemoryBudget = None, seed: int | None = None,
                 max_events: float | None = None) -> Footprint:
        """Raises :class:`ScenarioError` if the scenario cannot run (with ``seed`` in
        place of ``simulation.seed``, if given), or if its run would need more than
        ``memory_budget`` (default 8 GiB) or ``max_events`` events (default 10^12,
        about two days); returns the estimate."""
        return Footprint.of(self._core(seed, memory_budget, max_events))

    def _core(self, seed: int | None, memory_budget: MemoryBudget,
              max_events: float | None = None) -> _core.Simulation:
        if seed is not None and not is_whole(seed, 0, SEED_MAX):
            raise ScenarioError(f"seed = {seed!r}: expected a whole number from 0 to "
                                f"{SEED_MAX}")
        budget = memory_budget_bytes(memory_budget)
        if max_events is not None and not (isinstance(max_events, int | float)
                                           and not isinstance(max_events, bool)
                                           and math.isfinite(max_events) and max_events > 0):
            raise ScenarioError(f"max_events = {max_events!r}: expected a positive number")
        sc = self._with_settings_from_env()
        try:
            return _core.Simulation(sc.text, sc.source, str(sc.base_dir), sc.fmt, seed,
                                    budget, None if max_events is None else float(max_events),
                                    sc.tables(budget))
        except _core.ScenarioError as e:
            raise ScenarioError(*e.args) from None

    def tables(self, budget: int | None = None) -> dict[str, Encoded] | None:
        """The files this scenario names (traces, matrices, a CSV fabric, its
        ``tenants_file``), read with Arrow for the core (None if it names none); a
        trace whose flows could not fit ``budget`` bytes is refused before it is read."""
        if not any(w in self.text for w in ("trace", "matrix", "file")):  # most: no parse
            return None
        try:
            data = json.loads(self.text) if self.fmt == "json" else tomllib.loads(self.text)
        except (ValueError, tomllib.TOMLDecodeError):
            return None  # the core says what is wrong
        if not isinstance(data, dict):
            return None
        return scenario_tables(data, self.base_dir, self.source, budget) or None

    def _with_settings_from_env(self) -> Scenario:
        """This scenario, with the keys :data:`ENV_KEYS`' variables set, if any are."""
        sc = self
        for var, (table, key) in ENV_KEYS.items():
            value = os.environ.get(var)
            if not value:
                continue
            d = sc.data()
            t = d.setdefault(table, {})
            if not isinstance(t, dict):
                continue  # the core names the bad table
            t[key] = value
            # the name says so, so that every summary and report of the run records it
            how = f"{table}.{key} = {value!r} from {var}"
            if isinstance(d.get("name"), str):
                d["name"] = f"{d['name']} ({how})"
            sc = Scenario(json.dumps(d), f"{sc.source} ({how})", sc.base_dir, "json")
        return sc

    def flows(self) -> Any:
        """The flows the scenario generates (a DataFrame like ``flows.parquet``), without
        running it."""
        return self.simulation().results().flows

    def trace(self, seed: int | None = None) -> Any:
        """The flows the scenario's workloads generate (with ``seed`` in place of
        ``simulation.seed``), as an Arrow table in the ``trace`` format: a ``trace``
        workload replaying it makes the same flows, so the same results. Raises
        :class:`ScenarioError` with the first flow a trace cannot express (one behind a
        request-response gate, UDP, PIAS, a workload's own transport keys)."""
        core = self._core(seed, None)
        try:
            cols = core.trace_table()
        except ValueError as e:
            raise ScenarioError(f"{self.source}: cannot write its flows as a trace: {e}",
                                self.source) from None
        return trace_frame(cols)

    def write_trace(self, path: str | Path, seed: int | None = None) -> int:
        """Writes :meth:`trace` to ``path`` (CSV, ``.csv.gz`` or Parquet, by its name);
        returns the number of flows."""
        table = self.trace(seed)
        write_table(table, Path(path))
        return int(table.num_rows)

    def simulation(self, seed: int | None = None, memory_budget: MemoryBudget = None,
                   max_events: float | None = None) -> Simulation:
        """A fresh simulation of this scenario at time 0; ``seed`` replaces
        ``simulation.seed`` (0 to 2^63 - 1), ``memory_budget`` bounds its memory and
        ``max_events`` its estimated events (see :meth:`validate`)."""
        sim = Simulation(self._core(seed, memory_budget, max_events))
        threads = threads_from_env()
        if threads is not None:
            return sim.set_threads(threads)
        cores = cores_from_env()
        return sim if cores is None else sim.set_threads(None, cores=cores)


def schema() -> dict[str, Any]:
    """The JSON Schema of the scenario format."""
    return dict(json.loads(_core.schema()))
