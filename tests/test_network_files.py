"""A user's own fabric and tenants from files (issue 59): ``topology.kind = "graph"``
with ``file`` (NetworkX's node-link JSON, or a CSV of links) and ``tenants_file`` (a
CSV of VMs), with errors that point into the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tenantnet
from helpers import names_the_place
from tenantnet import Scenario, ScenarioError


def node_link(links: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``networkx.node_link_data`` writes (NetworkX 3.4 names the links "edges")."""
    return {"directed": False, "multigraph": False, "graph": {}, "nodes": nodes,
            "edges": links}


TWO_TIER = node_link(
    nodes=[{"id": n} for n in ["core", "tor-a", "tor-b", "a1", "a2", "b1", "b2"]],
    links=[{"source": "tor-a", "target": "core", "rate": "40Gbps"},
           {"source": "tor-b", "target": "core", "rate": 40e9, "delay": 5e-6},
           {"source": "a1", "target": "tor-a"}, {"source": "a2", "target": "tor-a"},
           {"source": "b1", "target": "tor-b"}, {"source": "b2", "target": "tor-b"}])


def graph(tmp_path: Path, file: str, **keys: Any) -> Scenario:
    d = {"simulation": {"duration": "5ms"},
         "topology": {"kind": "graph", "file": file, "link_rate": "10Gbps", **keys},
         "workloads": [{"kind": "long_lived", "src": "a1", "dst": "b1"}]}
    return Scenario.from_dict(d, source=str(tmp_path / "s.json"), base_dir=tmp_path)


def test_a_node_link_fabric_infers_its_hosts_and_keeps_its_rates(tmp_path: Path) -> None:
    (tmp_path / "fabric.json").write_text(json.dumps(TWO_TIER))
    r = tenantnet.run(graph(tmp_path, "fabric.json"), progress=None)
    assert r.summary["hosts"] == 4 and r.summary["switches"] == 3 and r.summary["links"] == 6
    assert "graph, 4 hosts, 3 switches" in r.summary["topology"]
    up = r.links[(r.links["node"] == "tor-a") & (r.links["peer"] == "core")]
    assert float(up["rate_gbps"].iloc[0]) == 40.0
    # the one flow crosses the core (from slow start: a third of 5 ms at 10 Gb/s)
    assert r.flows["bytes_delivered"].iloc[0] > 10e9 / 8 * 0.005 / 3


def test_a_csv_of_links_is_the_same_fabric(tmp_path: Path) -> None:
    (tmp_path / "fabric.json").write_text(json.dumps(TWO_TIER))
    (tmp_path / "links.csv").write_text(
        "a,b,rate,delay\ntor-a,core,40Gbps,\ntor-b,core,40000000000,5us\n"
        "a1,tor-a,,\na2,tor-a,,\nb1,tor-b,,\nb2,tor-b,,\n")
    a = tenantnet.run(graph(tmp_path, "fabric.json"), progress=None)
    b = tenantnet.run(graph(tmp_path, "links.csv"), progress=None)
    assert a.flows.equals(b.flows) and a.links.drop(columns=[]).shape == b.links.shape


def test_a_nodes_type_and_the_scenarios_lists_say_what_is_a_host(tmp_path: Path) -> None:
    d = json.loads(json.dumps(TWO_TIER))
    # a switch with one link (a spare) is a switch by its type
    d["nodes"].append({"id": "spare", "type": "switch"})
    d["edges"].append({"source": "spare", "target": "core"})
    (tmp_path / "f.json").write_text(json.dumps(d))
    r = tenantnet.run(graph(tmp_path, "f.json"), progress=None)
    assert r.summary["hosts"] == 4 and r.summary["switches"] == 4
    (tmp_path / "g.json").write_text(json.dumps(TWO_TIER).replace('"nodes": [{"id": "core"}',
                                                                  '"nodes": [{"id": "core"}'))
    r = tenantnet.run(graph(tmp_path, "g.json", switches=["b2"], hosts=[]), progress=None)
    assert r.summary["hosts"] == 3


