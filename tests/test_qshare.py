"""QShare's controller from Python: Table 1 and Fig. 10 scaled down, the SONiC
output and its validator, the CLI round trip."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers import cli
from tenantnet.reproduce import qshare as rq
from tenantnet.sim.qshare import FAT_TREE_16, Controller
from tenantnet.sonic.configdb import config_db, validate


def small(k: int = 8, r: int = 1, slots: int = 40, ha: float | None = 0.5) -> Controller:
    c = Controller(FAT_TREE_16 | {"k": k, "oversubscription": r}, slots=slots,
                   cq_weight=rq.CQ_WEIGHT)
    c.fill(3, mean_vms=20, ha=ha)
    return c


def test_scarcity_measures_are_consistent() -> None:
    for r in (1, 4, 16):
        c = small(r=r)
        s = c.scarcity(10, 1)
        print(f"\nk=8 {r}:1: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                           for k, v in s.items()))
        assert abs(s["rnl_lt9"] + s["rnl_9_12"] + s["rnl_gt12"] - 100) < 1e-9
        # a tenant that never contends always gets its queues, so RNI >= RND
        assert s["rni"] >= s["rnd"] - 1e-9
        assert s["rnd"] >= s["rnd_strict"] - 1e-9
        assert s["dscp_exhausted"] == 0 and s["dscp_max"] <= 63
        links = c.links()
        assert max(n for *_, n in links) == s["max_per_port"]
        assert all(res <= cap for _, _, cap, res, _ in links)


def test_fluid_model_is_work_conserving_and_never_below_the_guarantee() -> None:
    c = small(r=4)
    used = np.array([link[3] > 0 for link in c.links()])
    for sharing in ("per-link", "max-min"):
        gains = []
        for r_in in (0.0, 0.5, 0.9):
            gs, uq_, us_ = c.gain_at(r_in, 2, sharing)
            uq, us = np.array(uq_), np.array(us_)
            g = float(np.mean(gs))
            gains.append(g)
            assert min(gs) >= 1.0 - 1e-9
            assert (uq <= 1 + 1e-9).all() and (uq >= us - 1e-9).all()
            print(f"\n{sharing} r_in {r_in}: mean gain {g:.2f}; median utilisation of reserved "
                  f"links QShare {np.median(uq[used]):.3f}, static {np.median(us[used]):.3f}")
        assert gains[0] < gains[1] < gains[2], "idle tenants' bandwidth goes to the active ones"
    with pytest.raises(ValueError, match="sharing"):
        c.gain_at(0.5, 1, "fair")


def sonic_for(c: Controller) -> dict[str, dict[str, object]]:
    b = c.bind({t: 1.0 + (t % 7) for t in c.tenants()}, max_weight=100)
    return config_db(c.switch_ports(b))


def test_sonic_config_passes_the_yang_rules_and_the_validator_catches_each_rule() -> None:
    dbs = sonic_for(small(k=4, slots=20))
    assert dbs
    for sw, db in dbs.items():
        assert validate(db) == [], sw
    db = next(iter(dbs.values()))
    sched = next(iter(db["SCHEDULER"]))  # type: ignore[arg-type]
    port_q = next(iter(db["QUEUE"]))  # type: ignore[arg-type]
    dmap = next(iter(db["DSCP_TO_TC_MAP"]))  # type: ignore[arg-type]
    breakages = {
        "type": lambda d: d["SCHEDULER"][sched].update(type="PRIORITY"),
        "weight 0": lambda d: d["SCHEDULER"][sched].update(weight="0"),
        "weight 101": lambda d: d["SCHEDULER"][sched].update(weight="101"),
        "dangling scheduler": lambda d: d["QUEUE"][port_q].update(scheduler="nope"),
        "queue 8": lambda d: d["QUEUE"].update({"Ethernet0|8": d["QUEUE"][port_q]}),
        "dscp 64": lambda d: d["DSCP_TO_TC_MAP"][dmap].update({"64": "1"}),
        "tc 8": lambda d: d["DSCP_TO_TC_MAP"][dmap].update({"5": "8"}),
        "tc_to_queue 9": lambda d: d["TC_TO_QUEUE_MAP"]["qshare"].update({"9": "1"}),
        "missing map": lambda d: d["TC_TO_QUEUE_MAP"].clear(),
    }
    for name, breaks in breakages.items():
        bad = copy.deepcopy(db)
        breaks(bad)
        assert validate(bad), name


def test_dscp_values_never_collide_on_a_port() -> None:
    c = small(k=4, slots=40)
    b = c.bind({t: float(t) for t in c.tenants()}, max_weight=100)
    for _, queues in b["ports"]:
        ds = [b["dscp"][t] for _, ts, _ in queues for t in ts if t in b["dedicated"]]
        assert len(ds) == len(set(ds)) and 0 not in ds
        assert len(queues) <= 8




def test_score_follows_eq_1_and_2_from_usage() -> None:
    c = Controller(FAT_TREE_16 | {"k": 4}, slots=6)
    tid = c.place([100_000_000] * 10)
    assert tid is not None
    assert c.tenants()[tid]["servers"] == [("h0", 6), ("h1", 4)]
    # B_j = 100 M * min(6, 4) = 400 M on both servers; busiest direction 300 M: U = 0.75
    usage = [("h0", 200e6, 100e6), ("h1", 0.0, 300e6)]
    assert abs(c.score(tid, usage, k=2.0) - 2.0 * 1e9 * 0.75) < 1e-3
    assert c.score(tid) == 1e9
    with pytest.raises(ValueError, match="not a server"):
        c.score(tid, [("core0", 1.0, 1.0)])


def test_cli_place_bind_emit_round_trip(tmp_path: Path) -> None:
    tenants = tmp_path / "t.csv"
    tenants.write_text("vms,guarantee_mbps,ha\n10,100,0.5\n20,300,\n4,50,0.5\n30,200,0.5\n")
    out = tmp_path / "p"
    p = cli("qshare", "place", "--k", "4", "--slots", "10", "--tenants", str(tenants),
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    # the saved state replays to exactly the same datacenter
    a = Controller.load(out / "state.json")
    b = Controller.load(out / "state.json")
    assert a.tenants() == b.tenants() and a.links() == b.links()
    assert len(a.tenants()) == 4
    assert cli("qshare", "bind", str(out)).returncode == 0
    binding = json.loads((out / "binding.json").read_text())
    assert set(binding["dedicated"]) == {0, 1, 2, 3}
    # measured usage: tenant 0 busy on one of its servers, the others idle
    server = a.tenants()[0]["servers"][0][0]
    use = tmp_path / "use.csv"
    use.write_text(f"tenant,server,inbound_bps,outbound_bps\n0,{server},1e9,0\n")
    assert cli("qshare", "bind", str(out), "--usage", str(use)).returncode == 0
    scores = json.loads((out / "binding.json").read_text())["scores"]
    assert scores["0"] == 10 * 100e6 and scores["1"] == 0.0
    use.write_text("tenant,server,inbound_bps,outbound_bps\n0,core0,1,0\n")
    p = cli("qshare", "bind", str(out), "--usage", str(use))
    assert p.returncode == 2 and "not a server" in p.stderr
    p = cli("qshare", "emit-sonic", str(out), "--out", str(tmp_path / "sonic"))
    assert p.returncode == 0, p.stderr
    files = sorted((tmp_path / "sonic").glob("*.json"))
    assert files
    for f in files:
        assert validate(json.loads(f.read_text())) == []


@pytest.mark.parametrize("text,fragment", [
    ("vms,guarantee_mbps\nten,100\n", "line 2"),
    ("vms,guarantee_mbps\n0,100\n", "vms >= 1"),
    ("vms,guarantee_mbps,ha\n5,100,1.5\n", "0 <= ha < 1"),
    ("size,rate\n5,100\n", "expected columns vms"),
])
def test_cli_rejects_bad_tenant_files(tmp_path: Path, text: str, fragment: str) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(text)
    p = cli("qshare", "place", "--k", "4", "--tenants", str(f), "--out", str(tmp_path / "o"))
    assert p.returncode == 2 and fragment in p.stderr and str(f) in p.stderr, p.stderr
    assert not (tmp_path / "o").exists()


def test_below_sixty_percent_load_no_tenant_contends() -> None:
    df = rq.load_sweep(loads=(0.4, 0.95), k=8, slots=100, lifetime_s=50.0, horizon_s=300.0)
    print("\n" + df.round(2).to_string(index=False))
    low, high = df.iloc[0], df.iloc[1]
    assert low["rnd_min"] == 100.0 and low["rejected"] == 0
    assert high["rnd_mean"] < 100.0 and high["rejected"] > 0


def test_a_random_graph_places_binds_and_runs_packets(tmp_path: Path) -> None:
    topo = {"kind": "jellyfish", "switches": 10, "degree": 3, "hosts_per_switch": 3,
            "fabric_rate": "20Gbps", "seed": 4}
    f = tmp_path / "jf.toml"
    f.write_text("[topology]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in topo.items()))
    out = tmp_path / "p"
    p = cli("qshare", "place", "--topology", str(f), "--slots", "10", "--fill", "2", "--ha", "0.5",
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    c = Controller.load(out / "state.json")
    assert len(c.tenants()) > 5
    assert max(t["layer"] for t in c.tenants().values()) >= 3, "some TRs span switches"
    assert all(res <= cap for _, _, cap, res, _ in c.links())
    # every VM's path climbs link by link from its server to the TR's root
    names = c.links()
    for t in c.tenants().values():
        for (server, _), path in zip(t["servers"], t["paths"], strict=True):
            at = server
            for link in path:
                upper, lower = names[link][0], names[link][1]
                assert at in (upper, lower)
                at = lower if at == upper else upper
            assert at == t["root"]
    rows = list(csv.DictReader((out / "tenants.csv").open(encoding="utf-8")))
    assert {r["path_rank"] for r in rows} <= {"0", "1", "2"}
    bad = cli("qshare", "place", "--topology", str(f), "--fill", "2", "--k-paths", "0",
              "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "--k-paths: '0': expected a whole number from 1 to 16" \
        in bad.stderr, bad.stderr
    assert not (tmp_path / "bad").exists()
    # the same fabric carries packets: shortest-path ECMP routing works on any graph
    from helpers import simulate
    r, _ = simulate({"simulation": {"duration": "2ms"}, "topology": topo,
                     "workloads": [{"kind": "permutation"}]})
    assert r.summary["packets_delivered"] > 1000


def test_fig10_utilisation_matches_the_paper_and_gains_rise(tmp_path: Path) -> None:
    files = rq.reproduce_fig10(tmp_path)
    assert all(f.exists() for f in files)
    gain = pd.read_csv(tmp_path / "qshare_fig10_gain.csv")
    util = pd.read_csv(tmp_path / "qshare_fig10_util.csv").rename(
        columns=lambda c: c.removesuffix("_utilisation"))
    print("\n" + gain.round(2).to_string())
    med = util.median()
    print(f"r_in 0.5 median utilisation: QShare {med['qshare']:.3f} (paper ~0.6), max-min "
          f"{med['qshare_max_min']:.3f}, static {med['static']:.3f} (paper ~0.25); full links "
          f"{(util['qshare'] > 0.999).mean():.3f} (paper ~0.14)")
    # Fig. 10(b): half the links above ~60 % under QShare against ~25 % for static
    assert abs(med["qshare"] - 0.6) < 0.1 and abs(med["static"] - 0.25) < 0.1
    assert (util["qshare"] >= util["static"] - 1e-9).all()
    assert (util["qshare_max_min"] >= util["qshare"] - 1e-9).all()
    # gains rise with the inactive ratio; max-min never gives less than per-link
    assert (gain["mean_gain"].diff().dropna() > 0).all()
    assert (gain["mean_gain_max_min"] >= gain["mean_gain"] - 1e-9).all()
    assert gain["mean_gain"].iloc[-1] > 10 * gain["mean_gain"].iloc[0]
    # read with 40 Gb/s server-facing ports, Fig. 10(a)'s "above 3x for every r_in"
    assert (gain["mean_gain_40g_server_ports"] > 3).all()
    assert (gain["mean_gain_40g_server_ports"] >= gain["mean_gain"] - 1e-9).all()


GRAPH = """\
[topology]
kind = "graph"
hosts = ["a0", "a1", "b0", "b1", "c0", "c1"]
switches = ["ta", "tb", "tc", "x", "y"]
link_rate = "10Gbps"
links = [
  { a = "ta", b = "x", rate = "20Gbps" }, { a = "tb", b = "x", rate = "20Gbps" },
  { a = "tb", b = "y", rate = "20Gbps" }, { a = "tc", b = "y", rate = "20Gbps" },
  { a = "ta", b = "tc", rate = "5Gbps" },
  { a = "a0", b = "ta" }, { a = "a1", b = "ta" }, { a = "b0", b = "tb" },
  { a = "b1", b = "tb" }, { a = "c0", b = "tc" }, { a = "c1", b = "tc" },
]
"""


def test_an_explicit_graph_places_tenants_and_carries_packets(tmp_path: Path) -> None:
    f = tmp_path / "g.toml"
    f.write_text(GRAPH)
    out = tmp_path / "p"
    reqs = tmp_path / "t.csv"
    reqs.write_text("vms,guarantee_mbps,ha\n4,1000,0.5\n6,500,0.5\n2,100,\n")
    p = cli("qshare", "place", "--topology", str(f), "--slots", "4", "--tenants", str(reqs),
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    c = Controller.load(out / "state.json")
    ts = c.tenants()
    assert len(ts) == 3
    assert {s for t in ts.values() for s, _ in t["servers"]} <= {"a0", "a1", "b0", "b1", "c0",
                                                                 "c1"}
    assert all(res <= cap for _, _, cap, res, _ in c.links())
    import tomllib

    from helpers import simulate
    topo = tomllib.loads(GRAPH)["topology"]
    r, _ = simulate({"simulation": {"duration": "2ms"}, "topology": topo,
                     "workloads": [{"kind": "permutation"}]})
    assert r.summary["packets_delivered"] > 1000
    bad = tmp_path / "bad.toml"
    bad.write_text(GRAPH.replace('{ a = "c1", b = "tc" }', '{ a = "c1", b = "td" }'))
    p = cli("qshare", "place", "--topology", str(bad), "--fill", "1", "--out", str(tmp_path / "b"))
    assert p.returncode == 2
    assert p.stderr.startswith(f'error: {bad}: topology.links[10].b = "td": unknown node'), p.stderr
    assert not (tmp_path / "b").exists()


def test_the_core_keeps_the_log_that_replays_the_datacenter() -> None:
    """Placements, rejections, departures and a random fill are logged by the core as
    they happen (rejections change nothing and are not logged); replaying the log
    rebuilds the same tenants with the same ids."""
    c = Controller(FAT_TREE_16 | {"k": 4}, slots=6)
    a = c.place([100_000_000] * 10)
    assert c.place([100_000_000] * 1000) is None  # more VMs than slots
    b = c.place([200_000_000, 100_000_000], ha=0.5)
    assert a is not None and b is not None and c.depart(a) and not c.depart(a)
    c.fill(5, mean_vms=4, ha=0.5, give_up=20)
    ops = [op["op"] for op in c.log]
    assert ops[:3] == ["place", "place", "depart"] and ops.count("depart") == 1
    assert len(ops) == 2 + 1 + (len(c.tenants()) - 1)
    assert c.log[1] == {"op": "place", "guarantees_bps": [200_000_000, 100_000_000],
                        "ha": 0.5, "id": b}
    again = Controller.from_state(json.loads(json.dumps(c.state())))
    assert again.tenants() == c.tenants() and again.log == c.log


def test_pinned_tenants_reserve_fig7a_instance_and_replay() -> None:
    # spec qshare-packet-level.md §4.4: ten tenants of 10 VMs, one on every server
    # of the 5 + 5 testbed, B = 18.8 Mb/s: 94 Mb/s each on the core (B·min(5, 5)),
    # 18.8 Mb/s on each server link (B·min(1, 9)); the core is then 94 % reserved
    topo = {"kind": "dumbbell", "hosts_per_side": 5, "link_rate": "1Gbps",
            "bottleneck_rate": "1Gbps"}
    c = Controller(topo, slots=11, queues=8)
    one_each = [(s, 1) for s in c.servers()]
    ids = [c.pin([18_800_000] * 10, one_each) for _ in range(10)]
    tenants = c.tenants()
    for t in ids:
        links = sorted(r for _, r in tenants[t]["links"])
        assert links == [18_800_000] * 10 + [94_000_000]
    # an eleventh (in the slot each server has left) needs 94 Mb/s on a core with
    # 60 left: refused, naming the link
    with pytest.raises(ValueError, match=r"pin: link .* has 60000000 bit/s unreserved; "
                                         r"the tenant needs 94000000"):
        c.pin([18_800_000] * 10, one_each)
    with pytest.raises(ValueError, match='servers: no server "nowhere"'):
        c.pin([1], [("nowhere", 1)])
    # the log replays to the same datacenter
    assert [op["op"] for op in c.log] == ["pin"] * 10
    again = Controller(topo, slots=11, queues=8, replay=c.log)
    assert again.tenants() == tenants
