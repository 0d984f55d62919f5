"""Multi-queue switch ports: schedulers, buffer policies, BarberQ, ECN scopes, PIAS."""

from typing import Any

import numpy as np
import pandas as pd
import pytest

import tenantnet
from helpers import Ran, check_conservation, simulate
from tenantnet.reproduce import barberq
from tenantnet.sim.results import Results

WINDOW = (0.002, 0.012)  # steady state: every queue backlogged


def overload(scheduler: str, weights: list[int], sizes: list[int], active: list[int],
             policy: str = "static_partition", strict: int = 1,
             buffer: str = "40MB", **network: Any) -> dict[str, Any]:
    """Queue i's source sends 10 Gb/s of `sizes[i]`-byte UDP packets with DSCP i from
    host h_i to the last host: every active queue of that switch port is backlogged
    (any other `[network]` keys in `network`)."""
    n = len(weights)
    wl = [{"kind": "cbr", "tenant": f"q{i}", "dscp": i, "src": f"h{i}", "dst": f"h{n}",
           "rate": "10Gbps", "packet_size": f"{sizes[i]}B"} for i in active]
    return {
        "simulation": {"duration": "12ms", "seed": 1},
        "topology": {"kind": "star", "hosts": n + 1, "link_rate": "10Gbps"},
        "network": {"buffer": buffer, "queues": n, "scheduler": scheduler, "weights": weights,
                    "buffer_policy": policy, "dscp_map": "identity", "strict_queues": strict,
                    **network},
        "workloads": wl,
        "output": {"sample_interval": "1ms", "throughput": ["queue", "link"], "queues": False},
    }


def queue_bytes(r: Results, port: str, window: tuple[float, float] = WINDOW) -> np.ndarray:
    """Bytes each queue of `port` sent over the window (from the queue throughput scope)."""
    tp = r.throughput
    q = tp[(tp["scope"] == "queue") & tp["id"].str.startswith(port + ":q")
           & (tp["time_s"] > window[0] + 1e-12) & (tp["time_s"] <= window[1] + 1e-12)].copy()
    q["queue"] = q["id"].str.extract(r":q(\d+)$")[0].astype(int)
    gbits = q.groupby("queue")["gbps"].sum() * 1e-3  # 1 ms samples
    return (gbits.reindex(range(q["queue"].max() + 1)).fillna(0) * 1e9 / 8).to_numpy()


def link_utilization(r: Results, port: str, window: tuple[float, float] = WINDOW) -> float:
    tp = r.throughput
    s = tp[(tp["scope"] == "link") & (tp["id"] == port)
           & (tp["time_s"] > window[0] + 1e-12) & (tp["time_s"] <= window[1] + 1e-12)]
    return float(s["gbps"].mean() / 10.0)


def assert_weighted(b: np.ndarray, weights: list[int], tol: float = 0.01) -> None:
    share = b / b.sum()
    want = np.array(weights) / sum(weights)
    print(f"shares {np.round(share, 4)} vs weights {np.round(want, 4)}")
    assert np.all(np.abs(share - want) <= tol * want)


@pytest.mark.parametrize("scheduler,sizes", [
    ("wrr", [1500, 1500, 1500, 1500]),      # WRR shares packets: equal sizes
    ("dwrr", [1500, 700, 200, 9000]),       # DWRR and WFQ share bytes whatever the sizes
    ("wfq", [1500, 700, 200, 9000]),
])
def test_backlogged_queues_share_by_weight(scheduler: str, sizes: list[int]) -> None:
    w = [1, 2, 3, 4]
    r, _ = simulate(overload(scheduler, w, sizes, [0, 1, 2, 3]))
    assert_weighted(queue_bytes(r, "switch->h4"), w)
    assert link_utilization(r, "switch->h4") >= 0.999


