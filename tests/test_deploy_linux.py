"""`tenantnet deploy linux`: a host scheme's tc configuration, printed (`--dry-run`) and
set over netlink (`--apply`): both give the same qdiscs, classes and filters."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import classifying, cli, namespaces_why_not
from tenantnet import Scenario, ScenarioError, schemes
from tenantnet.linux.tc import plan

# Real namespaces, links and wall-clock rates: `make test` runs these alone, after
# the rest has run on every core (the `serial` marker).
pytestmark = pytest.mark.serial

ADDRS = {"analytics/h0": "10.0.0.1", "web/h0": "10.0.0.2"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("deploy") / "demo.toml"
    path.write_text(Scenario.builtin("demo").text, encoding="utf-8")
    return path


def test_static_is_an_htb_class_per_vm_at_its_guarantee(demo: Path) -> None:
    p = plan(Scenario.from_file(demo), "static", "h0", "eth0", ADDRS)
    assert p.nic_bps == 10_000_000_000
    assert [(v.vm, v.addr, v.rate_bps) for v in p.vms] == [
        ("analytics/h0", "10.0.0.1", 3_000_000_000), ("web/h0", "10.0.0.2", 6_000_000_000)]
    cmds = p.commands()
    assert cmds[0] == "tc qdisc replace dev eth0 root handle 1: htb default 9999"
    assert any("classid 1:10 htb rate 3000000000bit ceil 3000000000bit" in c for c in cmds)
    # everything else: what the guarantees leave, borrowing up to the NIC
    assert any("classid 1:9999 htb rate 1000000000bit ceil 10000000000bit" in c for c in cmds)
    assert cmds[-1] == ("tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip "
                        "src 10.0.0.2/32 flowid 1:11")


def test_none_is_the_nic_fifo_of_the_host_buffer(demo: Path) -> None:
    p = plan(Scenario.from_file(demo), "none", "h1", "eth1", {})
    # the host buffer in bytes (a GSO packet may be 64 KB: a packet count would not do)
    assert p.commands() == ["tc qdisc replace dev eth1 root handle 1: bfifo limit 500000b"]


@pytest.mark.parametrize("scheme,host,addrs,message", [
    ("static", "h0", {"web/h0": "10.0.0.2"}, "VM analytics/h0 on h0 has no address"),
    ("static", "h0", {**ADDRS, "web/h0": "10.0.0.300"}, "expected an IPv4 address"),
    ("static", "h0", {**ADDRS, "web/h1": "10.0.0.3"}, "--addr web/h1: no such VM on h0"),
    ("static", "h7", ADDRS, "--host h7: not a host of the scenario"),
    ("trinity", "h0", ADDRS, "not deployable yet"),
])
def test_bad_input_names_what_is_wrong(demo: Path, scheme: str, host: str,
                                       addrs: dict[str, str], message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(")):
        plan(Scenario.from_file(demo), scheme, host, "eth0", addrs)


def _namespaces_work() -> str | None:
    """Why this machine cannot run the netlink test, or None."""
    try:
        import pyroute2  # noqa: F401
    except ImportError:
        return "needs pyroute2 (pip install 'tenantnet[linux]')"
    return namespaces_why_not()


@pytest.fixture
def two_namespaces() -> Iterator[tuple[str, str]]:
    why = _namespaces_work()
    if why:
        pytest.skip(why)
    names = tuple(f"tn-test-{uuid.uuid4().hex[:8]}" for _ in range(2))
    try:
        for ns in names:
            subprocess.run(["ip", "netns", "add", ns], check=True)
            subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "add", "up0", "type",
                            "veth", "peer", "name", "up1"], check=True)
        yield names  # type: ignore[misc]
    finally:
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _shown(ns: str) -> list[str]:
    out = []
    for what in ("qdisc", "class", "filter"):
        r = subprocess.run(["ip", "netns", "exec", ns, "tc", what, "show", "dev", "up0"],
                           capture_output=True, text=True, check=True)
        out += sorted(line.strip() for line in r.stdout.splitlines() if line.strip())
    return out


@pytest.mark.parametrize("scheme", ["static", "none"])
def test_dry_run_applied_with_tc_equals_apply(demo: Path, scheme: str,
                                              two_namespaces: tuple[str, str]) -> None:
    by_tc, by_netlink = two_namespaces
    args = [sys.executable, "-m", "tenantnet", "deploy", "linux", str(demo), "--host", "h0",
            "--scheme", scheme, "--dev", "up0", *[f"--addr={k}={v}" for k, v in ADDRS.items()
                                                  if scheme == "static"]]
    dry = subprocess.run([*args, "--dry-run"], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    for cmd in dry.stdout.splitlines():
        subprocess.run(["ip", "netns", "exec", by_tc, *cmd.split()], check=True)
    applied = subprocess.run([*args, "--apply", "--netns", by_netlink],
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    shown = _shown(by_tc)
    assert shown == _shown(by_netlink)
    if scheme == "static":
        assert any("class htb 1:10 parent 1:1" in s and "rate 3Gbit ceil 3Gbit" in s
                   for s in shown), shown
        assert any("match 0a000002/ffffffff at 12" in s for s in shown), shown


def test_mbfq_is_static_s_classes_at_the_nics_rate_with_a_note_on_its_agent(
        demo: Path) -> None:
    p = plan(Scenario.from_file(demo), "mbfq", "h0", "eth0", ADDRS)
    assert [(v.rate_bps, v.guarantee_bps, v.tenant) for v in p.vms] == [
        (10_000_000_000, 3_000_000_000, "analytics"), (10_000_000_000, 6_000_000_000, "web")]
    assert json.loads(p.mbfq) == {}
    res = cli("deploy", "linux", str(demo), "--host", "h0", "--scheme", "mbfq", "--dev",
              "eth0", *[f"--addr={k}={v}" for k, v in ADDRS.items()], "--dry-run")
    assert res.returncode == 0, res.stderr
    # each VM class may borrow the whole NIC, at half of it otherwise: at the NIC's rate
    # each, HTB would let the two send twice the NIC between them
    assert "classid 1:10 htb rate 5000000000bit ceil 10000000000bit" in res.stdout
    assert "classid 1:11 htb rate 5000000000bit ceil 10000000000bit" in res.stdout
    assert res.stdout.rstrip().endswith("runs it")
    res = cli("deploy", "linux", str(demo), "--host", "h0", "--scheme", "static", "--dev",
              "eth0", *[f"--addr={k}={v}" for k, v in ADDRS.items()], "--dry-run",
              "--for", "1")
    assert res.returncode == 2 and "--for applies to --apply under mbfq" in res.stderr


def test_a_tuned_scenario_deploys_as_it_is(demo: Path) -> None:
    """Without --scheme, the scenario's own host policy with its settings as they are
    (as `advise` writes a tuned one)."""
    sc = Scenario.from_file(demo)
    data = schemes.apply(sc.data(), "mbfq", str(sc.base_dir))
    data["vswitch"].setdefault("mbfq", {})["interval"] = "50ms"
    p = plan(Scenario.from_dict(data, str(demo), sc.base_dir), None, "h0", "eth0", ADDRS)
    assert p.scheme == "mbfq" and json.loads(p.mbfq)["interval"] == "50ms"
    data["vswitch"]["policy"] = "trinity"
    with pytest.raises(ScenarioError, match="runs scheme 'trinity': deploy linux writes"):
        plan(Scenario.from_dict(data, str(demo), sc.base_dir), None, "h0", "eth0", ADDRS)


def test_apply_mbfq_runs_the_agent_and_sets_the_classes(
        demo: Path, two_namespaces: tuple[str, str]) -> None:
    ns = two_namespaces[0]
    res = cli("deploy", "linux", str(demo), "--host", "h0", "--scheme", "mbfq", "--dev",
              "up0", *[f"--addr={k}={v}" for k, v in ADDRS.items()], "--apply", "--netns",
              ns, "--for", "0.35", "-v")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[1] == f"MBFQ's agent runs on up0 in {ns} for 0.35 s"
    # an idle NIC: the macroscheduler keeps the microschedulers off, every T
    assert lines[2:] == [f"0.{k} s: NIC 0% busy; microschedulers off" for k in (1, 2, 3)]
    shown = _shown(ns)
    for vm_class in ("1:10", "1:11"):  # the VMs' classes, borrowing the NIC while off
        assert any(f"class htb {vm_class} " in s and "rate 5Gbit ceil 10Gbit" in s
                   for s in shown), shown


def test_where_switches_classify_a_tenants_vms_are_tagged_with_its_dscp(
        two_namespaces: tuple[str, str]) -> None:
    sc = Scenario.from_dict(classifying("dwrr"))
    p = plan(sc, "none", "h1", "up0", {"b/h1": "10.0.0.5"})
    assert p.tags == [("10.0.0.5", 1)]
    assert p.commands()[-1].endswith("--apply loads: 10.0.0.5 -> 1")
    assert plan(sc, "none", "h0", "up0", {}).tags == []  # tenant a's DSCP is 0
    p.apply(two_namespaces[0])
    r = subprocess.run(["ip", "netns", "exec", two_namespaces[0], "tc", "filter", "show",
                        "dev", "up0", "egress"], capture_output=True, text=True, check=True)
    assert "bpf" in r.stdout and "tn_dscp" in r.stdout and "direct-action" in r.stdout
