"""Bad scenarios: exit code 2, a message naming file, key, value and expected form,
and nothing written."""

import tomllib
from pathlib import Path

import pytest

import tenantnet
from helpers import cli

BASE = """\
[simulation]
duration = "1ms"
[topology]
kind = "star"
hosts = 16
link_rate = "10Gbps"
[[workloads]]
kind = "long_lived"
src = "h1"
dst = "h2"
"""

POISSON = """
[[workloads]]
kind = "poisson"
load = 0.5
cdf_file = "bad.cdf"
flows = 10
"""

TENANT = """
[[tenants]]
name = "t"
vms = [{ host = "h0", guarantee = "2Gbps", name = "a" }, { host = "h0", guarantee = "6Gbps" }]
"""

PIPES = """
[[tenants]]
name = "t"
guarantee = "1Gbps"
vms = [{ host = "h0", name = "a" }, { host = "h1", name = "b" }, { host = "h0", name = "c" }]
[[tenants.pipes]]
src = "a"
dst = "b"
guarantee = "3Gbps"
"""

PIPE = """
[[tenants.pipes]]
src = "a"
dst = "b"
guarantee = "1Gbps"
"""

CASES = {
    # name: (scenario text, fragments the message must contain)
    "unknown_key": (BASE.replace("link_rate =", "linkrate ="),
                    ["topology.linkrate", '"10Gbps"', "unknown key", "link_rate"]),
    "bad_unit": (BASE.replace('"10Gbps"', '"10Gbs"'),
                 ["topology.link_rate", '"10Gbs"', 'unknown unit "Gbs"', '"10Gbps"']),
    "number_for_rate": (BASE.replace('"10Gbps"', "10"),
                        ["topology.link_rate = 10", "expected a data rate"]),
    "host_not_in_topology": (BASE.replace('src = "h1"', 'src = "h99"'),
                             ["workloads[0].src", '"h99"', "no host", "h15"]),
    "fat_tree_bad_k": ('[simulation]\nduration = "1ms"\n[topology]\nkind = "fat_tree"\nk = 5\n',
                       ["topology.k = 5", "even"]),
    "cdf_not_ending_at_1": (BASE + POISSON,
                            ["workloads[1].cdf_file", '"bad.cdf"', "line 3", "0.9", "end at 1"]),
    "missing_key": (BASE.replace('duration = "1ms"', ""), ["simulation.duration", "missing"]),
    "unknown_kind": (BASE.replace('"star"', '"ring"'),
                     ["topology.kind", '"ring"', "fat_tree"]),
    "buffer_below_a_packet": (BASE + '[network]\nbuffer = "1000B"\n',
                              ["network.buffer", '"1000B"', "packet"]),
    "toml_syntax": ("simulation = [\n", ["not valid TOML", "line 1"]),
    "vm_on_unknown_host": (BASE + TENANT.replace('host = "h0"', 'host = "h99"'),
                           ["tenants[0].vms[0].host", '"h99"', "no host"]),
    "vm_guarantees_exceed_capacity": (
        BASE + TENANT.replace('"2Gbps"', '"6Gbps"'),
        ["tenants[0].vms[1]", "host h0", "12 Gb/s", "capacity C = 10 Gb/s"]),
    "vm_without_guarantee": (BASE + TENANT.replace('guarantee = "2Gbps", ', ""),
                             ["tenants[0].vms[0].guarantee", "give the VM or its tenant"]),
    "vswitch_unknown_policy": (BASE + TENANT + '[vswitch]\npolicy = "fair"\n',
                               ["vswitch.policy", '"fair"', '"mbfq"']),
    "static_share_below_one_packet": (
        BASE + '[network]\nqueues = 2\nbuffer = "2000B"\nbuffer_policy = "static_partition"\n',
        ["network.buffer", "static share of the 2000-byte buffer", "(1500 bytes)"]),
    "mbfq_period_not_a_whole_number_of_ticks": (
        BASE + TENANT + '[vswitch]\npolicy = "mbfq"\ninterval = "40ms"\n',
        ["vswitch.mbfq.interval", "whole multiple", "vswitch.interval = 40ms"]),
    "mbfq_fraction_out_of_range": (BASE + TENANT + "[vswitch.mbfq]\nreclaim_below = 1.5\n",
                                   ["vswitch.mbfq.reclaim_below", "1.5", "(0, 1]"]),
    "vm_weights_on_some_vms_only": (
        BASE + TENANT.replace('guarantee = "2Gbps", ', 'guarantee = "2Gbps", weight = 2.0, '),
        ["tenants[0].vms[1]", "every VM on host h0 a weight, or none"]),
    "graph_link_to_unknown_node": (
        '[simulation]\nduration = "1ms"\n[topology]\nkind = "graph"\nhosts = ["h0", "h1"]\n'
        'switches = ["s0"]\nlinks = [{ a = "h0", b = "s0" }, { a = "h1", b = "s9" }]\n',
        ["topology.links[1].b", '"s9"', "unknown node", "hosts or switches"]),
    "vswitch_capacity_above_nic": (BASE + TENANT + '[vswitch]\ncapacity = "40Gbps"\n',
                                   ["vswitch.capacity", '"40Gbps"', "NIC rate"]),
    "pipe_to_unknown_vm": (BASE + PIPES.replace('dst = "b"', 'dst = "z"'),
                           ["tenants[0].pipes[0].dst", '"z"', "no VM", "a, b, c"]),
    "pipe_within_one_host": (BASE + PIPES.replace('dst = "b"', 'dst = "c"'),
                             ["tenants[0].pipes[0].dst", "both on host h0", "different hosts"]),
    "pipe_given_twice": (BASE + PIPES + PIPE,
                         ["tenants[0].pipes[1]", '"a" → "b"', "twice"]),
    "pipes_above_the_nic": (BASE + PIPES.replace('"3Gbps"', '"12Gbps"'),
                            ["tenants[0].pipes[0].guarantee", '"12Gbps"', "leaving host h0",
                             "12 Gb/s", "NIC rate (10 Gb/s)"]),
    "pipe_of_zero": (BASE + PIPES.replace('"3Gbps"', '"0bps"'),
                     ["tenants[0].pipes[0].guarantee", "must be positive"]),
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "bad.cdf").write_text("0 0\n1000 0.5\n2000 0.9\n")
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_rejects_bad_scenarios(tmp_path: Path, name: str) -> None:
    text, fragments = CASES[name]
    path = _write(tmp_path, name, text)
    out = tmp_path / "out"
    p = cli("run", str(path), "--out", str(out), "-q")
    assert p.returncode == 2, p.stderr
    msg = p.stderr.strip()
    print(msg)
    assert msg.startswith(f"error: {path}")
    for frag in fragments:
        assert frag in msg, (frag, msg)
    assert not out.exists(), "nothing may be written"
    assert "Traceback" not in p.stderr


