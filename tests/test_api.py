"""The Python API's contract (issue 11, item 17): ``Simulation.results()`` returns
``Results`` and may be taken mid-run, arguments are checked with their names, switch
reconfiguration obeys the rules scenarios obey."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import tenantnet
from helpers import check_conservation

MULTI: dict[str, Any] = {
    "simulation": {"duration": "4ms"},
    "topology": {"kind": "star", "hosts": 3},
    "network": {"queues": 2, "scheduler": "dwrr", "dscp_map": "identity"},
    "workloads": [{"kind": "long_lived", "src": "h0", "dst": "h2", "dscp": 0},
                  {"kind": "long_lived", "src": "h1", "dst": "h2", "dscp": 1}],
}


def sim(d: dict[str, Any] = MULTI) -> tenantnet.Simulation:
    return tenantnet.Scenario.from_dict(d).simulation()


def test_results_are_results_and_the_run_goes_on_after_them() -> None:
    s = sim()
    s.run_until(0.002)
    early = s.results()
    assert isinstance(early, tenantnet.Results)
    assert early.summary["simulated_s"] == pytest.approx(0.002)
    s.run()
    late = s.results()
    check_conservation(late)
    assert late.summary["simulated_s"] == pytest.approx(0.004)
    assert late.flows["bytes_delivered"].sum() > early.flows["bytes_delivered"].sum()
    # taking results mid-run changes nothing: the same bytes as a run straight through
    straight = tenantnet.run(MULTI)
    assert late.flows.equals(straight.flows)
    assert late.links.drop(columns=[]).equals(straight.links)


@pytest.mark.parametrize("t", [math.nan, -math.inf, -1.0, "1", None])
def test_run_until_refuses_times_that_are_not_times(t: Any) -> None:
    s = sim()
    with pytest.raises(ValueError, match=r"run_until\(.*expected a simulated time in seconds"):
        s.run_until(t)
    assert s.now_s == 0


def test_run_until_infinity_runs_to_the_end() -> None:
    s = sim()
    s.run_until(math.inf)
    assert s.finished and s.now_s == pytest.approx(0.004)


@pytest.mark.parametrize("chunks", [0, -3, 1.5, True])
def test_run_needs_at_least_one_chunk(chunks: Any) -> None:
    with pytest.raises(ValueError, match="chunks"):
        tenantnet.run(MULTI, chunks=chunks)


@pytest.mark.parametrize("weights,fragment", [
    ([0, 1], "weights[0] = 0"),
    ([1, 2**32], "weights[1] = 4294967296"),
    ([1, -1], "weights[1] = -1"),
    ([1.5, 1], "weights[0] = 1.5"),
    ([1, 1, 1], "expected 2 weights"),
])
def test_weights_out_of_range_name_the_argument(weights: list[Any], fragment: str) -> None:
    with pytest.raises(ValueError) as e:
        sim().set_queue_weights("switch", weights)
    assert fragment in str(e.value), str(e.value)
    assert "OverflowError" not in repr(e.value)


def test_dscp_maps_out_of_range_name_the_value() -> None:
    s = sim()
    with pytest.raises(ValueError, match="DSCP = 300"):
        s.set_dscp_map("switch", {300: 1})
    with pytest.raises(ValueError, match="queue from 0 to 1"):
        s.set_dscp_map("switch", {10: 5})
    s.set_dscp_map("switch", {1: 0, 0: 1})


def test_static_partition_weights_obey_the_scenario_rule() -> None:
    d = dict(MULTI, network=dict(MULTI["network"], buffer_policy="static_partition"))
    s = sim(d)
    with pytest.raises(ValueError, match="smaller than one full-size packet"):
        s.set_queue_weights("switch", [1_000_000, 1])
    s.set_queue_weights("switch", [3, 1])


def test_a_fifo_port_has_no_weights() -> None:
    d = dict(MULTI, network={})
    with pytest.raises(ValueError, match="single queue"):
        sim(d).set_queue_weights("switch", [3])


def test_seed_and_budget_arguments_are_checked() -> None:
    sc = tenantnet.Scenario.from_dict(MULTI)
    with pytest.raises(tenantnet.ScenarioError, match="seed"):
        sc.simulation(seed=-1)
    with pytest.raises(tenantnet.ScenarioError, match="memory_budget"):
        sc.simulation(memory_budget="lots")
    assert sc.simulation(seed=2**63 - 1).results().summary["seed"] == 2**63 - 1
    with pytest.raises(tenantnet.ScenarioError, match="seed = 9223372036854775808"):
        sc.simulation(seed=2**63)


def test_import_leaves_heavy_modules_until_used() -> None:
    """`import tenantnet` stays light: pandas, numpy, pyarrow and matplotlib load when a
    run's results are first built (a module check, not a timing)."""
    import subprocess
    import sys
    code = ("import sys, tenantnet; "
            "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


def test_the_light_summary_matches_the_results() -> None:
    """`Simulation.summary()` (what benchmarks use, without DataFrames) says what the
    full results say: the same summary and each flow's goodput."""
    s = sim().run()
    summary, gbps = s.summary()
    res = s.results()
    drop = ("wall_s", "control_wall_s")
    assert {k: v for k, v in summary.items() if k not in drop} == \
        {k: v for k, v in res.summary.items() if k not in drop}
    assert gbps == pytest.approx(list(res.flow_gbps()), rel=1e-12)
    assert len(gbps) == len(res.flows) > 0 and max(gbps) > 0


def test_the_light_summary_at_the_start_is_all_zeros_not_a_division_by_zero() -> None:
    summary, gbps = sim().summary()
    assert summary["simulated_s"] == 0 and gbps and set(gbps) == {0.0}


def test_requires_python_admits_no_version_without_the_modules_the_package_imports() -> None:
    """tomllib (Python 3.11) is imported by the scenario, sweep and QShare modules: the
    package says it needs 3.11."""
    import re
    import tomllib
    root = Path(__file__).resolve().parents[1]
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    m = re.fullmatch(r">=\s*3\.(\d+)", meta["project"]["requires-python"])
    assert m, meta["project"]["requires-python"]
    uses = [p.name for p in (root / "python" / "tenantnet").rglob("*.py")
            if re.search(r"^\s*import tomllib", p.read_text(encoding="utf-8"), re.M)]
    assert uses and int(m.group(1)) >= 11, uses


SHORT_DEMO = """
import json, sys
import tenantnet
with open("ran.log", "a") as f:
    f.write("ran\\n")
d = tenantnet.Scenario.builtin("demo").data()
d["simulation"]["duration"] = "400ms"
c = tenantnet.compare(d, ["none", "static"], seeds=2, jobs=2)
print(json.dumps(list(c.verdicts["scheme"])))
"""


def test_compare_runs_in_parallel_from_a_script_without_a_main_guard(tmp_path: Any) -> None:
    """The README's way: a bare script, no `if __name__ == "__main__":`, two
    workers (which never import the script)."""
    import json
    import subprocess
    import sys
    script = tmp_path / "bare.py"
    script.write_text(SHORT_DEMO)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])[:2] == ["none", "static"]
    ran = (tmp_path / "ran.log").read_text().splitlines()
    assert ran == ["ran"], "the script ran once, not once per worker"


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"scenario": 42}, "scenario = 42: expected a scenario file's path"),
    ({"schemes": "none", "seeds": "3"}, "seeds = '3': expected a number of seeds"),
    ({"seeds": 0}, "seeds = 0"),
    ({"seeds": [1, -2]}, "seeds = [1, -2]"),
    ({"schemes": [1]}, "schemes = [1]: expected a list of scheme names"),
    ({"jobs": 1.5}, "jobs = 1.5"),
    ({"settle": "1s"}, "settle = '1s': expected seconds"),
    ({"out": 3}, "out = 3: expected a folder's path"),
    ({"seed": True}, "seed = True"),
])
def test_compare_s_arguments_of_the_wrong_type_name_the_argument(kwargs: dict[str, Any],
                                                                  says: str) -> None:
    args = {"scenario": tenantnet.Scenario.builtin("demo"), **kwargs}
    with pytest.raises(TypeError) as e:
        tenantnet.compare(**args)
    assert says in str(e.value)


def test_run_and_sweep_name_a_scenario_of_the_wrong_type() -> None:
    with pytest.raises(TypeError, match=r"scenario = \[1\]: expected a scenario file's path"):
        tenantnet.run([1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scenario = 7"):
        tenantnet.sweep(7, {}, "out")


def test_compare_is_the_function_after_a_bare_import() -> None:
    import subprocess
    import sys
    code = ("import tenantnet, inspect; print(inspect.isfunction(tenantnet.compare), "
            "'seeds' in inspect.signature(tenantnet.compare).parameters)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True True"


def test_the_command_line_s_help_and_version_import_nothing_heavy() -> None:
    """`tenantnet --help` and `--version` answer at once: building the parser loads
    no pandas, numpy, pyarrow or matplotlib (a module check, not a timing)."""
    import subprocess
    import sys
    code = ("import sys; from tenantnet.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