def test_strict_priority_starves_lower_queues() -> None:
    # queue 0's source sends at exactly the line rate, which keeps queue 0 backlogged
    # only if its host sends on time: a transmit wait leaves it empty now and then,
    # and a lower queue sends in that gap
    r, _ = simulate(overload("strict", [1, 1, 1], [1500] * 3, [0, 1, 2], tx_jitter="0us"))
    b = queue_bytes(r, "switch->h3")
    print(f"strict: {b}")
    assert b[1] == 0 and b[2] == 0 and b[0] > 0
    # SP over DWRR: queue 0 strict, queues 1 and 2 share the rest 1:3 -- but queue 0
    # alone fills the link, so the DWRR group gets nothing either
    r, _ = simulate(overload("sp_dwrr", [1, 1, 3], [1500] * 3, [0, 1, 2], tx_jitter="0us"))
    assert queue_bytes(r, "switch->h3")[1:].sum() == 0
    # without queue 0 the DWRR group shares 1:3
    r, _ = simulate(overload("sp_dwrr", [1, 1, 3], [1500] * 3, [1, 2]))
    assert_weighted(queue_bytes(r, "switch->h3")[1:], [1, 3])


@pytest.mark.parametrize("scheduler", ["wrr", "dwrr", "wfq"])
def test_an_idle_queue_share_goes_to_the_backlogged_ones(scheduler: str) -> None:
    w = [1, 2, 3, 4]
    r, _ = simulate(overload(scheduler, w, [1500] * 4, [0, 1, 2]))
    b = queue_bytes(r, "switch->h4")
    assert b[3] == 0
    assert_weighted(b[:3], w[:3])
    # the link never idles while any queue holds a packet
    assert link_utilization(r, "switch->h4") >= 0.999


def test_weights_and_dscp_map_change_mid_run() -> None:
    # a 2 MB buffer: a queue's backlog drains within ~1.5 ms
    sc = overload("dwrr", [1, 1], [1500, 1500], [0, 1], buffer="2MB")
    sim = tenantnet.Scenario.from_dict(sc).simulation()
    sim.run_until(0.006)
    sim.set_queue_weights("switch", [3, 1], peer="h2")
    sim.run_until(0.009)
    sim.set_dscp_map("switch", {0: 1, 1: 1})  # everything to queue 1
    sim.run_until(0.012)
    r = sim.results()
    check_conservation(r)
    assert_weighted(queue_bytes(r, "switch->h2", (0.002, 0.006)), [1, 1])
    assert_weighted(queue_bytes(r, "switch->h2", (0.0065, 0.009)), [3, 1])
    # queue 0 drains its 1.5 MB backlog at its 3:1 share by ~10.6 ms, then gets nothing new
    late = queue_bytes(r, "switch->h2", (0.011, 0.012))
    assert late[0] == 0 and late[1] > 0
    with pytest.raises(ValueError):
        sim.set_queue_weights("switch", [1, 0])
    with pytest.raises(ValueError):
        sim.set_dscp_map("switch", {0: 5})
    with pytest.raises(ValueError):
        sim.set_queue_weights("h0", [1, 1])


def test_barberq_fig1_two_services(ran: Ran) -> None:
    df = pd.read_csv(ran("reproduce", "barberq-fig1") / "barberq_fig1.csv")
    print(df.to_string(index=False))
    by = df.set_index("scheme")
    half = barberq.LINK_GBPS / 2
    # best effort: service 2's eight flows hog the buffer and the link
    assert by.loc["Best-Effort", "service1_gbps"] < 0.8 * half
    # BarberQ: each service within 10 % of half
    assert abs(by.loc["BarberQ", "service1_gbps"] - half) <= 0.1 * half
    assert abs(by.loc["BarberQ", "service2_gbps"] - half) <= 0.1 * half
    assert by.loc["BarberQ", "evicted_packets"] > 0
    assert by.loc["Best-Effort", "evicted_packets"] == 0


