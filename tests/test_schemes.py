"""Schemes as presets (issue 17, first piece): each scheme sets its keys at its
places, combinations join schemes at different places, conflicts and schemes that
do not apply are errors naming why."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tenantnet
from helpers import cli
from tenantnet.errors import ScenarioError
from tenantnet.reproduce import c2qos
from tenantnet.sim import schemes

DEMO = tenantnet.Scenario.builtin("demo").data()
PAIRS = {**DEMO, "tenants": [{**t, "hosts": ["h0", "h1", "h2", "h3"]} for t in DEMO["tenants"]]}
"""The demo with every tenant's VMs on the receivers too: its flows run VM to VM."""


def at(d: dict[str, Any], dotted: str) -> Any:
    for k in dotted.split("."):
        d = d[k]
    return d


@pytest.mark.parametrize("name", [n for n in schemes.SCHEMES if n != "c2qos"])
def test_every_scheme_sets_its_keys_and_the_scenario_stays_valid(name: str) -> None:
    d = schemes.apply(PAIRS, name)
    for piece in schemes.SCHEMES[name].pieces:
        for k, v in piece.sets.items():
            # QShare's controller gets the control interval its preset chose
            want = {"interval": "200ms"} if k == "qshare" else v
            assert at(d, k) == want, (name, k)
        for k in piece.preset:  # left to the core's preset for the host policy
            with pytest.raises(KeyError):
                at(d, k)
    # the scenario's own enforcement (vswitch.policy = "mbfq") is replaced
    want = next((p.sets["vswitch.policy"] for p in schemes.SCHEMES[name].pieces
                 if "vswitch.policy" in p.sets), None)
    assert d.get("vswitch", {}).get("policy") == want
    # the rest of the scenario is the user's
    assert d["topology"] == DEMO["topology"] and d["tenants"] == PAIRS["tenants"]
    assert d["network"]["buffer"] == DEMO["network"]["buffer"]
    tenantnet.Scenario.from_dict(d, f"<demo [{name}]>").validate()


def test_a_service_queue_per_tenant() -> None:
    d = schemes.apply(DEMO, "barberq")
    assert d["network"]["buffer_policy"] == "barberq"
    assert (d["network"]["queues"], d["network"]["scheduler"]) == (2, "dwrr")
    assert d["network"]["dscp_map"] == {"1": 0, "2": 1}
    assert [w["dscp"] for w in d["workloads"]] == [1, 1, 2, 2]  # analytics, then web
    # nine tenants on eight queues: the ninth shares the first
    many = {**DEMO, "workloads": [{**DEMO["workloads"][0], "tenant": f"t{i}"}
                                  for i in range(9)]}
    d = schemes.apply(many, "per-queue-ecn")
    assert d["network"]["queues"] == 8 and d["network"]["dscp_map"]["9"] == 0
    assert d["workloads"][8]["dscp"] == 9


def test_qshare_binds_the_queues_and_barberq_keeps_the_buffer() -> None:
    d = schemes.apply(DEMO, "qshare+barberq")
    assert d["network"]["buffer_policy"] == "barberq"
    assert (d["network"]["queues"], d["network"]["scheduler"]) == (8, "wfq")
    assert "dscp_map" not in d["network"] and all("dscp" not in w for w in d["workloads"])
    assert d["qshare"] == {"interval": "200ms"} and d["name"] == "demo [qshare+barberq]"
    tenantnet.Scenario.from_dict(d).validate()
    d = schemes.apply(DEMO, "mbfq+qshare")
    assert d["vswitch"]["policy"] == "mbfq" and d["qshare"] == {"interval": "200ms"}


@pytest.mark.parametrize(("duration", "interval", "decisions"), [
    ("3s", "200ms", 15), ("1.5s", "100ms", 15), ("40s", "4s", None), ("10min", "4s", None),
    ("35ms", "2ms", 17)])
