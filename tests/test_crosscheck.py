"""The permutation against htsim's runs (issue 13): the statistics, the shipped
reference, a scaled-down cross-check, and the host and ACK-path options it toggles."""

import json
from pathlib import Path

import pytest

import tenantnet
from helpers import cli
from tenantnet import crosscheck as xc


def test_ks_distance_and_the_distribution_summary() -> None:
    a = [1.0, 2.0, 3.0, 4.0]
    assert xc.ks(a, a) == 0
    assert xc.ks(a, [10.0, 11.0]) == 1
    # half of b lies below all of a: the functions differ by 1/2 there
    assert xc.ks(a, [0.0, 2.5]) == pytest.approx(0.5)
    d = xc.distribution([0.5, 2.0, 4.0, 6.0, 9.5])
    assert (d["min"], d["median"], d["max"]) == (0.5, 4.0, 9.5)
    assert (d["below_1gbps"], d["above_9gbps"]) == (0.2, 0.2)


def test_the_shipped_htsim_runs() -> None:
    ref, runs = xc.load_reference(xc.REFERENCE)
    assert ref["k"] == 8 and len(runs) == 8
    assert all(len(r) == 128 for r in runs)
    assert len(ref["htsim_commit"]) == 40
    # goodput: every flow under the 10 Gb/s line rate, the mean near half of it
    pool = [x for r in runs for x in r]
    assert min(pool) > 0 and max(pool) < 10
    assert 4.5 < sum(pool) / len(pool) < 5.5
    lo, hi = xc.htsim_spread(runs)
    assert 0 < lo <= hi < 0.2


def test_htsims_settings_bring_a_run_within_htsims_own_spread() -> None:
    """Scaled down from `tenantnet bench crosscheck` (one seed instead of four): with
    htsim's settings a run's per-flow rates are as close to htsim's pooled runs as
    htsim's runs are to one another, and closer than with tenantnet's defaults."""
    _, runs = xc.load_reference(xc.REFERENCE)
    pool = [x for r in runs for x in r]
    _, hi = xc.htsim_spread(runs)
    matched = xc.run_permutation(8, 1, xc.merged(list(xc.HTSIM_SETTINGS)))
    default = xc.run_permutation(8, 1, {})
    assert xc.ks(matched, pool) <= hi
    assert xc.ks(matched, pool) < xc.ks(default, pool)


def small(**network: object) -> tenantnet.Scenario:
    d = tenantnet.Scenario.builtin("permutation").data()
    d["topology"]["k"] = 4
    d["simulation"]["duration"] = "5ms"
    d["network"].update(network)
    return tenantnet.Scenario.from_dict(d, "small permutation")


@pytest.mark.parametrize("network", [
    {"host_nic": "fq"}, {"host_nic": "ack_first"}, {"ack_path": "symmetric"},
    {"ecn_mark": "end"},
])
def test_each_host_option_runs_conserves_packets_and_changes_the_run(
        network: dict[str, str]) -> None:
    base = small().simulation()
    base.run()
    sim = small(**network).simulation()
    sim.run()
    s, rates = sim.summary()
    assert s["conservation_ok"] and s["buffer_accounting_ok"]
    assert s["packets_dropped"] == 0
    assert rates != base.summary()[1], f"{network} changed nothing"


def test_small_queues_run_conserve_packets_and_hold_senders_back() -> None:
    """A one-byte limit binds in the small permutation (one data packet at a time
    in each host): the run conserves packets, changes, and the hosts' NICs hold
    less than without it."""
    base = small(host_nic="fifo").data()
    limited = json.loads(json.dumps(base))
    limited["transport"]["limit_output_bytes"] = "1B"
    runs = []
    for d in (base, limited):
        sim = tenantnet.Scenario.from_dict(d, "small").simulation()
        sim.run()
        s, rates = sim.summary()
        assert s["conservation_ok"] and s["buffer_accounting_ok"]
        links = sim.results().links
        nics = links[links["node"].str.startswith("h")]
        runs.append((nics["max_queue_bytes"].max(), rates))
    (q0, r0), (q1, r1) = runs
    assert r1 != r0
    # one data packet and the ACKs of the flow the host receives
    assert q1 <= 9000 + 64 * 4 < q0


def test_marking_at_the_end_needs_links_with_a_delay(tmp_path: Path) -> None:
    d = small(ecn_mark="end").data()
    d["topology"]["link_delay"] = "0us"
    f = tmp_path / "s.json"
    f.write_text(json.dumps(d))
    p = cli("run", str(f), "--out", str(tmp_path / "out"))
    assert p.returncode == 2, p.stderr
    assert "network.ecn_mark" in p.stderr and "no delay" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_crosscheck_cli_refuses_a_bad_reference(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": []}')
    p = cli("bench", "crosscheck", "--reference", str(bad))
    assert p.returncode == 2 and "not an htsim reference file" in p.stderr, p.stderr
    p = cli("bench", "permutation", "--reference", str(bad))
    assert p.returncode == 2 and "only the crosscheck" in p.stderr, p.stderr
    p = cli("bench", "crosscheck", "--k", "4")
    assert p.returncode == 2 and "k = 8" in p.stderr, p.stderr


def test_bench_fct_prints_one_line_with_every_flow_completed() -> None:
    p = cli("bench", "fct")
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert (line["benchmark"], line["hosts"], line["flows"]) == ("fct", 144, 10_000)
    assert line["flows_completed"] == 10_000
    assert line["packets"] > line["data_packets"] > 0
    assert 0 < line["small_mean_fct_ms"] < line["mean_fct_ms"]
