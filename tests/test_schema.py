"""The JSON Schema agrees with the parser."""

import json
import tomllib
from importlib import resources

import jsonschema
import pytest

import tenantnet
from helpers import cli


@pytest.fixture(scope="module")
def schema() -> dict:
    p = cli("schema")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def builtin(name: str) -> dict:
    return tomllib.loads((resources.files("tenantnet") / "scenarios" / f"{name}.toml").read_text())


@pytest.mark.parametrize("name", ["demo", "permutation", "permutation-dwrr8"])
def test_builtin_scenarios_validate_against_the_schema(schema: dict, name: str) -> None:
    jsonschema.validate(builtin(name), schema)
    tenantnet.Scenario.builtin(name).validate()


def test_schema_rejects_what_the_parser_rejects(schema: dict) -> None:
    d = builtin("demo")
    d["topology"]["linkrate"] = "10Gbps"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, schema)
    with pytest.raises(tenantnet.ScenarioError):
        tenantnet.Scenario.from_dict(d).validate()
    d = builtin("demo")
    d["topology"]["link_rate"] = "10Gbs"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, schema)
    d = builtin("demo")
    d["workloads"][1]["colour"] = "red"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, schema)


def test_every_workload_kind_is_in_the_schema(schema: dict) -> None:
    text = json.dumps(schema)
    for kind in ["long_lived", "fixed", "permutation", "incast", "poisson", "cbr", "on_off"]:
        assert f'"{kind}"' in text


def test_defaults_are_the_real_ones_never_null(schema: dict) -> None:
    """Optional keys the simulator fills carry the value it uses; no key says its
    default is null (issue 11, item 26)."""
    text = json.dumps(schema)
    assert '"default": null' not in text
    nulls = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            d = node.get("default")
            if isinstance(d, dict) and any(v is None for v in d.values()):
                nulls.append(path)
            for k, v in node.items():
                walk(v, f"{path}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")
    walk(schema, "")
    assert nulls == []
    t = schema["$defs"]["TransportSpec"]["properties"]
    assert {k: t[k]["default"] for k in ("mss", "header", "ack_size", "init_cwnd", "min_rto",
                                         "max_rto", "protocol")} == {
        "mss": "1460B", "header": "40B", "ack_size": "64B", "init_cwnd": 10,
        "min_rto": "200ms", "max_rto": "120s", "protocol": "tcp"}
    assert schema["properties"]["transport"]["default"]["profile"] == "linux"
    assert schema["properties"]["transport"]["default"]["dctcp_g"] == 0.0625
    m = schema["$defs"]["MbfqSpec"]["properties"]
    assert m["interval"]["default"] == "100ms" and m["ramp"]["default"] == [1.2, 1.5]
    assert schema["properties"]["vswitch"]["default"]["mbfq"]["floor"] == "10Mbps"
