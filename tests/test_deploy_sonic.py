"""`tenantnet deploy sonic`: a scheme's switch pieces as SONiC config_db, checked by
the SONiC rule validator; the schemes SONiC cannot express refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tenantnet import Scenario, schemes
from tenantnet.sonic.configdb import validate
from tenantnet.sonic.fabric import sonic_configs, sonic_queue

ROOT = Path(__file__).resolve().parents[1]
LEAF_SPINE = ROOT / "examples" / "compare-leaf-spine.toml"


def configs(scheme: str) -> tuple[dict[str, dict], list[str]]:
    return sonic_configs(Scenario.from_file(LEAF_SPINE), scheme)


def ports_per_switch() -> dict[str, int]:
    """Each switch's links in the leaf-spine example (hosts per leaf plus spines, or
    leaves), from the topology table."""
    import tomllib
    t = tomllib.loads(LEAF_SPINE.read_text())["topology"]
    leaves, spines, hosts = t["leaves"], t["spines"], t["hosts_per_leaf"]
    return {**{f"leaf{i}": hosts + spines for i in range(leaves)},
            **{f"spine{i}": leaves for i in range(spines)}}


@pytest.mark.parametrize("scheme", ["trinity", "per-queue-ecn", "static", "none"])
def test_every_switch_config_passes_the_validator_and_covers_every_port(scheme: str) -> None:
    dbs, _ = configs(scheme)
    assert {sw: len(db["PORT"]) for sw, db in dbs.items()} == ports_per_switch()
    for sw, db in dbs.items():
        assert validate(db) == [], sw
        n = len(db["TC_TO_QUEUE_MAP"]["tenantnet"])
        assert len(db["QUEUE"]) == n * len(db["PORT"])
        assert set(db["PORT_QOS_MAP"]) == set(db["PORT"])


def test_trinity_is_two_strict_queues_red_lowest_with_ecn_at_30_kb_and_a_4_mb_pool() -> None:
    dbs, notes = configs("trinity")
    db = dbs["leaf0"]
    assert db["SCHEDULER"] == {"tenantnet_strict": {"type": "STRICT"}}
    dscp = db["DSCP_TO_TC_MAP"]["tenantnet"]
    # red (DSCP 0) in tenantnet's low queue 1: SONiC's queue 0, served last
    assert dscp["0"] == "0" and dscp["1"] == "1" and dscp["2"] == "1"
    wred = db["WRED_PROFILE"]["tenantnet_ecn"]
    assert (wred["ecn"], wred["green_min_threshold"]) == ("ecn_all", "30000")
    assert all(q["wred_profile"] == "tenantnet_ecn" for q in db["QUEUE"].values())
    pool = db["BUFFER_POOL"]["egress_lossy_pool"]
    assert (pool["mode"], pool["size"]) == ("dynamic", "4000000")
    assert db["BUFFER_PROFILE"]["tenantnet_queue"]["dynamic_th"] == "0"  # alpha 1
    assert db["PORT"]["Ethernet0"]["speed"] == "10000" and notes == []


def test_per_queue_ecn_keeps_a_dwrr_queue_per_tenant_and_says_what_sonic_changes() -> None:
    dbs, notes = configs("per-queue-ecn")
    db = dbs["spine0"]
    assert {s["type"] for s in db["SCHEDULER"].values()} == {"DWRR"}
    assert len(db["TC_TO_QUEUE_MAP"]["tenantnet"]) == 3
    assert any("each of the 3 queues" in n for n in notes)


def test_static_is_one_fifo_with_the_port_buffer_as_its_threshold() -> None:
    dbs, notes = configs("static")
    db = dbs["leaf1"]
    data = Scenario.from_file(LEAF_SPINE).data()
    buffer = data["network"]["buffer"]
    assert db["BUFFER_PROFILE"]["tenantnet_queue"]["static_th"] == str(
        int(buffer.removesuffix("KB")) * 1000)
    assert set(db["DSCP_TO_TC_MAP"]["tenantnet"].values()) == {"0"} and notes == []


def test_strict_queues_are_numbered_from_the_top_in_sonic() -> None:
    net = {"queues": 4, "scheduler": "sp_dwrr", "strict_queues": 1}
    assert [sonic_queue(q, net) for q in range(4)] == [3, 0, 1, 2]
    net = {"queues": 3, "scheduler": "strict", "strict_queues": 1}
    assert [sonic_queue(q, net) for q in range(3)] == [2, 1, 0]
    net = {"queues": 3, "scheduler": "dwrr", "strict_queues": 1}
    assert [sonic_queue(q, net) for q in range(3)] == [0, 1, 2]


@pytest.mark.parametrize("scheme,why", [("barberq", "SONiC cannot express BarberQ"),
                                        ("pmsb", "SONiC cannot express PMSB")])
def test_a_scheme_sonic_cannot_express_is_refused_in_one_line(scheme: str, why: str,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "sonic"
    p = subprocess.run([sys.executable, "-m", "tenantnet", "deploy", "sonic", str(LEAF_SPINE),
                        "--scheme", scheme, "-o", str(out)], capture_output=True, text=True)
    assert p.returncode == 2 and not out.exists()
    assert len(p.stderr.strip().splitlines()) == 1 and why in p.stderr, p.stderr


def test_the_command_writes_a_validated_file_per_switch(tmp_path: Path) -> None:
    out = tmp_path / "sonic"
    p = subprocess.run([sys.executable, "-m", "tenantnet", "deploy", "sonic", str(LEAF_SPINE),
                        "--scheme", "trinity", "-o", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    files = sorted(f.name for f in out.glob("*.json") if f.name != "manifest.json")
    assert files == sorted(f"{sw}.json" for sw in ports_per_switch())
    for f in files:
        assert validate(json.loads((out / f).read_text())) == []


def test_the_validator_catches_bad_ecn_and_buffer_tables() -> None:
    db = configs("trinity")[0]["leaf0"]
    bad = json.loads(json.dumps(db))
    bad["WRED_PROFILE"]["tenantnet_ecn"]["green_min_threshold"] = "40000"
    bad["BUFFER_PROFILE"]["tenantnet_queue"]["static_th"] = "100"
    bad["QUEUE"]["Ethernet0|0"]["wred_profile"] = "nope"
    bad["BUFFER_QUEUE"]["Ethernet0|0-9"] = {"profile": "tenantnet_queue"}
    errs = validate(bad)
    assert any("green thresholds" in e for e in errs)
    assert any("exactly one of static_th, dynamic_th" in e for e in errs)
    assert any("wred_profile 'nope'" in e for e in errs)
    assert any("BUFFER_QUEUE|Ethernet0|0-9" in e for e in errs)


def test_a_tuned_scenario_deploys_as_it_is() -> None:
    """Without --scheme the scenario's own settings are written (as `advise` writes a
    tuned one); a scheme given would set its preset over them."""
    sc = Scenario.from_file(LEAF_SPINE)
    data = schemes.apply(sc.data(), "per-queue-ecn", str(sc.base_dir))

    def own(d: dict) -> dict[str, dict]:
        return sonic_configs(Scenario.from_dict(d, str(LEAF_SPINE), sc.base_dir), None)[0]

    assert own(data) == configs("per-queue-ecn")[0]
    data["network"]["ecn_threshold"] = "20000B"
    profiles = [p for db in own(data).values() for p in db["WRED_PROFILE"].values()]
    assert profiles and all(p["green_min_threshold"] == "20000" for p in profiles)
    qshare = schemes.apply(sc.data(), "qshare", str(sc.base_dir))
    with pytest.raises(ValueError, match="QShare's switch configuration follows"):
        own(qshare)

