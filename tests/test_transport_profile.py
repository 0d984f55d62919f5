"""Named transport profiles (``transport.profile``): a profile is a set of defaults for
the transport's keys, and keys written beside it win."""

from __future__ import annotations

from typing import Any

import pandas as pd

from helpers import simulate

LINUX_KEYS: dict[str, Any] = {
    "protocol": "cubic", "recovery": "rack", "tlp_timeout": "linux", "min_rto": "200ms",
    "initial_rto": "200ms", "max_rto": "120s", "delayed_ack": True, "delayed_ack_timeout": "40ms",
    "quick_acks": 16, "ack_push": True, "handshake_rtt": True, "cwr_reduction": "prr",
    "loss_ssthresh": "cwnd",
}


def incast(transport: dict[str, Any]) -> dict[str, Any]:
    """Eight 300 KB flows into one receiver over a 10 Gb/s dumbbell with a 60 KB buffer:
    losses, so recovery and timers matter."""
    return {
        "simulation": {"duration": "2s", "seed": 1, "stop_when_done": True},
        "topology": {"kind": "dumbbell", "hosts_per_side": 8, "link_rate": "10Gbps",
                     "link_delay": "10us"},
        "network": {"buffer": "60KB"},
        "transport": transport,
        "workloads": [{"kind": "incast", "receiver": "right0",
                       "senders": [f"left{i}" for i in range(8)], "size": "300KB",
                       "rounds": 1, "interval": "1ms"}],
    }


def test_the_linux_profile_is_its_keys() -> None:
    """The `linux` profile is its transport keys, clocks 100 ppm apart and a 1 us
    transmit wait, written out under the `htsim` profile; it is the default, and
    `htsim` is another transport."""
    by_profile, _ = simulate(incast({"profile": "linux"}))
    sc = incast(dict(LINUX_KEYS, profile="htsim"))
    sc["network"].update(clock_ppm=100, tx_jitter="1us")
    by_keys, _ = simulate(sc)
    assert by_profile.summary["packets_dropped"] > 0
    pd.testing.assert_frame_equal(by_profile.flows, by_keys.flows)
    default, _ = simulate(incast({}))
    pd.testing.assert_frame_equal(default.flows, by_profile.flows)
    htsim, _ = simulate(incast({"profile": "htsim"}))
    assert not htsim.flows.equals(by_profile.flows)


def test_the_profiles_tcp_is_newreno_under_htsim_and_cubic_under_linux() -> None:
    import json

    import tenantnet

    def cc(transport: dict[str, Any]) -> str:
        sc = tenantnet.Scenario.from_dict(incast(transport), "incast")
        return str(json.loads(sc.simulation()._core.transport_json)["cc"])
    assert [cc({"protocol": "tcp", "profile": "htsim"}), cc({"protocol": "tcp"}),
            cc({"protocol": "tcp", "profile": "linux"}),
            cc({"protocol": "newreno", "profile": "linux"}),
            cc({"protocol": "cubic", "profile": "htsim"}),
            cc({"protocol": "dctcp", "profile": "linux"})] == [
        "newreno", "cubic", "cubic", "newreno", "cubic", "dctcp"]


def test_the_htsim_profile_sets_the_clocks_only_where_the_scenario_does_not() -> None:
    """Under `htsim` the ports' clocks are exact and hosts send at once unless
    `network.clock_ppm` and `network.tx_jitter` say otherwise; under `linux` the clocks
    are 100 ppm apart and hosts wait up to 1 us unless they say otherwise."""
    def flows(profile: str, ppm: int | None, wait: str | None = None) -> pd.DataFrame:
        sc = incast({"profile": profile})
        if ppm is not None:
            sc["network"]["clock_ppm"] = ppm
        if wait is not None:
            sc["network"]["tx_jitter"] = wait
        return simulate(sc)[0].flows
    pd.testing.assert_frame_equal(flows("htsim", None), flows("htsim", 0, "0us"))
    pd.testing.assert_frame_equal(flows("linux", None), flows("linux", 100, "1us"))
    assert not flows("linux", None).equals(flows("linux", None, "0us"))
    assert not flows("linux", 0).equals(flows("linux", 100))


def test_a_key_beside_the_profile_wins() -> None:
    keys = dict(LINUX_KEYS, recovery="sack")
    a, _ = simulate(incast({"profile": "linux", "recovery": "sack"}))
    b, _ = simulate(incast(keys))
    pd.testing.assert_frame_equal(a.flows, b.flows)


