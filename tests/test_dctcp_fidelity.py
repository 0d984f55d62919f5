"""DCTCP against its own analysis (Alizadeh et al., SIGCOMM 2010, §3.3)."""

import pytest

from helpers import dumbbell, jain, simulate

K_PKTS = 65
PKT = 1500
STARTUP = 0.05


@pytest.mark.parametrize("mark", ["enqueue", "dequeue"])
@pytest.mark.parametrize("n", [2, 16])
def test_dctcp_holds_the_queue_near_k(n: int, mark: str) -> None:
    # 100 us base RTT: 2 x (15 + 18 + 15) us of propagation plus serialization
    sc = dumbbell(n, "dctcp", "200ms", "1MB", ecn_threshold=f"{K_PKTS}pkt", ecn_mark=mark,
                  link_delay="15us", bottleneck_delay="18us", sample="10us")
    r, (at_startup,) = simulate(sc, checkpoints=(STARTUP,))
    q = r.queues
    q = q[(q["switch"] == "switch-left") & (q["peer"] == "switch-right") & (q["time_s"] > STARTUP)]
    k = K_PKTS * PKT
    mean_q = q["bytes"].mean()
    tp = r.throughput
    link = tp[(tp["scope"] == "link") & (tp["id"] == "switch-left->switch-right")
              & (tp["time_s"] > STARTUP)]
    util = link["gbps"].mean() / 10.0
    drops_after = r.summary["packets_dropped"] - at_startup["dropped"]
    g = r.flow_gbps().to_numpy()
    print(f"n={n} {mark}: mean queue {mean_q / k:.3f} K, max {q['bytes'].max() / k:.3f} K, "
          f"utilization {util:.4f}, drops after start-up {drops_after}, Jain {jain(g):.4f}")
    assert 0.5 * k <= mean_q <= 1.5 * k
    assert drops_after == 0
    assert util >= 0.95
    # §3.3: the queue peaks at Q_max = K + N packets (one more packet per flow in the
    # RTT after the first mark); allow a few packets for sampling and serialization
    assert abs(q["bytes"].max() / PKT - (K_PKTS + n)) <= 0.1 * K_PKTS
