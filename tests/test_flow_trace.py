"""Per-flow traces (`[output] trace_flows`, `trace_fraction`): a TCP sender's window,
ssthresh, RTT, RTO and congestion state each time the simulator drives it."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import tenantnet
from tenantnet.errors import ScenarioError
from test_cubic import HYSTART
from test_parallel import permutation, ran


def results(d: dict[str, Any] | str) -> tenantnet.Results:
    sc = (tenantnet.Scenario.from_toml(d, "t.toml") if isinstance(d, str)
          else tenantnet.Scenario.from_dict(d, "<test>"))
    return sc.simulation().run().results()


def test_the_trace_shows_where_hystart_ended_slow_start() -> None:
    """test_cubic's transfer: 4 ms round trips at 10 Gb/s (D = 3333 packets in flight),
    3000 packets of buffer. Slow start runs with ssthresh unset until HyStart sets it
    to the window, past D and below D + B, and the flow stays open throughout."""
    r = results(HYSTART.format(protocol="cubic") + "[output]\ntrace_flows = [0]\n")
    t = r.flow_trace
    assert t is not None and len(t) > 1000
    assert r.summary["flow_trace"] == {"rows": len(t), "truncated": False}
    assert t["time_s"].is_monotonic_increasing
    assert set(t["state"]) == {"open"}
    unset = t["ssthresh_bytes"].isna()
    assert unset.iloc[0] and not unset.iloc[-1]
    exit_row = t[~unset].iloc[0]
    assert exit_row["ssthresh_bytes"] == exit_row["cwnd_bytes"]
    assert 3333 < exit_row["cwnd_bytes"] / 1460 < 3333 + 3000
    # the window only grew before the exit (slow start, one segment an ACK at most
    # two), and the smoothed RTT is the path's 4 ms and more
    before = t[unset]["cwnd_bytes"]
    assert before.is_monotonic_increasing
    assert t["srtt_s"].dropna().min() >= 0.004


def test_a_timeout_shows_as_loss_with_the_window_at_one_segment() -> None:
    d = {
        "simulation": {"duration": "100ms", "seed": 1},
        "topology": {"kind": "star", "hosts": 9, "link_rate": "10Gbps",
                     "link_delay": "2us"},
        "network": {"buffer": "20pkt"},
        "transport": {"protocol": "newreno", "min_rto": "1ms"},
        "workloads": [{"kind": "incast", "receiver": "h0",
                       "senders": [f"h{i}" for i in range(1, 9)], "size": "500KB"}],
        "output": {"trace_fraction": 1.0},
    }
    r = results(d)
    t = r.flow_trace
    assert t is not None
    assert sorted(set(t["flow_id"])) == list(range(8))
    timeouts = int(r.flows["timeouts"].sum())
    assert timeouts > 0 and {"recovery", "loss"} <= set(t["state"])
    entries = 0
    for _, g in t.groupby("flow_id"):
        # the row that enters loss is the timeout's: the window is one segment
        entered = g[(g["state"] == "loss") & (g["state"].shift() != "loss")]
        assert (entered["cwnd_bytes"] == 1460).all(), entered
        entries += len(entered)
    # a timeout while still in loss (the backed-off timer) enters nothing new
    assert 0 < entries <= timeouts


@pytest.mark.parametrize("limit", [None, 300])
def test_a_trace_is_the_same_on_1_and_2_threads(limit: int | None) -> None:
    d = permutation(4, "1ms")
    d["output"]["trace_fraction"] = 0.25
    if limit:
        d["output"]["trace_rows"] = limit
    one, _ = ran(d, 1)
    two, sim = ran(d, 2)
    assert sim.threads == 2 and one == two


@pytest.mark.parametrize(("output", "message"), [
    ({"trace_flows": [99]}, r"output.trace_flows\[0\].*no flow 99: the run has 1 flows"),
    ({"trace_fraction": 1.5}, r"output.trace_fraction.*from 0 to 1"),
    ({"trace_flows": [0], "trace_rows": 0}, r"output.trace_rows.*from 1 to 2\^32"),
])
def test_bad_trace_settings_are_refused(output: dict[str, Any], message: str) -> None:
    d = {"simulation": {"duration": "1ms"}, "topology": {"kind": "star", "hosts": 2},
         "workloads": [{"kind": "long_lived", "src": "h0", "dst": "h1"}],
         "output": output}
    with pytest.raises(ScenarioError, match=message):
        tenantnet.Scenario.from_dict(d, "<test>").simulation()


@pytest.mark.parametrize("handshake", [False, True])
def test_a_sender_starts_with_its_handshakes_rtt_when_asked(handshake: bool) -> None:
    """`transport.handshake_rtt`: before its first ACK a sender holds the RTT a SYN and
    its SYN-ACK would have measured on its idle path (here a star: two hops each way
    of 2 us at 10 Gb/s, 64-byte ACKs: 4 x (2 us + 51.2 ns)); without it, none."""
    d = {
        "simulation": {"duration": "1ms", "seed": 1},
        "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "2us"},
        "transport": {"ack_size": "64B", "handshake_rtt": handshake},
        "network": {"clock_ppm": 0},
        "workloads": [{"kind": "fixed", "src": "h0", "dst": ["h1"], "size": "1MB"}],
        "output": {"trace_flows": [0]},
    }
    t = results(d).flow_trace
    assert t is not None
    first = t.iloc[0]
    if handshake:
        assert first["srtt_s"] == pytest.approx(4 * (2e-6 + 64 * 8 / 10e9), rel=1e-9)
        assert first["rto_s"] == pytest.approx(0.2)  # the sample leaves it at the floor
    else:
        assert pd.isna(first["srtt_s"])
