"""What a fuzz of 4,700 mutated scenarios found (issue 38), each kept fixed: timers
that would hang a run, tables the estimate missed, lists read as tables, a sweep too
large to run, messages in serde's words or broken over lines, and the Python API's
arguments of the wrong type."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import tenantnet
from builders.cpu import scenario as cpu_scenario
from helpers import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BASE = """\
[simulation]
duration = "1ms"
[topology]
kind = "star"
hosts = 4
[[workloads]]
kind = "long_lived"
src = "h0"
dst = "h1"
"""


def refused(d: dict[str, Any] | str, key: str, *words: str) -> str:
    sc = (tenantnet.Scenario.from_toml(d, "t.toml") if isinstance(d, str)
          else tenantnet.Scenario.from_dict(d, "t.toml"))
    with pytest.raises(tenantnet.ScenarioError) as e:
        sc.validate()
    text = str(e.value)
    assert e.value.key == key, text
    assert "\n" not in text, text
    for w in words:
        assert w in text, (w, text)
    return text


def cpu(**handler: Any) -> dict[str, Any]:
    vms = [{"name": "vm0", "host": "left0", "guarantee": "1Gbps"}]
    return cpu_scenario(["3Gbps"], ["1024B"], vms=vms, duration="100ms",
                        cpu={"limiter": "c2tb", **handler})


@pytest.mark.parametrize(("change", "key"), [
    ({"nic_handler": {"monitor": "1ps"}}, "vswitch.cpu.nic_handler.monitor"),
    ({"c2tb": {"interval": "1ps"}}, "vswitch.cpu.c2tb.interval"),
])
def test_the_cpu_model_s_timers_follow_the_timer_rule(change: dict[str, Any],
                                                      key: str) -> None:
    refused(cpu(**change), key, "expected at least 1us (the shortest timer tenantnet runs)")


def test_qshare_s_interval_follows_the_timer_rule() -> None:
    d = tenantnet.Scenario.from_file(EXAMPLES / "qshare-two-queues.toml").data()
    d["qshare"]["interval"] = "1ps"
    refused(d, "qshare.interval", "at least 1us")


def test_the_estimate_counts_every_periodic_table() -> None:
    # a 1 us monitor over 10 s: 10^7 readings per host, in the estimate by their key
    d = cpu(nic_handler={"monitor": "1us"})
    d["simulation"]["duration"] = "10s"
    fp = tenantnet.Scenario.from_dict(d).validate()
    parts = {p.key: p for p in fp}
    assert parts["vswitch.cpu.nic_handler.monitor"].what.endswith("nic_monitor rows")
    assert parts["vswitch.cpu.nic_handler.monitor"].bytes > 1e9
    assert any(p.what.endswith("vm_cpu rows") for p in fp)
    assert fp.events > 1e7
    q = tenantnet.Scenario.from_file(EXAMPLES / "qshare-two-queues.toml").data()
    q["qshare"]["interval"] = "1us"
    q["simulation"]["duration"] = "100s"
    refused(q, "qshare.interval", "QShare decision rows", "more than the memory budget")


@pytest.mark.parametrize(("text", "key", "says"), [
    ('simulation = ["10ms"]\n[topology]\nkind = "star"\n', "simulation",
     "expected a table of duration, seed, stop_when_done"),
    ('network = [1, "a"]\n' + BASE, "network", "expected a table of ack_path"),
    (BASE + 'transport = [1]\n', "workloads[0].transport",
     "expected a table of ack_push, ack_size"),
])
def test_a_list_is_not_read_as_a_table(text: str, key: str, says: str) -> None:
    refused(text, key, says)


@pytest.mark.parametrize(("extra", "key", "says"), [
    ('[output]\nsample_interval = "-1s"', "output.sample_interval", "a negative number"),
    ('[vswitch.cpu]\nfrequency = "1e20GHz"', "vswitch.cpu.frequency",
     "written with an exponent; write the number out in full"),
    ('[network]\nbuffer = "1,5MB"', "network.buffer", 'unknown unit ",5MB"'),
])
def test_numbers_are_read_as_written(extra: str, key: str, says: str) -> None:
    text = refused(BASE + extra, key, says)
    assert "no number before the unit" not in text


@pytest.mark.parametrize(("key", "value", "says"), [
    # serde's words ("invalid type", "sequence", "map", "i64") become ours
    (("tenants", 0, "hosts", 0), 1.5, "expected a string"),
    (("tenants", 0, "hosts", 0), {"a": 1}, "expected a string"),
    (("tenants", 0, "hosts", 0), [["h0"]], "expected a string"),
    (("workloads", 0, "dscp"), ["x"], "expected a whole number"),
    (("vswitch", "hosts", "h0"), 3, 'expected one of "none"'),
])
def test_messages_say_what_is_expected_in_plain_words(key: tuple[Any, ...], value: Any,
                                                      says: str) -> None:
    d = tenantnet.Scenario.from_file(EXAMPLES / "vswitch-mbfq.toml").data()
    d["workloads"][0]["dscp"] = 0
    d["vswitch"]["hosts"] = {"h0": "mbfq"}
    node: Any = d
    for k in key[:-1]:
        node = node[k]
    node[key[-1]] = copy.deepcopy(value)
    sc = tenantnet.Scenario.from_dict(d, "t.json")
    with pytest.raises(tenantnet.ScenarioError) as e:
        sc.validate()
    text = str(e.value)
    assert says in text, text
    for jargon in ("invalid type", "sequence", " map", "i64", "u64", "variant"):
        assert jargon not in text, text


def test_values_are_shown_on_one_line_and_short() -> None:
    d = tenantnet.Scenario.from_toml(BASE).data()
    d["workloads"][0]["src"] = "a\nb"
    text = refused(d, "workloads[0].src", 'src = "a\\u000Ab"')
    d["workloads"][0]["src"] = "x" * 100_000
    text = refused(d, "workloads[0].src")
    assert len(text) < 600 and "…" in text
    d["workloads"][0]["src"] = "h0\u0301"
    text = refused(d, "workloads[0].src", 'matches "h0\u0301"')
    assert "\\u{" not in text


def test_a_scenario_integer_beyond_toml_s_range_is_named() -> None:
    d = tenantnet.Scenario.from_toml(BASE).data()
    d["simulation"]["seed"] = 2**70
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(d, "t")
    assert str(e.value) == ("t: simulation.seed = 1180591620717411303424: expected a whole "
                            "number from -9223372036854775808 to 9223372036854775807 (a "
                            "scenario's integers)")


def test_an_output_that_cannot_be_created_names_itself_not_a_temporary(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    p = cli("run", str(f), "--out", "/proc/x", "-q")
    assert p.returncode == 2 and p.stderr.startswith("error: /proc/x: cannot create it"), \
        p.stderr
    assert "/proc/." not in p.stderr


def test_compare_on_a_scenario_without_tenants(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    p = cli("compare", str(f), "--out", str(tmp_path / "o"), "-q", "--seeds", "1")
    assert p.returncode == 0, p.stderr
    assert "static         does not apply" in p.stdout


def test_a_sweep_too_large_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    src = tmp_path / "demo.toml"
    src.write_text(tenantnet.Scenario.builtin("demo").text)
    grid = tmp_path / "g.toml"
    values = json.dumps([f"{g}Mbps" for g in range(1000, 11000)])
    grid.write_text(f"seeds = {list(range(100))}\n[parameters]\n"
                    f'"tenants[1].guarantee" = {values}\n')
    p = cli("sweep", str(src), "--grid", str(grid), "--out", str(tmp_path / "o"),
            "--schemes", "none", timeout=60)
    assert p.returncode == 2, p.stderr
    assert "1,000,000 runs of about" in p.stderr and "--max-events" in p.stderr
    assert not (tmp_path / "o").exists()


def test_the_api_names_arguments_of_the_wrong_type() -> None:
    with pytest.raises(TypeError, match=r"Scenario\(text = dict\).*Scenario.from_dict"):
        tenantnet.Scenario({"simulation": {}})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="grid = None"):
        tenantnet.sweep(tenantnet.Scenario.builtin("demo"), None, "out")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scenario = None"):
        tenantnet.run(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scenario = None"):
        tenantnet.compare(None)  # type: ignore[arg-type]