def test_qshare_s_preset_gives_its_controller_ten_decisions(duration: str, interval: str,
                                                            decisions: int | None) -> None:
    d = {**DEMO, "simulation": {**DEMO["simulation"], "duration": duration}}
    assert schemes.apply(d, "qshare")["qshare"] == {"interval": interval}
    said = schemes.choices(d, "qshare")[0]
    assert said.startswith(f"qshare: control interval {interval}")
    if decisions is not None:
        assert f"{decisions} decisions" in said and "override with [qshare] interval" in said
        assert decisions >= schemes.QSHARE_DECISIONS
    else:
        assert "§7.1.1" in said
    assert schemes.choices(d, "static") == []


def test_the_scenario_s_own_qshare_table_overrides_the_preset() -> None:
    d = {**DEMO, "qshare": {"interval": "1s", "k": 2.0}}
    assert schemes.apply(d, "qshare")["qshare"] == {"interval": "1s", "k": 2.0}
    assert "the scenario's own" in schemes.choices(d, "qshare")[0]
    assert "qshare" not in schemes.apply(d, "static")  # other schemes drop it


def test_c2qos_applies_where_the_cpu_is_modelled_and_combines_with_trinity() -> None:
    with pytest.raises(ScenarioError, match=r"c2qos does not apply.*\[vswitch\.cpu\]"):
        schemes.apply(DEMO, "c2qos")
    cpu = c2qos.bench_scenario(True, vms=4, duration_s=0.01)
    cpu["vswitch"]["interval"] = "5ms"  # Trinity's 5 ms interval, a whole number of ticks
    assert "two VMs" in str(schemes.why_not(schemes.SCHEMES["trinity"], cpu))
    cpu["tenants"][0]["vms"].append({"name": "R", "host": "r"})  # a VM receives
    for w in cpu["workloads"]:
        w["dst"] = "R"
    d = schemes.apply(cpu, "c2qos+trinity")
    assert (d["vswitch"]["cpu"]["limiter"], d["vswitch"]["cpu"]["scheduler"]) == ("c2tb", "hbs")
    assert d["vswitch"]["policy"] == "trinity" and "scheduler" not in d.get("network", {})
    tenantnet.Scenario.from_dict(d).validate()


@pytest.mark.parametrize(("spec", "words"), [
    ("mbfq+static", r"mbfq and static both set the host \(the hosts' virtual switches"),
    ("trinity+qshare", "trinity and qshare both set the queues"),
    ("pmsb+per-queue-ecn", "pmsb and per-queue-ecn both set the ecn"),
    ("elasticswitch+trinity", "elasticswitch and trinity both set the host"),
    ("static+a-es", "static and a-es both set the host"),
    ("mbfq+mbfq", "'mbfq' appears twice"),
    ("mbfq+wfq", "scheme 'wfq' in 'mbfq\\+wfq': expected one of none, static, mbfq"),
])
def test_conflicts_and_unknown_names_are_errors(spec: str, words: str) -> None:
    with pytest.raises(ScenarioError, match=words):
        schemes.apply(DEMO, spec)


def test_why_a_scheme_does_not_apply() -> None:
    no_k = {**PAIRS, "network": {"buffer": "500KB"}}
    assert "ecn_threshold" in str(schemes.why_not(schemes.SCHEMES["pmsb"], no_k))
    assert schemes.why_not(schemes.SCHEMES["trinity"], no_k) is None  # it brings its K
    one = {**DEMO, "workloads": DEMO["workloads"][:2]}
    assert "two tenants" in str(schemes.why_not(schemes.SCHEMES["barberq"], one))
    # pair schemes limit VM pairs: the demo sends to hosts without the tenants' VMs
    for name in ("trinity", "elasticswitch", "c-es", "a-es"):
        assert "no flow runs between two VMs" in str(
            schemes.why_not(schemes.SCHEMES[name], DEMO))
        assert schemes.why_not(schemes.SCHEMES[name], PAIRS) is None
    bare = {k: v for k, v in DEMO.items() if k != "tenants"}
    assert "no VMs" in str(schemes.why_not(schemes.SCHEMES["mbfq"], bare))
    assert schemes.why_not(schemes.SCHEMES["none"], bare) is None


