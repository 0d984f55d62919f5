"""``kind = "trace"`` workloads and ``tenantnet flows`` (issue 59): a scenario's flows
written as a trace and replayed give the same results; a trace's values are checked
with errors that name the file, the row and the column."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tenantnet
from helpers import cli, names_the_place
from tenantnet import Scenario, ScenarioError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TABLES = ("flows", "throughput", "queues", "links", "vms", "vm_rates", "queue_stats")


def leaf_spine(duration: str = "300ms") -> dict[str, Any]:
    """The compare example, cut short."""
    d = tomllib.loads((EXAMPLES / "compare-leaf-spine.toml").read_text())
    d["simulation"]["duration"] = duration
    return d


def replaying(d: dict[str, Any], file: str, **keys: Any) -> dict[str, Any]:
    r = dict(d)
    r["workloads"] = [{"kind": "trace", "file": file, **keys}]
    return r


def same_results(a: tenantnet.Results, b: tenantnet.Results) -> None:
    """Every table identical (the flows' workload index aside: a trace is one
    workload), and the summary but for the workloads and the wall time."""
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        if name == "flows":
            x, y = x.drop(columns=["workload"]), y.drop(columns=["workload"])
        assert x.equals(y), name
    drop = ("wall_s", "workloads")
    assert ({k: v for k, v in a.summary.items() if k not in drop}
            == {k: v for k, v in b.summary.items() if k not in drop})


@pytest.mark.parametrize("name", ["flows.parquet", "flows.csv", "flows.csv.gz"])
def test_the_compare_example_replayed_from_its_flows_gives_the_same_tables(
        tmp_path: Path, name: str) -> None:
    d = leaf_spine()
    original = Scenario.from_dict(d, base_dir=tmp_path)
    n = original.write_trace(tmp_path / name)
    assert n > 300
    a = tenantnet.run(original, progress=None)
    b = tenantnet.run(Scenario.from_dict(replaying(d, name), base_dir=tmp_path), progress=None)
    assert len(a.flows) == n and a.summary["packets_delivered"] > 10_000
    same_results(a, b)


def test_the_demo_replayed_from_its_flows_vms_to_plain_hosts(tmp_path: Path) -> None:
    d = Scenario.builtin("demo").data()
    d["simulation"]["duration"] = "200ms"
    original = Scenario.from_dict(d, base_dir=tmp_path)
    original.write_trace(tmp_path / "demo.parquet")
    t = pq.read_table(tmp_path / "demo.parquet").to_pydict()
    assert set(t["dst"]) == {"h2", "h3"}  # hosts without VMs: sinks outside the tenants
    same_results(tenantnet.run(original, progress=None),
                 tenantnet.run(Scenario.from_dict(replaying(d, "demo.parquet"),
                                                  base_dir=tmp_path), progress=None))


@pytest.mark.parametrize("protocol, written", [("tcp", "newreno"), ("newreno", "newreno"),
                                               ("cubic", "cubic"), ("dctcp", "dctcp")])
@pytest.mark.parametrize("profile", ["htsim", "linux"])
def test_a_trace_names_the_congestion_control_that_ran(
        tmp_path: Path, protocol: str, written: str, profile: str) -> None:
    """`tcp` means NewReno under htsim and CUBIC under linux: a trace writes what ran, so
    that NewReno flows under the linux profile are not replayed as CUBIC."""
    d = leaf_spine("100ms")
    d["transport"] = {**d.get("transport", {}), "protocol": protocol, "profile": profile}
    if protocol == "tcp" and profile == "linux":
        written = "cubic"
    original = Scenario.from_dict(d, base_dir=tmp_path)
    original.write_trace(tmp_path / "t.parquet")
    assert set(pq.read_table(tmp_path / "t.parquet")["protocol"].to_pylist()) == {written}
    same_results(tenantnet.run(original, progress=None),
                 tenantnet.run(Scenario.from_dict(replaying(d, "t.parquet"),
                                                  base_dir=tmp_path), progress=None))


def test_rows_in_any_order_are_flows_in_the_order_of_their_ids(tmp_path: Path) -> None:
    d = leaf_spine("100ms")
    t = Scenario.from_dict(d).trace()
    pq.write_table(t, tmp_path / "in_order.parquet")
    shuffled = t.take(pa.array(list(reversed(range(t.num_rows)))))
    pq.write_table(shuffled, tmp_path / "shuffled.parquet")
    runs = [tenantnet.run(Scenario.from_dict(replaying(d, f), base_dir=tmp_path),
                          progress=None) for f in ("in_order.parquet", "shuffled.parquet")]
    same_results(*runs)
    # without ids the file's order is the flows' order
    pq.write_table(shuffled.drop(["id"]), tmp_path / "no_ids.parquet")
    r = tenantnet.run(Scenario.from_dict(replaying(d, "no_ids.parquet"), base_dir=tmp_path),
                      progress=None)
    assert list(r.flows["start_s"]) == list(reversed(list(runs[0].flows["start_s"])))


STAR = {
    "simulation": {"duration": "20ms"},
    "topology": {"kind": "star", "hosts": 4},
    "tenants": [{"name": "a", "guarantee": "1Gbps", "hosts": ["h0", "h1"]},
                {"name": "b", "guarantee": "1Gbps", "hosts": ["h2", "h3"]}],
}


def star_trace(tmp_path: Path, rows: str, file: str = "t.csv", **keys: Any) -> Scenario:
    (tmp_path / file).write_text(rows)
    d = dict(STAR, workloads=[{"kind": "trace", "file": file, "tenant": "a", **keys}])
    return Scenario.from_dict(d, source=str(tmp_path / "s.json"), base_dir=tmp_path)


def test_units_shift_stretch_and_load_scale(tmp_path: Path) -> None:
    rows = "start,src,dst,size,stop\n0.001,h0,h1,10KB,\n2ms,h1,h0,3000,\n0,h0,h1,,5ms\n"
    flows = tenantnet.run(star_trace(tmp_path, rows), progress=None).flows
    assert list(flows["start_s"]) == [0.001, 0.002, 0.0]
    assert list(flows["size_bytes"].astype("Int64")[:2]) == [10_000, 3_000]
    assert flows["size_bytes"].isna().iloc[2] and flows["stop_s"].iloc[2] == 0.005
    scaled = tenantnet.run(star_trace(tmp_path, rows, start="1ms", time_scale=2.0,
                                      load_scale=1.5), progress=None).flows
    assert list(scaled["start_s"]) == pytest.approx([0.003, 0.005, 0.001], abs=1e-15)
    assert list(scaled["size_bytes"].astype("Int64")[:2]) == [15_000, 4_500]
    assert scaled["stop_s"].iloc[2] == pytest.approx(0.011, abs=1e-15)


def test_per_row_tenant_dscp_and_protocol(tmp_path: Path) -> None:
    rows = ("start,src,dst,size,tenant,dscp,protocol\n"
            "0,h0,h1,1000,a,10,dctcp\n0,h2,h3,1000,b,,tcp\n0,h0,h1,1000,,3,\n")
    r = tenantnet.run(star_trace(tmp_path, rows), progress=None)
    f = r.flows
    assert list(f["tenant"]) == ["a", "b", "a"]
    assert list(f["protocol"]) == ["dctcp", "tcp", "tcp"]
    back = star_trace(tmp_path, rows).trace().to_pydict()
    assert back["dscp"] == [10, 0, 3]
    assert back["src"] == ["h0", "h2", "h0"]


@pytest.mark.parametrize(("rows", "fragments"), [
    ("start,src,size\n0,h0,1000\n", ["no column \"dst\"", "has start, src, size"]),
    ("start,src,dst,size\n0,h0,h1,1000\n0,h0,h9,1000\n",
     ["row 2, column dst = \"h9\"", "no host"]),
    ("start,src,dst,size\n0,h0,h1,-5\n", ["row 1, column size = -5", "positive"]),
    ("start,src,dst,size\n0,h0,h1,5 parsecs\n", ["row 1, column size", "unit"]),
    ("start,src,dst,size\n3 fortnights,h0,h1,5\n", ["row 1, column start", "unit"]),
    ("start,src,dst,size\n0,h0,h2,1000\n", ["row 1, column dst = \"h2\"",
                                            "another tenant's VMs"]),
    ("start,src,dst,size,tenant\n0,h0,h1,1000,c\n", ["row 1, column tenant = \"c\"",
                                                     "expected one of"]),
    ("start,src,dst,size\n0,h0,h0,1000\n", ["row 1, column dst", "apart from src"]),
    ("start,src,dst,size,id\n0,h0,h1,1,7\n0,h0,h1,1,7\n", ["row 2, column id = 7",
                                                          "same id as row 1"]),
    ("start,src,dst,size,protocol\n0,h0,h1,1,udp\n", ["row 1, column protocol = \"udp\"",
                                                      "cbr or on_off"]),
    ("start,src,dst,size,stop\n0.002,h0,h1,,0.001\n", ["row 1, column stop",
                                                       "after start"]),
])
def test_a_bad_row_is_named_by_file_row_and_column(tmp_path: Path, rows: str,
                                                   fragments: list[str]) -> None:
    sc = star_trace(tmp_path, rows)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    names_the_place(e.value, tmp_path / "t.csv", "workloads[0].file", fragments)


def test_the_command_line_names_a_missing_file_and_writes_nothing(tmp_path: Path) -> None:
    text = tmp_path / "s.toml"
    text.write_text('[simulation]\nduration = "1ms"\n[topology]\nkind = "star"\nhosts = 4\n'
                    '[[workloads]]\nkind = "trace"\nfile = "nowhere.parquet"\n')
    p = cli("run", str(text), "-o", str(tmp_path / "out"))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "nowhere.parquet: no such file" in p.stderr and "workloads[0].file" in p.stderr
    assert not (tmp_path / "out").exists()


def test_flows_command_writes_a_trace_and_refuses_what_a_trace_cannot_say(
        tmp_path: Path) -> None:
    out = tmp_path / "f.parquet"
    p = cli("flows", str(EXAMPLES / "compare-leaf-spine.toml"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    t = pq.read_table(out)
    assert t.column_names == ["id", "start", "src", "dst", "size", "stop", "tenant", "dscp",
                              "protocol"]
    again = cli("flows", str(EXAMPLES / "compare-leaf-spine.toml"), "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    rr = tmp_path / "rr.toml"
    rr.write_text('[simulation]\nduration = "1ms"\n[topology]\nkind = "star"\nhosts = 4\n'
                  '[[workloads]]\nkind = "request_response"\nsrc = "h0"\ndst = "h1"\n'
                  'size = "10KB"\nqueries = 2\n')
    p = cli("flows", str(rr), "-o", str(tmp_path / "rr.csv"))
    assert p.returncode == 2 and "gate" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "rr.csv").exists()


def test_the_estimate_counts_the_rows(tmp_path: Path) -> None:
    rows = "start,src,dst,size\n" + "".join(f"{i * 1e-6},h0,h1,1000\n" for i in range(5000))
    fp = star_trace(tmp_path, rows).validate()
    assert any("flows of workloads[0]" in p.what and p.key == "workloads[0].file"
               for p in fp.parts), fp.parts
    # refused before it is read, by its size: about 5000 rows, 5 MB of flows
    with pytest.raises(ScenarioError, match=r"t.csv: about [0-9,]+ rows: their flows would "
                                            r"need .* more than the memory budget"):
        star_trace(tmp_path, rows).validate(memory_budget="1MB")
    table = pa.table({"start": [i * 1e-6 for i in range(5000)], "src": ["h0"] * 5000,
                      "dst": ["h1"] * 5000, "size": [1000] * 5000})
    pq.write_table(table, tmp_path / "t.parquet")
    sc = Scenario.from_dict(dict(STAR, workloads=[{"kind": "trace", "file": "t.parquet",
                                                   "tenant": "a"}]), base_dir=tmp_path)
    with pytest.raises(ScenarioError, match="about 5,000 rows"):
        sc.validate(memory_budget="4MB")
    # past that check, the core's estimate counts the rows with the rest of the run
    fp = sc.validate()
    assert any(p.key == "workloads[0].file" for p in fp.parts)


def test_parquet_with_typed_columns(tmp_path: Path) -> None:
    t = pa.table({"start": pa.array([0.0, 0.001]), "src": pa.array(["h0", "h1"]),
                  "dst": pa.array(["h1", "h0"]).dictionary_encode(),
                  "size": pa.array([1000, None], type=pa.int32())})
    pq.write_table(t, tmp_path / "t.parquet")
    d = dict(STAR, workloads=[{"kind": "trace", "file": "t.parquet", "tenant": "a"}])
    f = tenantnet.run(Scenario.from_dict(d, base_dir=tmp_path), progress=None).flows
    assert len(f) == 2 and f["size_bytes"].isna().iloc[1]