def test_barberq_fig2_eight_services(ran: Ran) -> None:
    df = pd.read_csv(ran("reproduce", "barberq-fig2") / "barberq_fig2.csv")
    summary = df.groupby("scheme").agg(min_jain=("jain", "min"), mean_jain=("jain", "mean"),
                                       min_agg=("aggregate_gbps", "min"))
    print(summary.to_string())
    link = barberq.LINK_GBPS
    bq = df[df["scheme"] == "BarberQ"]
    assert (bq["jain"] >= 0.9).all()
    assert (bq["aggregate_gbps"] >= 0.95 * link).all()
    be = df[df["scheme"] == "Best-Effort"]
    assert be["jain"].mean() < bq["jain"].mean() and be["jain"].min() < 0.9
    sm = df[df["scheme"] == "Strawman"]
    few = sm[sm["active"] == 1]["aggregate_gbps"]
    many = sm[sm["active"] >= 4]["aggregate_gbps"]
    # the strawman is fair but not work-conserving once few services are active
    assert few.mean() < 0.95 * link <= many.mean()
    assert (sm["jain"] >= 0.9).all()


def test_dynamic_threshold_caps_a_lone_queue_at_alpha_over_one_plus_alpha() -> None:
    for alpha in [0.5, 1.0, 3.0]:
        d = {"simulation": {"duration": "10ms"},
             "topology": {"kind": "star", "hosts": 3},
             "network": {"buffer_policy": "dynamic_threshold", "dt_alpha": alpha, "pool": "1000KB"},
             "workloads": [{"kind": "cbr", "src": ["h0", "h1"], "dst": "h2", "rate": "10Gbps"}],
             "output": {"throughput": []}}
        r, _ = simulate(d)
        port = r.links[(r.links["node"] == "switch") & (r.links["peer"] == "h2")].iloc[0]
        want = alpha / (1 + alpha) * 1_000_000
        print(f"alpha {alpha}: max {port['max_queue_bytes']} vs {want:.0f}")
        assert want - 1500 <= port["max_queue_bytes"] <= want
        assert port["drops"] > 0


@pytest.mark.parametrize("scope,per_queue,total", [
    ("port", (0.25, 0.75), (0.5, 1.5)),   # one threshold for the port: total near K
    ("queue", (0.5, 1.5), (1.0, 3.0)),    # each queue near K
    ("pmsb", (0.25, 0.75), (0.5, 1.5)),   # port near K, each queue near its share K/2
])
def test_ecn_scopes_with_dctcp(scope: str, per_queue: tuple[float, float],
                               total: tuple[float, float]) -> None:
    k = 40 * 1500
    d = {"simulation": {"duration": "60ms"},
         "topology": {"kind": "star", "hosts": 5, "link_delay": "10us"},
         "network": {"buffer": "2MB", "queues": 2, "scheduler": "wrr", "dscp_map": "identity",
                     "ecn_threshold": "40pkt", "ecn_scope": scope},
         "transport": {"protocol": "dctcp"},
         "workloads": [{"kind": "long_lived", "dscp": 0, "src": ["h0", "h1"], "dst": "h4"},
                       {"kind": "long_lived", "dscp": 1, "src": ["h2", "h3"], "dst": "h4"}],
         "output": {"sample_interval": "20us", "throughput": ["queue"]}}
    r, _ = simulate(d)
    q = r.queues[(r.queues["switch"] == "switch") & (r.queues["peer"] == "h4")
                 & (r.queues["time_s"] > 0.02)]
    per = q.groupby("queue")["bytes"].mean() / k
    tot = q.groupby("time_s")["bytes"].sum().mean() / k
    print(f"{scope}: per queue {per.round(3).tolist()} K, total {tot:.3f} K")
    assert all(per_queue[0] <= v <= per_queue[1] for v in per)
    assert total[0] <= tot <= total[1]
    assert r.summary["packets_dropped"] == 0