def test_api_raises_scenario_error_with_parts(tmp_path: Path) -> None:
    path = _write(tmp_path, "x", BASE.replace('"10Gbps"', '"10Gbs"'))
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.run(path)
    assert e.value.file == str(path)
    assert e.value.key == "topology.link_rate"
    assert e.value.value == '"10Gbs"'


def test_validate_command(tmp_path: Path) -> None:
    good = _write(tmp_path, "good", BASE)
    p = cli("validate", str(good))
    assert p.returncode == 0 and "ok" in p.stdout
    bad = _write(tmp_path, "bad", BASE.replace('"h1"', '"h77"'))
    p = cli("validate", str(bad))
    assert p.returncode == 2 and "workloads[0].src" in p.stderr


# -- issue 11, items 9-12: messages say what is allowed and blame the key written --------

MORE = {
    # 9: no serde jargon, no Rust type names; the allowed values instead
    "enum_of_wrong_type": (BASE + '[vswitch]\npolicy = 8\n',
                           ['vswitch.policy = 8', 'expected one of "none", "static", "mbfq"']),
    "table_of_wrong_type": ('output = 5\n' + BASE,
                            ["output = 5", "expected a table of capture, capture_packets, "
                             "host_queues, queues, sample_interval, throughput, "
                             "trace_flows, trace_fraction, trace_rows"]),
    "list_of_wrong_length": (BASE + '[vswitch.mbfq]\nramp = []\n',
                             ["vswitch.mbfq.ramp = []", "expected a list of 2, each a number"]),
    "scheduler_misspelt": (BASE + '[network]\nscheduler = "drr"\n',
                           ['network.scheduler = "drr"', 'unknown value "drr"', '"dwrr"']),
    # 10: the key the user wrote, with both values
    "min_rto_above_default_max": (BASE + '[transport]\nmin_rto = "200s"\n',
                                  ['transport.min_rto = "200s"', "min_rto is 200s",
                                   "max_rto is 120s (the default)"]),
    "max_rto_below_min": (BASE + '[transport]\nmax_rto = "5ms"\n',
                          ['transport.max_rto = "5ms"', "min_rto is 200ms (the default)"]),
    "mss_beyond_a_vm_queue": (BASE.replace('src = "h1"', 'tenant = "t"\nsrc = "h1"')
                              + TENANT.replace('host = "h0", guarantee = "6Gbps"',
                                               'host = "h1", guarantee = "6Gbps"')
                              + '[transport]\nmss = "64000B"\n',
                              ['transport.mss = "64000B"', "vswitch.queue (64000 bytes)"]),
    "header_too_large": (BASE + '[transport]\nheader = "4294967336B"\n',
                         ['transport.header = "4294967336B"', "65535 bytes"]),
    # 11: keys quoted as TOML quotes them
    "key_with_a_space": (BASE.replace("[simulation]", '[simulation]\n"seed " = 3'),
                         ['simulation."seed " = 3: unknown key', "duration, seed"]),
    "empty_key": (BASE.replace("[simulation]", '[simulation]\n"" = 3'),
                  ['simulation."" = 3: unknown key']),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_messages_name_what_is_allowed(tmp_path: Path, name: str) -> None:
    text, fragments = MORE[name]
    path = _write(tmp_path, name, text)
    p = cli("validate", str(path))
    msg = p.stderr.strip()
    print(msg)
    assert p.returncode == 2 and msg.startswith(f"error: {path}: ")
    for frag in fragments:
        assert frag in msg, (frag, msg)
    for jargon in ("invalid type", "unit variant", "struct ", "wanted exactly", "u32", "f64"):
        assert jargon not in msg, (jargon, msg)


def test_an_mss_that_fits_passes_without_vms() -> None:
    tenantnet.Scenario.from_toml(BASE + '[transport]\nmss = "64000B"\n').validate()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_in_a_dict_name_their_key(value: float) -> None:
    d = tomllib.loads(BASE)
    d["vswitch"] = {"mbfq": {"headroom": value}}
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(d)
    assert e.value.key == "vswitch.mbfq.headroom"
    assert "expected a finite number" in str(e.value)


def test_values_a_scenario_cannot_hold_name_their_key() -> None:
    import datetime
    d = tomllib.loads(BASE)
    d["simulation"]["duration"] = datetime.date(2026, 1, 1)
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(d)
    assert e.value.key == "simulation.duration" and "not date" in str(e.value)
