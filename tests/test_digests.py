"""Reference outputs, by digest: a change that is not meant to change results keeps every
one of these; a change that does updates them in the same commit, saying why.

Each digest covers the tables of a short run written as CSV with every float in full
precision (``%.17g``), so it is independent of the Parquet writer's version."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tenantnet
from helpers import Ran

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def cut(name: str, duration: str) -> dict[str, Any]:
    d = tenantnet.Scenario.from_file(EXAMPLES / f"{name}.toml").data()
    d["simulation"]["duration"] = duration
    return d


def dynamic_gp() -> dict[str, Any]:
    """ElasticSwitch's paper profile with dynamic guarantee partitioning (issue 14):
    A1 stops sending to A3 at 150 ms."""
    from builders.partition import scenario
    d = scenario("elasticswitch", "dynamic")
    d["vswitch"]["elasticswitch"] = {"profile": "paper"}
    d["simulation"]["duration"] = "300ms"
    d["workloads"][1]["stop"] = "150ms"
    d["output"] = {"throughput": ["flow"], "sample_interval": "10ms", "queues": False}
    return d


def trinity_tau() -> dict[str, Any]:
    """Trinity with the colour-transition delay τ = 500 µs on Fig. 6's set-up."""
    from builders.pipes import fig6
    d = fig6("trinity", "300Mbps", "300Mbps", duration="200ms")
    d["vswitch"] = {"policy": "trinity", "trinity": {"profile": "paper", "tau": "500us"}}
    return d


CASES: dict[str, tuple[dict[str, Any], str]] = {
    # behaviour as of issue 11 (sized flows complete at the sender's last ACK);
    # vm_rates gained Trinity's rg_gbps, rw_gbps and ES's limit_gbps in issue 14
    # (without them every digest here is what it was: ecc867045ea6aefe,
    # 2dff4e9d46eec3d1, 644e4e7008c2b8be, 0033da196a79dbd3, 757ac9fdc7dd529f,
    # 425c958cc326357c)
    "dctcp-incast": (cut("dctcp-incast", "10ms"), "3e3987c1928bd919"),
    "sp-dwrr-pias": (cut("sp-dwrr-pias", "10ms"), "12363aec9b8a4fb4"),
    "vswitch-mbfq": (cut("vswitch-mbfq", "600ms"), "6522269f99dbea49"),
    "barberq-services": (cut("barberq-services", "80ms"), "c09934fcdf6d29cd"),
    # as of issue 14's dynamic partitioning, ES paper profile and τ
    # Issue 37 added summary.vswitch (packets_shaped, control_packets) to runs with VMs:
    # without it vswitch-mbfq, es-paper-dynamic-gp and trinity-tau are still
    # 29f6734e7d9f9dba, 7e37a442476886c3 and 8593e4bd4266a7d5
    # The defaults became a Linux host's (the `linux` transport profile, its clocks 100
    # ppm apart, partitioned ties): every case changed. Before: dctcp-incast
    # 39f5bbd4570af0d9, sp-dwrr-pias 24c3306ae66c617d, vswitch-mbfq 7f42dafee4b1c241,
    # barberq-services d19f92bc9844e010, es-paper-dynamic-gp 060f44a225b862dd,
    # trinity-tau 649c51b52e1c3b6a
    # The `linux` profile's senders then started with their handshake's RTT sample
    # (`transport.handshake_rtt`): every case but sp-dwrr-pias
    # changed. Before: dctcp-incast 75d3dfe2920742b8, vswitch-mbfq 88971a5a1226103c,
    # barberq-services a5c12c0614403de5, es-paper-dynamic-gp a670aa391eef2b98,
    # trinity-tau a48e57988d939914
    # SACK recovery's PRR then allowed its slow-start segment only on an ACK that advanced
    # SND.UNA and marked nothing newly lost (RFC 9937's SafeACK, Linux's rule): only
    # barberq-services changed (before 1fb0a1bc40c215c2)
    # The `linux` profile's hosts then waited up to 1 us before their NIC took each
    # packet they send (`network.tx_jitter`): every case changed. Before: dctcp-incast
    # 740d3e93865fb560, sp-dwrr-pias b6735892fb6d78dc, vswitch-mbfq c042060a5c0e5df6,
    # barberq-services 908242c129a4cc06, es-paper-dynamic-gp e11b5f805a3a7495,
    # trinity-tau 590e799a65712a42
    "es-paper-dynamic-gp": (dynamic_gp(), "3a1f36d7489c0bbf"),
    "trinity-tau": (trinity_tau(), "53d81d7db2eb3555"),
}


