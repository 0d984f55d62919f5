"""The request_response workload: request-response exchanges (Trinity's FCT
workload) and fan-out queries (its memcached queries), open and closed loop, with
query completion times checked against the idle network's exact timing."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from helpers import simulate

RATE = 1e9          # bit/s, every link
DELAY = 25e-6       # s, every link
PACKET = 1538       # bytes on the wire per full packet (1448 B of payload)
HEADER = 90
ACK = 64            # bytes, a pure ACK on the wire


def star(workload: dict[str, Any], duration: str = "200ms", hosts: int = 9) -> dict[str, Any]:
    return {
        "simulation": {"duration": duration, "seed": 3},
        "topology": {"kind": "star", "hosts": hosts, "link_rate": "1Gbps",
                     "link_delay": "25us"},
        "transport": {"protocol": "newreno", "mss": "1448B", "header": "90B",
                      "ack_size": f"{ACK}B", "init_cwnd": 20, "delayed_ack": False},
        # exact clocks and no transmit wait: the timing below is the links' rates'
        "network": {"clock_ppm": 0, "tx_jitter": "0us"},
        "workloads": [{"kind": "request_response", **workload}],
        "output": {"throughput": []},
    }


def tx(b: int) -> float:
    return b * 8 / RATE


def one_way(payload: int) -> float:
    """Seconds for `payload` bytes sent in one window to arrive over the star's two
    hops, store-and-forward: the first packet crosses both links, the rest follow it
    back to back on the second."""
    pkts, last = divmod(payload, 1448)
    sizes = [PACKET] * pkts + ([last + HEADER] if last else [])
    return 2 * DELAY + sizes[0] * 8 / RATE + sum(sizes) * 8 / RATE


def test_an_exchange_on_an_idle_network_takes_request_then_response() -> None:
    size, request = 20 * 1024, 100
    r, _ = simulate(star({"src": "h0", "dst": "h1", "size": "20KiB", "queries": 5,
                          "interval": "10ms", "start": "1ms"}))
    q = r.queries
    print("\n" + q.to_string())
    assert len(q) == 5 and (q["servers"] == 1).all()
    assert list(q["start_s"].round(9)) == [0.001 + 0.01 * i for i in range(5)]
    # the server ACKs the request, then answers (its NIC sends the ACK first); the
    # 20 KiB response is 15 packets, within the initial window of 20
    expect = one_way(request) + tx(ACK) + one_way(size)
    assert (abs(q["qct_s"] / expect - 1) < 1e-6).all(), (list(q["qct_s"]), expect)
    # two flows per query, the response starting as its request arrives
    f = r.flows.sort_values("flow_id")
    assert len(f) == 10
    req, resp = f.iloc[0::2], f.iloc[1::2]
    assert list(req["size_bytes"]) == [request] * 5 and list(resp["size_bytes"]) == [size] * 5
    assert (abs(resp["start_s"].values - req["start_s"].values - one_way(request)) < 1e-12).all()


def test_a_fan_out_query_waits_for_its_slowest_response() -> None:
    # 8 servers answer 1 KiB each at once: the responses converge on the client's link
    r, _ = simulate(star({"src": "h0", "dst": ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"],
                          "size": "1KiB", "queries": 3, "interval": "5ms"}))
    q = r.queries
    print("\n" + q.to_string())
    assert (q["servers"] == 8).all()
    resp = r.flows[r.flows["size_bytes"] == 1024]
    assert len(resp) == 24
    # complete when the last of its 8 responses has arrived: after the first by
    # 7 more responses on the client's link, and at most the 8 servers' ACKs of the
    # requests, which share that link, and the first server's ACK ahead of its answer
    least = one_way(100) + tx(ACK) + one_way(1024) + 7 * tx(1024 + HEADER)
    assert (q["qct_s"] >= least - 1e-12).all(), (list(q["qct_s"]), least)
    assert (q["qct_s"] <= least + 8 * tx(ACK) + 1e-12).all(), (list(q["qct_s"]), least)
    # without fan-out (one server) the same exchange takes the lone response's time
    one, _ = simulate(star({"src": "h0", "dst": "h1", "size": "1KiB", "queries": 3,
                            "interval": "5ms"}))
    assert (abs(one.queries["qct_s"] / (one_way(100) + tx(ACK) + one_way(1024)) - 1)
            < 1e-6).all()


def test_a_closed_loop_client_starts_each_query_when_the_last_completes() -> None:
    r, _ = simulate(star({"src": ["h0", "h1"], "dst": ["h2", "h3", "h4"], "size": "4KiB",
                          "fanout": 2, "queries": 20}))
    q = r.queries
    assert len(q) == 40 and (q["servers"] == 2).all()
    for client, g in q.groupby("client", observed=True):
        g = g.sort_values("query_id")
        assert g["end_s"].notna().all(), client
        # back to back: each query begins the instant the previous one ended
        assert (g["start_s"].iloc[1:].values == g["end_s"].iloc[:-1].values).all()
        assert g["start_s"].iloc[0] == 0
    # fan-out 2 of 3 servers, drawn at random per query: every server is used
    resp = r.flows[(r.flows["size_bytes"] == 4096)]
    assert set(resp["src"].astype(str)) == {"h2", "h3", "h4"}


def test_queries_that_cannot_finish_are_left_open() -> None:
    # closed loop for longer than the run: the last queries never begin
    r, _ = simulate(star({"src": "h0", "dst": "h1", "size": "1MB", "queries": 50},
                         duration="50ms"))
    q = r.queries
    done, waiting = q[q["end_s"].notna()], q[q["start_s"].isna()]
    print(f"\n{len(done)} of 50 done, {len(waiting)} never began")
    assert 0 < len(done) < 50 and len(waiting) > 0
    assert pd.isna(q["qct_s"][q["end_s"].isna()]).all()
    assert r.flows["start_s"].isna().sum() > 0


def test_same_seed_same_queries() -> None:
    sc = star({"src": ["h0", "h1"], "dst": ["h2", "h3", "h4"], "size": "4KiB",
               "fanout": 2, "queries": 10})
    a, _ = simulate(sc)
    b, _ = simulate(sc)
    pd.testing.assert_frame_equal(a.queries, b.queries)
    pd.testing.assert_frame_equal(a.flows, b.flows)


@pytest.mark.parametrize("bad,fragments", [
    ({"fanout": 4}, ["workloads[0].fanout", "3 servers", "fanout = 4"]),
    ({"fanout": 0}, ["workloads[0].fanout", "at least 1"]),
    ({"queries": 0}, ["workloads[0].queries", "at least 1"]),
    ({"dst": "h0"}, ["workloads[0].dst", "no server on another host"]),
])
def test_bad_request_response_keys_are_named(bad: dict[str, Any], fragments: list[str]) -> None:
    import tenantnet
    w = {"src": "h0", "dst": ["h1", "h2", "h3"], "size": "1KiB", **bad}
    with pytest.raises(tenantnet.ScenarioError) as e:
        tenantnet.Scenario.from_dict(star(w)).simulation()
    print(e.value)
    for frag in fragments:
        assert frag in str(e.value), (frag, str(e.value))
