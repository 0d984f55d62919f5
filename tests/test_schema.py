"""The JSON Schema agrees with the parser."""

import json
import subprocess
import sys
from importlib import resources

import jsonschema
import pytest
import tomllib

import tenantnet


@pytest.fixture(scope="module")
def schema() -> dict:
    p = subprocess.run([sys.executable, "-m", "tenantnet.cli", "schema"], capture_output=True,
                       text=True, check=True)
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
