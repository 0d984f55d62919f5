"""TCP NewReno against what theory says a long-lived flow gets."""

import numpy as np
import pytest

from helpers import bottleneck, dumbbell, jain, simulate

# base RTT: 3 links of 10 us each way plus serialization ~ 64 us; BDP at 10 Gb/s ~ 80 KB


@pytest.mark.parametrize("buffer", ["100KB", "1MB"])
def test_single_newreno_flow_fills_the_link_after_slow_start(buffer: str) -> None:
    r, _ = simulate(dumbbell(1, "tcp", "300ms", buffer))
    f = r.throughput[r.throughput["scope"] == "flow"]
    # slow start overshoots and NewReno repairs the losses; measure the second half
    steady = f[f["time_s"] > 0.15]["gbps"].mean()
    print(f"buffer {buffer}: steady goodput {steady:.3f} Gb/s")
    assert steady >= 0.95 * 10.0
    # and the payload ceiling with 40-byte headers is 10 * 1460/1500
    assert steady <= 10.0 * 1460 / 1500 + 1e-6


@pytest.mark.parametrize("buffer", ["100KB", "1MB"])
def test_eight_newreno_flows_share_fairly_and_fill_the_link(buffer: str) -> None:
    r, _ = simulate(dumbbell(8, "tcp", "1s", buffer))
    g = r.flow_gbps().to_numpy()
    util = float(bottleneck(r)["utilization"])
    print(f"buffer {buffer}: per-flow {np.round(g, 3)}, Jain {jain(g):.4f}, utilization {util:.4f}")
    assert jain(g) >= 0.95
    assert util >= 0.95
    assert r.summary["packets_dropped"] > 0  # NewReno finds the buffer's edge