def test_pias_sends_the_first_bytes_to_the_strict_queue() -> None:
    d = {"simulation": {"duration": "20ms", "stop_when_done": True},
         "topology": {"kind": "star", "hosts": 4},
         "network": {"queues": 2, "scheduler": "sp_dwrr", "strict_queues": 1,
                     "dscp_map": "identity"},
         "workloads": [{"kind": "fixed", "dscp": 1, "pias": {"threshold": "100KB", "dscp": 0},
                        "src": ["h0", "h1", "h2"], "dst": "h3", "size": "1MB"}],
         "output": {"throughput": []}}
    r, _ = simulate(d)
    assert r.flows["end_s"].notna().all()
    qs = r.queue_stats
    port = qs[(qs["node"] == "switch") & (qs["peer"] == "h3")].set_index("queue")
    # 1460-byte segments: bytes 0..99 999 are the first 69 segments of each flow
    first = 3 * 69
    retx = int(r.flows["retransmits"].sum())
    print(f"PIAS: q0 {port.loc[0, 'tx_packets']} packets, q1 {port.loc[1, 'tx_packets']}, "
          f"retransmits {retx}")
    assert first <= port.loc[0, "tx_packets"] <= first + retx
    # every segment sent (first transmissions and retransmissions) left this port
    # unless the port dropped it
    total = 3 * -(-1_000_000 // 1460)
    sent_out = port["tx_packets"].sum()
    assert sent_out == total + retx - port["drops"].sum()


def test_dscp_per_flow_list() -> None:
    sc = tenantnet.Scenario.from_dict({
        "simulation": {"duration": "1ms"}, "topology": {"kind": "star", "hosts": 4},
        "workloads": [{"kind": "long_lived", "dscp": [3, 5], "src": ["h0", "h1", "h2"],
                       "dst": "h3"}]})
    assert sc.flows()["flow_id"].tolist() == [0, 1, 2]
    r, _ = simulate(sc)
    # dscp is not a flows column; check it through classification instead
    d = sc.data()
    d["network"] = {"queues": 8, "dscp_map": "identity"}
    d["simulation"]["duration"] = "2ms"
    r, _ = simulate(d)
    qs = r.queue_stats
    port = qs[(qs["node"] == "switch") & (qs["peer"] == "h3")].set_index("queue")
    used = sorted(port[port["tx_packets"] > 0].index.tolist())
    assert used == [3, 5]


def nic_overload(host_nic: str) -> dict[str, Any]:
    """Host h0 sends 10 Gb/s of UDP with DSCP 0 to h1 and with DSCP 1 to h2: only
    h0's NIC is overloaded, the switch's ports to h1 and h2 are not."""
    sc = overload("dwrr", [1, 3], [1500, 1500], [])  # 40 MB: never full in 12 ms
    sc["topology"]["hosts"] = 3
    sc["network"]["host_nic"] = host_nic
    sc["workloads"] = [{"kind": "cbr", "tenant": f"q{d}", "dscp": d, "src": "h0",
                        "dst": f"h{d + 1}", "rate": "10Gbps"} for d in (0, 1)]
    return sc


def test_dscp_host_nics_have_the_switches_queues_and_take_new_weights() -> None:
    sim = tenantnet.Scenario.from_dict(nic_overload("dscp")).simulation()
    sim.run_until(0.006)
    sim.set_queue_weights("h0", [3, 1])
    sim.run_until(0.012)
    r = sim.results()
    check_conservation(r)
    assert_weighted(queue_bytes(r, "h0->switch", (0.002, 0.006)), [1, 3])
    assert link_utilization(r, "h0->switch", (0.002, 0.006)) >= 0.999
    assert_weighted(queue_bytes(r, "h0->switch", (0.0065, 0.012)), [3, 1])
    # what each destination receives is its queue's share of h0's NIC
    assert link_utilization(r, "switch->h1", (0.007, 0.012)) == pytest.approx(0.75, rel=0.01)
    assert link_utilization(r, "switch->h2", (0.007, 0.012)) == pytest.approx(0.25, rel=0.01)


def test_only_dscp_host_nics_take_weights_and_maps() -> None:
    sim = tenantnet.Scenario.from_dict(nic_overload("fifo")).simulation()
    for call in (lambda: sim.set_queue_weights("h0", [1, 1]),
                 lambda: sim.set_dscp_map("h0", {1: 1})):
        with pytest.raises(ValueError, match=r'not classified by DSCP.*host_nic = "fifo"'):
            call()
    with pytest.raises(ValueError, match='"h0" has no port toward "h1"'):
        sim.set_queue_weights("h0", [1, 1], peer="h1")
