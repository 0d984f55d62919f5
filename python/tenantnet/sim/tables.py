"""The tables a scenario names by file (a ``trace`` workload's flow records, a
``matrix`` workload's traffic matrices), read with Arrow, and a scenario's flows
written as a trace (``tenantnet flows``).

Arrow reads CSV (also gzip-compressed) and Parquet; each column goes to the core as
numbers or as dictionary-encoded text, and the core checks every value against the
network and the tenants (an error names the file, the row and the column). The trace
format is in ``docs/reference/files.md``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..errors import ScenarioError

if TYPE_CHECKING:
    import pyarrow as pa

TEXT_COLUMNS = ("src", "dst", "tenant", "protocol", "a", "b", "source", "target", "host", "vm")
"""Columns that hold names: read as text even where every value looks like a number."""

CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
PARQUET_SUFFIXES = (".parquet", ".pq")

MISSING = 2**32 - 1
"""A missing text value's code (the core's ``inputs::MISSING``)."""

Encoded = tuple[str, int, dict[str, tuple[Any, ...]]]
"""A table as the core takes it: (path for errors, rows, {column: encoded})."""


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    raise ScenarioError(f"{path}: expected a CSV ({', '.join(CSV_SUFFIXES)}) or Parquet "
                        f"({', '.join(PARQUET_SUFFIXES)}) file", str(path))


def read_table(path: Path) -> pa.Table:
    """The table in ``path`` (CSV or Parquet, by its name); :class:`ScenarioError`
    naming the file if it cannot be read."""
    # deferred for start-up: loads pyarrow
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    kind = _kind(path)
    try:
        if kind == "parquet":
            return pq.read_table(path)
        delimiter = "\t" if ".tsv" in path.name.lower() else ","
        text = {c: pa.string() for c in TEXT_COLUMNS}
        return pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                              convert_options=pacsv.ConvertOptions(
                                  column_types=text, strings_can_be_null=True))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file", str(path)) from None
    except (OSError, pa.ArrowException) as e:
        raise ScenarioError(f"{path}: cannot read it as {kind.upper()}: {e}", str(path)) from None


def _encode_column(path: Path, name: str, col: pa.ChunkedArray) -> tuple[Any, ...]:
    # deferred for start-up: loads pyarrow
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        enc = pc.dictionary_encode(col).combine_chunks()
        codes = pc.fill_null(enc.indices.cast(pa.int64()), MISSING).to_numpy()
        labels = [str(x) for x in enc.dictionary.to_pylist()]
        return ("str", codes.astype("<u4").tobytes(), labels)
    if pa.types.is_null(t):  # every value missing
        col = col.cast(pa.float64())
        t = col.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        f = col.cast(pa.float64()).combine_chunks() if col.num_chunks != 1 else \
            col.chunk(0).cast(pa.float64())
        missing = f.is_null().to_numpy(zero_copy_only=False).astype(np.uint8)
        vals = pc.fill_null(f, 0.0).to_numpy(zero_copy_only=False).astype("<f8")
        return ("opt_f64", vals.tobytes(), missing.tobytes())
    raise ScenarioError(f"{path}: column {name!r} holds {t}; expected numbers or text",
                        str(path), name)


def _give_back_memory() -> None:
    """Returns what reading a table left free to the system: Arrow's pool keeps
    freed blocks for reuse, and glibc's heap keeps freed memory below its top (a
    million-row trace leaves about 100 MB that the flows would otherwise sit above)."""
    # deferred for start-up: loads pyarrow
    import ctypes
    import ctypes.util

    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    libc = ctypes.util.find_library("c")
    if libc is not None and hasattr(ctypes.CDLL(libc), "malloc_trim"):
        ctypes.CDLL(libc).malloc_trim(0)


@functools.lru_cache(maxsize=8)
def _encoded(path: Path, _stamp: tuple[int, int]) -> Encoded:
    table = read_table(path)
    cols = {name: _encode_column(path, name, table.column(name))
            for name in table.column_names}
    rows = table.num_rows
    del table
    _give_back_memory()
    return (str(path), rows, cols)


def rows_before_reading(path: Path) -> int:
    """About how many rows ``path`` holds, without reading it: a Parquet file's own
    count, a CSV's size over its first lines' mean length (a compressed file's size
    times 8, gzip's usual ratio on flow records)."""
    # deferred for start-up: loads pyarrow
    import pyarrow.parquet as pq

    if _kind(path) == "parquet":
        return int(pq.ParquetFile(path).metadata.num_rows)
    size = path.stat().st_size
    if path.name.lower().endswith(".gz"):
        return size * 8 // 20
    with path.open("rb") as f:
        head = f.read(1 << 16).splitlines()[1:-1]
    per_row = max(1, sum(len(x) + 1 for x in head) // max(1, len(head)))
    return size // per_row


def check_trace_size(path: Path, budget: int | None) -> None:
    """Refuses, before reading it, a trace whose flows could not fit ``budget`` bytes
    (default the core's, 8 GiB) by the memory estimate's cost of a flow."""
    # deferred for start-up: loads pyarrow
    import pyarrow as pa

    per_flow, default = _core.flow_memory()
    budget = default if budget is None else budget
    try:
        rows = rows_before_reading(path)
    except (OSError, pa.ArrowException):
        return  # reading it says what is wrong with it
    need = rows * per_flow
    if need > budget:
        raise ScenarioError(
            f"{path}: about {rows:,} rows: their flows would need about "
            f"{need / 2**30:.1f} GiB of memory, more than the memory budget of "
            f"{budget / 2**30:.1f} GiB (raise it with --memory-budget)", str(path))


def encode(path: Path) -> Encoded:
    """The table in ``path`` as the core takes it, read once while the file is
    unchanged (a comparison's runs share it)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file", str(path)) from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read it: {e.strerror}", str(path)) from None
    return _encoded(path.resolve(), (st.st_mtime_ns, st.st_size))


def _named_files(w: dict[str, Any], i: int) -> list[tuple[str, str, bool]]:
    """(file, key, whether it is a trace) of each file workload ``w`` (number ``i``)
    names: a trace's, a matrix's or each of a matrix series'."""
    key = f"workloads[{i}]"
    trace = w.get("kind") == "trace"
    files = []
    if w.get("kind") in ("trace", "matrix"):
        files.append((w.get("file"), f"{key}.file", trace))
    if w.get("kind") == "matrix" and isinstance(w.get("series"), list):
        files += [(st.get("file"), f"{key}.series[{j}].file", False)
                  for j, st in enumerate(w["series"]) if isinstance(st, dict)]
    return [(f, k, t) for f, k, t in files if isinstance(f, str)]


def scenario_tables(data: dict[str, Any], base_dir: Path, source: str,
                    budget: int | None = None) -> dict[str, Encoded]:
    """The tables scenario ``data`` names by file (a ``trace`` workload's ``file``, a
    ``matrix`` workload's ``file`` or ``series``, a graph's CSV of links, the
    ``tenants_file``), read relative to ``base_dir``; by
    the file as the scenario writes it. A value of the wrong type is left for the core
    to name. A trace too large for ``budget`` (bytes) is refused before it is read."""
    out: dict[str, Encoded] = {}
    named: list[tuple[str, str, bool]] = []
    topo = data.get("topology")
    if isinstance(topo, dict) and topo.get("kind") == "graph":
        f = topo.get("file")
        if isinstance(f, str) and not f.lower().endswith(".json"):  # the core reads JSON
            named.append((f, "topology.file", False))
    if isinstance(data.get("tenants_file"), str):
        named.append((data["tenants_file"], "tenants_file", False))
    workloads = data.get("workloads")
    for i, w in enumerate(workloads if isinstance(workloads, list) else []):
        if isinstance(w, dict):
            named += _named_files(w, i)
    for file, key, trace in named:
        if file in out:
            continue
        try:
            if trace:
                check_trace_size(base_dir / file, budget)
            out[file] = encode(base_dir / file)
        except ScenarioError as e:
            raise ScenarioError(f"{e.args[0]} ({key} of {source})", source, key,
                                repr(file)) from None
    return out


def trace_frame(cols: dict[str, tuple[Any, ...]]) -> pa.Table:
    """The core's ``trace`` table (``Simulation.trace_table``) as an Arrow table, with
    the column types a trace file keeps: ``id``, ``size`` and ``dscp`` whole numbers,
    ``start`` and ``stop`` seconds, the names text."""
    # deferred for start-up: loads pyarrow
    import numpy as np
    import pyarrow as pa

    arrays: dict[str, pa.Array] = {}
    for name, enc in cols.items():
        kind = enc[0]
        if kind == "u64":
            arrays[name] = pa.array(np.frombuffer(enc[1], dtype="<u8").astype(np.int64))
        elif kind == "f64":
            arrays[name] = pa.array(np.frombuffer(enc[1], dtype="<f8"))
        elif kind in ("opt_f64", "opt_u64"):
            dtype = "<f8" if kind == "opt_f64" else "<u8"
            vals = np.frombuffer(enc[1], dtype=dtype)
            mask = np.frombuffer(enc[2], dtype=np.uint8).astype(bool)
            vals = vals if kind == "opt_f64" else vals.astype(np.int64)
            arrays[name] = pa.array(vals, mask=mask)
        else:
            codes = np.frombuffer(enc[1], dtype="<u4")
            labels = np.array(enc[2], dtype=object)
            arrays[name] = pa.array(labels[codes] if len(labels) else [], type=pa.string())
    return pa.table(arrays)


def write_table(table: pa.Table, path: Path) -> None:
    """Writes ``table`` to ``path`` as CSV (gzip-compressed for ``.gz``) or Parquet, by
    its name: whole, or not at all (a partial file never stays)."""
    # deferred for start-up: loads pyarrow
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    kind = _kind(path)
    name = path.name.lower()
    tmp = path.with_name(f".{path.name}.part")
    try:
        if kind == "parquet":
            pq.write_table(table, tmp)
        else:
            opts = pacsv.WriteOptions(delimiter="\t" if ".tsv" in name else ",")
            codec = "gzip" if name.endswith(".gz") else None
            with pa.output_stream(str(tmp), compression=codec) as out:
                pacsv.write_csv(table, out, write_options=opts)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