def test_the_schemes_command_lists_every_scheme_and_where_it_applies(tmp_path: Any) -> None:
    p = cli("schemes")
    assert p.returncode == 0, p.stderr
    for name, s in schemes.SCHEMES.items():
        assert f"\n{name} " in "\n" + p.stdout
        for piece in s.pieces:
            assert piece.describe() in p.stdout
    f = tmp_path / "demo.toml"
    f.write_text((tenantnet.Scenario.builtin("demo").text), encoding="utf-8")
    rows = json.loads(cli("schemes", str(f), "--json").stdout)
    applies = {r["scheme"]: r["applies"] for r in rows}
    assert applies["mbfq"] == "yes" and "vswitch CPU" in applies["c2qos"]
    assert "two VMs of its tenant" in applies["trinity"]
    bad = cli("schemes", str(tmp_path / "missing.toml"))
    assert bad.returncode == 2 and "missing.toml" in bad.stderr and "Traceback" not in bad.stderr


def test_trinitys_switches_come_from_the_cores_preset() -> None:
    # the scheme leaves the queues and marking to the trinity preset: the same run
    # as one that writes the preset's values (Trinity's testbed, T:L867-872) itself
    d = schemes.apply(PAIRS, "trinity")
    d["simulation"]["duration"] = "50ms"
    for w in d["workloads"]:
        w["dst"] = "h2"  # both senders into one switch port: it marks
    written = {**d, "network": {**d["network"], "queues": 2, "scheduler": "strict",
                                "dscp_map": {"0": 1}, "ecn_threshold": "30KB",
                                "ecn_scope": "queue", "host_ecn": False}}
    a, b = tenantnet.run(d), tenantnet.run(written)
    drop = ("wall_s", "scenario")
    assert {k: v for k, v in a.summary.items() if k not in drop} == \
        {k: v for k, v in b.summary.items() if k not in drop}
    assert a.summary["ecn_marks"] > 0
    assert a.flows.equals(b.flows)
    # and not the run with the demo's own K (65 packets, port scope)
    own = {**written, "network": {**written["network"], "ecn_threshold": "65pkt",
                                  "ecn_scope": "port"}}
    assert tenantnet.run(own).summary["ecn_marks"] != a.summary["ecn_marks"]


def test_a_schemes_vswitch_table_comes_from_its_registration() -> None:
    from tenantnet.sim.schemes import vswitch_table
    assert vswitch_table("c-es") == {"policy": "elasticswitch", "pair_guarantees": "dynamic",
                                     "elasticswitch": {"profile": "trinity-code"}}
    assert vswitch_table("c-es", pair_guarantees=None, elasticswitch={"bucket": "64KB"}) == {
        "policy": "elasticswitch",
        "elasticswitch": {"profile": "trinity-code", "bucket": "64KB"}}
    with pytest.raises(ValueError, match="qshare"):
        vswitch_table("qshare")


def test_the_reproductions_run_the_registrys_schemes() -> None:
    """Where a reproduction names a registered scheme, it runs the registry's policy
    and profile (its own set-up may add keys, never contradict them)."""
    from tenantnet.reproduce import qshare_fig2, qshare_fig8, trinity
    from tenantnet.sim.schemes import SCHEMES, vswitch_table
    seen = 0
    for mod in (trinity, qshare_fig2, qshare_fig8):
        for name, (_, table) in mod.SCHEMES.items():
            if name not in SCHEMES or table is None:
                continue
            reg = vswitch_table(name)
            own = reg.get(reg["policy"], {})
            assert table["policy"] == reg["policy"], (mod.__name__, name)
            assert table.get(reg["policy"], {}).items() >= own.items(), (mod.__name__, name)
            seen += 1
    assert seen >= 10
