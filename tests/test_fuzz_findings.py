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


# ---- what the fuzz of issue 57 found ---------------------------------------------------

NO_TRAFFIC = """\
[simulation]
duration = "10ms"
[topology]
kind = "star"
hosts = 2
"""


def test_compare_without_workloads_is_refused_up_front(tmp_path: Path) -> None:
    f = tmp_path / "empty.toml"
    f.write_text(NO_TRAFFIC)
    p = cli("compare", str(f), "-o", str(tmp_path / "c"), "--seeds", "1")
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"error: {f}: no [[workloads]]: compare judges")
    assert not (tmp_path / "c").exists()
    with pytest.raises(tenantnet.ScenarioError, match="no \\[\\[workloads\\]\\]"):
        tenantnet.compare(tenantnet.Scenario.from_toml(NO_TRAFFIC).data(), ["none"], seeds=1)


def test_compare_with_traffic_of_no_tenant_writes_its_report(tmp_path: Path) -> None:
    # nothing to judge but work conservation: the report has no tenant figure
    c = tenantnet.compare(tenantnet.Scenario.from_toml(BASE.replace('"1ms"', '"10ms"')),
                          ["none"], seeds=1, out=tmp_path / "c")
    assert c.verdicts.set_index("scheme").loc["none", "work conservation"][:1] in "✔✘≈"
    assert (tmp_path / "c" / "report.html").is_file()


@pytest.mark.parametrize("text", [
    'name = "x"\nbig = 18446744073709551616\n',
    'name = "x"\nv = [1, 99999999999999999999999]\n',
    'name = "x"\nt = { a = 36893488147419103232 }\n',
    'name = "x"\n[simulation]\nseed = 0x1FFFFFFFFFFFFFFFFF\n',
])
def test_an_integer_beyond_64_bits_is_named_in_toml(tmp_path: Path, text: str) -> None:
    f = tmp_path / "big.toml"
    f.write_text(text)
    p = cli("validate", str(f))
    assert p.returncode == 2, p.stderr
    assert "a whole number beyond 9223372036854775807" in p.stderr, p.stderr
    assert "i128" not in p.stderr and "invalid type" not in p.stderr, p.stderr


def test_an_integer_beyond_64_bits_in_json_is_shown_as_written(tmp_path: Path) -> None:
    f = tmp_path / "big.json"
    f.write_text('{"simulation": {"duration": "1ms", "seed": 123456789012345678901234567890}}')
    p = cli("validate", str(f))
    assert p.returncode == 2
    assert "simulation.seed = 123456789012345678901234567890: expected a whole number" \
        in p.stderr, p.stderr


def test_a_product_too_large_names_the_key_the_user_made_large() -> None:
    d = tenantnet.Scenario.from_toml(BASE).data()
    d["topology"] = {"kind": "leaf_spine", "leaves": 1_000_000_000, "spines": 2,
                     "hosts_per_leaf": 6}
    refused(d, "topology.leaves", "6000000000 hosts (1000000000 leaves x 6 hosts_per_leaf)")


def test_packets_on_long_links_name_the_link_delay() -> None:
    d = tenantnet.Scenario.from_toml(BASE).data()
    d["topology"]["link_delay"] = "99999999999us"
    refused(d, "topology.link_delay", "packets alive at once", "memory budget")


def test_a_workload_whose_tenant_is_a_typo_of_a_declared_one_is_refused() -> None:
    d = tenantnet.Scenario.from_toml(BASE).data()
    d["tenants"] = [{"name": "analytics", "guarantee": "1Gbps", "hosts": ["h0", "h1"]}]
    for typo in ("analytics_x", "analytcs", "Analytics"):
        d["workloads"][0]["tenant"] = typo
        refused(d, "workloads[0].tenant", "names no tenant", 'close to "analytics"')
    # a tenant apart from the declared ones is traffic of no VMs, as the guides use it
    d["workloads"][0]["tenant"] = "storage"
    tenantnet.Scenario.from_dict(d).validate()
    del d["workloads"][0]["tenant"]  # traffic of no tenant stays allowed
    tenantnet.Scenario.from_dict(d).validate()


@pytest.mark.parametrize(("call", "words"), [
    (lambda s: s.simulation().set_dscp_map("s0", None), "mapping = None"),  # type: ignore
    (lambda s: s.simulation().set_queue_weights(None, [1]), "switch = None"),  # type: ignore
    (lambda s: s.simulation().set_queue_weights("s0", [1], peer=5), "peer = 5"),  # type: ignore
    (lambda s: tenantnet.schemes.apply(None, "none"), "data = None"),  # type: ignore
    (lambda s: s.with_overrides(simulation=5), "simulation = 5"),  # type: ignore
    (lambda s: tenantnet.sweep(s, {"parameters": {}}, "/tmp/x", max_events="x"),
     "max_events = 'x'"),
    (lambda s: tenantnet.sweep(s, {"parameters": {}}, "/tmp/x", jobs=0), "jobs = 0"),
    (lambda s: tenantnet.compare(s, ["none"], seeds=1, memory_budget="zz"), "zz"),
    (lambda s: tenantnet.run(tenantnet.Scenario.from_toml(BASE)).write(None),  # type: ignore
     "out_dir = None"),
])
def test_the_python_api_names_a_wrong_argument(call: Any, words: str) -> None:
    import tenantnet.sim.schemes
    sc = tenantnet.Scenario.builtin("demo")
    with pytest.raises((TypeError, ValueError)) as e:
        call(sc)
    assert words in str(e.value), str(e.value)


def test_results_write_into_a_file_says_so(tmp_path: Path) -> None:
    r = tenantnet.run(tenantnet.Scenario.from_toml(BASE))
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="f: cannot write the results there"):
        r.write(tmp_path / "f")


def test_command_line_errors_are_tenantnets_own(tmp_path: Path) -> None:
    binary = tmp_path / "grid.toml"
    binary.write_bytes(bytes([0x80, 0xD6, 0xFF, 0x00]) * 20)
    p = cli("sweep", str(EXAMPLES / "compare-leaf-spine.toml"), "--grid", str(binary), "-o",
            str(tmp_path / "s"))
    assert p.returncode == 2 and "not a text file in UTF-8 (byte 0 is 0x80)" in p.stderr
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    p = cli("crosscheck", "ns3", str(empty), "-o", str(tmp_path / "x"))
    assert p.returncode == 2 and "simulation: required key is missing" in p.stderr, p.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "topology": ')
    said = cli("validate", str(broken)).stderr
    for args in (["deploy", "sonic", str(broken), "--scheme", "trinity", "-o",
                  str(tmp_path / "d")],
                 ["deploy", "linux", str(broken), "--scheme", "static", "--host", "h0",
                  "--dev", "eth0", "--dry-run"],
                 ["schemes", str(broken)]):
        p = cli(*args)
        assert p.returncode == 2 and p.stderr == said, (args, p.stderr)
    invalid = tmp_path / "invalid.toml"
    invalid.write_text('[topology]\nkind = "star"\nhosts = "many"\n')
    p = cli("schemes", str(invalid))
    assert p.returncode == 2 and "applies:     yes" not in p.stdout