def test_under_linux_the_initial_rto_follows_the_min_rto() -> None:
    """No handshake in tenantnet: Linux's data segments start with the RTO a handshake
    on a microsecond path leaves, the minimum, whatever the scenario sets it to."""
    a, _ = simulate(incast({"profile": "linux", "min_rto": "5ms"}))
    b, _ = simulate(incast(dict(LINUX_KEYS, min_rto="5ms", initial_rto="5ms")))
    pd.testing.assert_frame_equal(a.flows, b.flows)


def test_with_linux_delayed_acks_a_short_flow_does_not_wait_for_the_ack_timer() -> None:
    """Quick ACKs and the push ACK: a 3-segment flow and a 21-segment flow finish in
    microseconds, not after Linux's 40 ms delayed-ACK timer."""
    for size in ("4KB", "30KB"):
        sc = incast({"profile": "linux"})
        sc["network"]["buffer"] = "1MB"
        sc["workloads"][0].update(senders=["left0"], size=size)
        r, _ = simulate(sc)
        assert r.flows.fct_s.iloc[0] < 1e-3, (size, r.flows.fct_s.iloc[0])


def test_the_reproductions_that_compare_transports_take_a_profile() -> None:
    """BarberQ Fig. 3/4 and QShare Fig. 8 run under a named profile beside the paper's
    own keys (BarberQ's RTO_min of 5 ms stays); unnamed, BarberQ's is its paper's
    (`htsim`) and QShare Fig. 8's first is `htsim` too (it reports both)."""
    import tenantnet
    from tenantnet.reproduce import barberq_macro, qshare_fig8
    d = barberq_macro.scenario("websearch", 0.5, "PMSB", 100, profile="linux")
    assert d["transport"]["profile"] == "linux" and d["transport"]["min_rto"] == "5ms"
    assert barberq_macro.scenario("websearch", 0.5, "PMSB", 100)["transport"]["profile"] == (
        "htsim")
    assert qshare_fig8.scenario("qshare", 0.5, 1.0)["transport"]["profile"] == "htsim"
    q = qshare_fig8.scenario("qshare", 0.5, 1.0, profile="linux")
    assert q["transport"]["profile"] == "linux"
    for sc in (d, q):
        tenantnet.Scenario.from_dict(sc).validate()


def test_a_transport_profile_from_the_environment_reaches_every_scenario() -> None:
    """`transport_profile` (what `reproduce --transport` uses) sets `transport.profile`
    on every scenario built inside it, keeps the scenario's own keys, and leaves no
    trace outside it."""
    import json
    import os

    from tenantnet.sim.scenario import TRANSPORT_ENV, Scenario, transport_profile

    sc = Scenario.from_dict(incast({"protocol": "newreno", "min_rto": "5ms",
                                    "profile": "htsim"}), "incast")

    def transport() -> dict[str, Any]:
        return dict(json.loads(sc.simulation()._core.transport_json))
    assert transport()["recovery"] == "newreno"
    with transport_profile("linux"):
        t = transport()
        assert t["recovery"] == "rack" and t["delayed_ack"] is True
        assert t["min_rto_s"] == 0.005  # the scenario's own key stays
        named = Scenario.from_dict({**incast({"profile": "htsim"}), "name": "incast"},
                                   "incast")
        sim = named.simulation()
        sim.run()
        # the run's summary records where its transport came from
        assert sim.summary()[0]["scenario"] == (
            f"incast (transport.profile = 'linux' from {TRANSPORT_ENV})")
    assert TRANSPORT_ENV not in os.environ and transport()["recovery"] == "newreno"
    with transport_profile(None):
        assert transport()["recovery"] == "newreno"


def test_reproduce_names_the_papers_transport_and_runs_under_another(tmp_path: Any) -> None:
    import json

    from helpers import cli
    out = tmp_path / "fig3c"
    p = cli("reproduce", "qshare-fig3c", "--out", str(out), "--transport", "paper", "-q")
    assert p.returncode == 0, p.stderr
    assert "the paper's transport: Linux 3.13 testbed" in p.stdout
    t = json.loads((out / "transport.json").read_text())
    assert (t["profile"], t["nearest_profile"]) == ("linux", "linux")
    # without --transport, the paper's; another by name
    p = cli("reproduce", "qshare-fig3c", "--out", str(out), "--force", "-q")
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "transport.json").read_text())["profile"] == "linux"
    assert "transport.profile = 'linux' on every scenario (the paper's)" in p.stdout
    p = cli("reproduce", "qshare-fig3c", "--out", str(out), "--force", "-q",
            "--transport", "htsim")
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "transport.json").read_text())["profile"] == "htsim"
    assert "(the paper's)" not in p.stdout
    # the reproductions that already run both profiles refuse, with no output
    p = cli("reproduce", "barberq-fig4", "--out", str(tmp_path / "b4"), "--transport",
            "linux")
    assert p.returncode == 2 and "already runs under both" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "b4").exists()