@pytest.mark.parametrize(("change", "fragments"), [
    (lambda d: d["edges"].append({"source": "a1", "target": "nowhere"}),
     ["edges[6]", "unknown node \"nowhere\""]),
    (lambda d: d["nodes"].append({"id": "lonely"}), ["nodes[7]", "not connected"]),
    (lambda d: (d["edges"].append({"source": "a1", "target": "tor-b"}),
                d["nodes"][3].update(type="host")), ["nodes[3]", "\"a1\" has 2 links"]),
    (lambda d: d["edges"][0].update(rate="fast"), ["edges[0].rate", "unit"]),
    (lambda d: d.pop("edges"), ["no \"links\" (or \"edges\") list"]),
])
def test_a_bad_fabric_file_is_named_with_the_place_in_it(tmp_path: Path, change: Any,
                                                        fragments: list[str]) -> None:
    d = json.loads(json.dumps(TWO_TIER))
    change(d)
    (tmp_path / "fabric.json").write_text(json.dumps(d))
    with pytest.raises(ScenarioError) as e:
        graph(tmp_path, "fabric.json").validate()
    names_the_place(e.value, tmp_path / "fabric.json", "topology.file", fragments)


def test_a_bad_csv_fabric_names_its_row(tmp_path: Path) -> None:
    (tmp_path / "links.csv").write_text("a,b\ncore,tor\nh1,tor\nh1,core\n")
    with pytest.raises(ScenarioError, match=r"links.csv: row 2, column a: \"h1\" has 2 links"):
        graph(tmp_path, "links.csv", hosts=["h1"]).validate()
    with pytest.raises(ScenarioError, match=r"links.csv: expected at least one host.*one link"):
        graph(tmp_path, "links.csv").validate()


STAR = {"simulation": {"duration": "10ms"}, "topology": {"kind": "star", "hosts": 4},
        "vswitch": {"policy": "static"}}


def with_tenants(tmp_path: Path, rows: str, **keys: Any) -> Scenario:
    (tmp_path / "vms.csv").write_text(rows)
    d = dict(STAR, tenants_file="vms.csv", **keys)
    return Scenario.from_dict(d, source=str(tmp_path / "s.json"), base_dir=tmp_path)


def test_tenants_from_a_file_with_the_hose_guarantee_where_rows_leave_it_out(
        tmp_path: Path) -> None:
    rows = ("tenant,host,vm,guarantee\nweb,h0,,\nweb,h1,,3Gbps\nbulk,h2,bulk-one,2Gbps\n"
            "bulk,h3,,1e9\n")
    sc = with_tenants(tmp_path, rows, tenants=[{"name": "web", "guarantee": "1Gbps"}],
                      workloads=[{"kind": "long_lived", "tenant": "web", "src": "h0",
                                  "dst": "h1"}])
    vms = tenantnet.run(sc, progress=None).vms.set_index("vm")
    assert list(vms.index) == ["web/h0", "web/h1", "bulk-one", "bulk/h3"]
    assert list(vms["guarantee_gbps"]) == [1.0, 3.0, 2.0, 1.0]
    assert list(vms["tenant"]) == ["web", "web", "bulk", "bulk"]


@pytest.mark.parametrize(("rows", "fragments"), [
    ("tenant,host\nweb,h9\n", ["row 1, column host = \"h9\"", "no host"]),
    ("tenant,host\nweb,h0\nweb,h0\n", ["row 2, column vm", "second VM named \"web/h0\""]),
    ("tenant,host,guarantee\nweb,h0,lots\n", ["row 1, column guarantee", "unit"]),
    ("tenant,vm\nweb,x\n", ["no column \"host\""]),
])
def test_a_bad_tenants_file_is_named_by_row_and_column(tmp_path: Path, rows: str,
                                                        fragments: list[str]) -> None:
    with pytest.raises(ScenarioError) as e:
        with_tenants(tmp_path, rows).validate()
    names_the_place(e.value, tmp_path / "vms.csv", "tenants_file", fragments)