def table_csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, float_format="%.17g").encode()


def digest(r: tenantnet.Results) -> str:
    h = hashlib.sha256()
    for name in ("flows", "throughput", "queues", "links", "queue_stats", "vms", "vm_rates"):
        h.update(table_csv(getattr(r, name)))
    s = dict(r.summary)
    s.pop("wall_s")
    s.pop("control_wall_s", None)
    h.update(repr(sorted(s.items())).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_outputs_are_unchanged(name: str) -> None:
    scenario, expected = CASES[name]
    got = digest(tenantnet.run(scenario))
    assert got == expected, f"{name}: outputs changed ({got}); if meant, update the digest"


# Whole outputs of the commands users run, as of issue 12's start (commit 313e5f0): the
# refactor onto the host-policy, datapath and controller interfaces keeps them all.
# Issue 14 added queries.parquet (empty here) to every run's output: demo and
# vms-pias-8q hash it now; without it their digests are still 313e5f0's
# (e185d328a751916d, 8aa925862c703671), every other file unchanged. vm_rates then
# gained three policy columns (rg_gbps, rw_gbps, limit_gbps, empty outside Trinity
# and ES runs): demo, mbfq-fig6 and vms-pias-8q were 114c51e103abe793,
# bee40a7d595e2ff0 and 972002af3acb3037 before.
# Issue 37 added manifest.json to every results folder and summary.vswitch to runs
# with VMs: hashed without them (and without the summaries' vswitch key), every
# command's digest but the demo's is what it was (mbfq-fig6 f4b09d8f3eb15ae8,
# barberq-fig1 27dceb1b065d9879, barberq-fig2 55052cf38ee4bea9, vms-pias-8q
# 41995aa126fd4b16, trinity-fig6 cf905b22ca2b73c0, -fig7 9b2d7b362acc8dae, -tables
# e1d34e1519a36469, -fig2 6c97b45ea3e6b3d4, -fig12 33e4a76eea62a7a7, -fig9
# cc71be35848145be, -fig8 b07c17a3fce11ce0). The demo now judges whole phases, prints
# verdicts and convergence times and records the vm_data scope; its runs' tables are
# otherwise those of 16fad56b8818fe5b. The claims CSVs of trinity-fig6 and -fig9 then
# cited the papers by section instead of lines of their text files (b8498fc6f62fdbd7,
# b0d6e4fa359e551d before; their other files are unchanged).
# `reproduce` then wrote transport.json (the paper's transport and the profile the run
# used) into every folder: without it and its line in manifest.json, every reproduce
# digest is what it was (mbfq-fig6 4d76c800e559a1ff, barberq-fig1 bf4b7eb4963f0a19,
# -fig2 92526315e844db92, trinity-fig6 d29e9e6296c2ff5f, -fig7 3d2ea9d7db59588d,
# -tables 049c733ef4e75f1c, -fig2 e138e942fb6ed63d, -fig12 c91a1f9a0ca881f5, -fig9
# 8b512f9fdd6f8054, -fig8 08daa924580c68dd).
# The trinity digests changed once more when transport.json's wording of the Trinity
# testbed's transport did; without the file they are still the ones above.
# Parquet tables are hashed as full-precision CSV, CSV files and JSON as their bytes
# (without the wall time); figures and HTML are not (they depend on matplotlib).
# Issue 40 put every reproduction's comparison with its paper in one shape (claim, ours,
# paper: only what the paper prints, expected: our bound or derived value, ok, status
# with its reason, note) and gave barberq-fig1 and -fig2 one: without those files every
# reproduce digest's other files are unchanged (checked file by file against the runs
# before); before, barberq-fig1 acb816a8eb5ed067, barberq-fig2 e8a21424c8152f1a, mbfq-
# fig6 8b833979a13403be, trinity-fig12 a98036577fcdb411, trinity-fig2 1850db589df292e8,
# trinity-fig6 1c517311f454c2c9, trinity-fig7 896671d8fdfbdf4b, trinity-fig8
# cb4fac820d2cd5af, trinity-fig9 fe97d12b3d14769d, trinity-tables 625e10f17689eb72.
# The defaults then became a Linux host's (the `linux` transport profile, its clocks 100
# ppm apart, partitioned ties; `reproduce` runs each paper's profile): every command's
# digest changed. Before: demo e3073503d4c6e93e, mbfq-fig6 e7a6d46c3b6733f2, barberq-fig1
# d3efeaf060a240a1, -fig2 471a6e78deb825df, vms-pias-8q 231add103b9bcfeb, trinity-fig6
# 8162f6932e170e2a, -fig7 0d8e76b2f3bd4560, -fig2 26e95b6146bc081b, -fig12
# ea84d2ce53b735fa, -shares 8c3b59b538aedf3b.
# The `linux` profile's senders then started with their handshake's RTT sample
# (`transport.handshake_rtt`): demo 3a7a1cd893a2b31a, trinity-fig6 0054cddd00426129,
# -fig7 9c149e1126023dc7 and -shares f3c97d661e843523 before; the others unchanged.
# SACK recovery's PRR then allowed its slow-start segment only on an ACK that advanced
# SND.UNA and marked nothing newly lost (RFC 9937's SafeACK, Linux's rule): trinity-fig6
# 7123bb23214d15f7, -fig7 3188c7e120cae681, -fig2 ab8c3533ba9a9225, -fig12
# 335348d0c4c7d7a7 and -shares e48a37f59fa8bf0a before; the others unchanged.
# The `linux` profile's hosts then waited up to 1 us before their NIC took each packet
# they send (`network.tx_jitter`): every command but barberq-fig1 and -fig2 (the `htsim`
# profile) changed. Before: demo 89226f966bf87d72, mbfq-fig6 4f7afaedd67751fa,
# vms-pias-8q fc2a09b604fc3fe3, trinity-fig6 17e0f843b0a275b9, -fig7 1a4aa2ce032b9df8,
# -fig2 b6df698f7423f54b, -fig12 cb507f5d264f6608, -shares 4a54ebf16bb2fbd3.
# A SACK sender after a timeout then grew its window only on ACKs that advanced SND.UNA
# (Linux's tcp_may_raise_cwnd, ns-3's CA_LOSS), not on SACKs alone: trinity-fig6
# ffe8064302bdbd31 before; the others unchanged.
COMMANDS: dict[str, tuple[list[str], str]] = {
    "demo": (["demo"], "9ce8326dca8ab264"),
    "mbfq-fig6": (["reproduce", "mbfq-fig6"], "7bfa4f88116bd26b"),
    "barberq-fig1": (["reproduce", "barberq-fig1"], "7835a19e640c60a2"),
    "barberq-fig2": (["reproduce", "barberq-fig2"], "ebb9f661568c92e5"),
    "vms-pias-8q": (["run", str(SCENARIOS / "vms-pias-8q.toml")], "acd7bc0031e116bf"),
    # Trinity's default profile became `refined` (the paper's controller with its named
    # departures), and every Trinity reproduction reports `refined`, `paper` and `code`
    # side by side, and Fig. 12 checks its claim as three numbers (the first 10 ms, the
    # median sample, the link): every Trinity digest changed (before: trinity-fig6 94ed3c31afb789ee,
    # -fig7 0a6483bed44ea76a, -tables 32f21a8f98fa4020, -fig2 f365311cf21b0cec, -fig12
    # a0b8da800b50409d, -fig9 a57c14c6385e7e53, -fig8 37c5577d3ad9bf06); the `paper`
    # rows are what the default's were (checked value by value)
    "trinity-fig6": (["reproduce", "trinity-fig6"], "744c478a09efdb58"),
    "trinity-fig7": (["reproduce", "trinity-fig7"], "b58cf8cdb6fc1366"),
    "trinity-fig2": (["reproduce", "trinity-fig2"], "850eac6c5b3f117e"),
    "trinity-fig12": (["reproduce", "trinity-fig12"], "dc0e66417e7af112"),
    "trinity-shares": (["reproduce", "trinity-shares"], "d0a2147a8d2c51ff"),
}


# Trinity's three longest reproductions are digested scaled (tests/builders/scaled.py):
# their points and their comparison with the paper, from the session's runs that
# tests/test_trinity_repro.py checks. Whole, as commands, their folders' digests were
# trinity-fig8 594073b47118b278, -tables e566e31dafaadb3d and -fig9 39b42ebfc33e651e
# when they were moved here (issue 42); `scripts/claims_table.py --run` runs them.
# Under the defaults of a Linux host (above) -tables and -fig9 changed (before
# e1e27b6e2d4ca199 and 54ff96c25feb81c3); -fig8 runs under the former defaults
# (conftest's `htsim_scheduled`) and kept its digest. With the handshake's RTT sample
# (`transport.handshake_rtt`, above) -tables changed again (before f1245a488d119b6f), and
# with PRR's SafeACK rule (above) once more (before 825ff2275311d815). With the `linux`
# profile's 1 us transmit wait (above) -tables and -fig9 changed (before
# 92611143d307fea3 and dac2efaf7374afde); -fig8 kept its digest (former defaults).
SCALED: dict[str, str] = {
    "trinity_fig8_scaled": "d42c8cd2f247b0f0",
    "trinity_tables_scaled": "ac5ac22e0c953f0e",
    "trinity_fig9_scaled": "6b2f829bab9d7565",
}


@pytest.mark.parametrize("fixture", sorted(SCALED))
def test_scaled_reproductions_are_unchanged(fixture: str,
                                            request: pytest.FixtureRequest) -> None:
    h = hashlib.sha256()
    for table in request.getfixturevalue(fixture):
        h.update(table_csv(table))
    got = h.hexdigest()[:16]
    assert got == SCALED[fixture], f"{fixture}: outputs changed ({got}); if meant, " \
        "update the digest"


def folder_digest(out: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(out.rglob("*")):
        if f.suffix not in (".csv", ".parquet", ".json"):
            continue
        h.update(str(f.relative_to(out)).encode())
        if f.suffix == ".parquet":
            h.update(table_csv(pd.read_parquet(f)))
        elif f.suffix == ".json":
            s = json.loads(f.read_text())
            s.pop("wall_s", None)
            s.pop("control_wall_s", None)
            h.update(json.dumps(s, sort_keys=True).encode())
        else:
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_outputs_are_unchanged(name: str, ran: Ran) -> None:
    args, expected = COMMANDS[name]
    out = ran(*args)  # the session's run, which the command's own tests read too
    got = folder_digest(out)
    # the documentation's table of claims holds this run's comparison with the paper
    stored = Path(__file__).resolve().parents[1] / "docs" / "claims"
    for f in out.glob("*_vs_paper.csv"):
        assert f.read_bytes() == (stored / f.name).read_bytes(), (
            f"docs/claims/{f.name} is not this run's: python scripts/claims_table.py")
    assert got == expected, f"{name}: outputs changed ({got}); if meant, update the digest"


def test_the_permutation_benchmark_is_unchanged() -> None:
    """The benchmark's scenario cut to 30 ms: events, packets and every flow's rate."""
    sc = tenantnet.Scenario.builtin("permutation")
    d = sc.data()
    d["simulation"]["duration"] = "30ms"
    r = tenantnet.run(d)
    s = r.summary
    got = (s["events"], s["packets_sent"], s["data_packets_sent"], s["ecn_marks"],
           hashlib.sha256(table_csv(r.flows)).hexdigest()[:16])
    # partitioned ties became the default (the scenario names the `htsim` profile): before,
    # (13563738, 1701170, 853072, 142816, "4ac7fce1101f8a38")
    assert got == (13568966, 1700702, 852848, 144309, "fbbd765029f6e9f5"), got
