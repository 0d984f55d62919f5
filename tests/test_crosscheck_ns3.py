"""``tenantnet crosscheck ns3``: tenantnet against ns-3 on the smallest incast (8 NewReno
senders without SACK, tenantnet's default transport), with ns-3's wheel (``pip install
--no-deps ns3``; ``make test`` installs it) and a C++ compiler. Skipped, saying why,
where either is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tenantnet import ns3check
from tenantnet.cli import main
from tenantnet.scenario import Scenario

SMALLEST = (Path(__file__).parents[1] / "examples" / "incast-ns3.toml").read_text()


def ns3_ready() -> str | None:
    try:
        ns3check.ns3_root()
    except ns3check.CrosscheckError as e:
        return str(e)
    return None if shutil.which("g++") or shutil.which("c++") else "no C++ compiler"


needs_ns3 = pytest.mark.skipif(ns3_ready() is not None, reason=str(ns3_ready()))


@needs_ns3
def test_the_smallest_incast_agrees_with_ns3(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    f = tmp_path / "incast.toml"
    f.write_text(SMALLEST)
    main(["crosscheck", "ns3", str(f), "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    print(printed)
    assert "tenantnet vs ns-3" in printed
    table = ns3check.pd.read_csv(tmp_path / "out" / "crosscheck.csv")
    ours, theirs, diff = table.iloc[0], table.iloc[1], table.iloc[2]
    assert ours["completed"] == theirs["completed"] == 8
    # the bounds: the median within 15 %, flows that hit an RTO within 2
    assert abs(diff["median_ms"]) <= 0.15, diff
    assert abs(diff["flows_with_timeouts"]) <= 2, diff


def test_what_the_program_does_not_model_is_refused(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    f = tmp_path / "star.toml"
    f.write_text(SMALLEST.replace('kind = "dumbbell"\nhosts_per_side = 8',
                                  'kind = "star"\nhosts = 16'))
    with pytest.raises(SystemExit) as e:
        main(["crosscheck", "ns3", str(f)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "topology.kind = 'star'" in err and "dumbbell" in err and err[-1] == "\n"


def test_the_settings_follow_the_scenario() -> None:
    s, ours = ns3check.setup(Scenario.from_toml(SMALLEST))
    assert (s.senders, s.size, s.cc, s.sack, s.mss, s.init_cwnd) == (8, 200_000, "newreno",
                                                                      False, 1460, 10)
    assert (s.buffer, s.host_buffer, s.ecn_k, s.min_rto_s) == (100_000, 100_000, 0, 0.01)
    assert ours["transport"]["header"] == "54B" and ours["transport"]["initial_rto"] == \
        "10000000ns"
    assert "--min_rto=10000us" in s.args() and "--bottleneck_rate=10Gbps" in s.args()
    # ECN thresholds in packets count ns-3's frames (1460 + 54 bytes)
    dctcp = SMALLEST.replace('[network]', '[network]\necn_threshold = "65pkt"').replace(
        'protocol = "tcp"', 'protocol = "dctcp"')
    assert ns3check.setup(Scenario.from_toml(dctcp))[0].ecn_k == 65 * 1514


def test_long_flows_on_pairs_map_to_the_programs_pairs_and_others_are_refused() -> None:
    head = SMALLEST.split("[[workloads]]")[0]
    pairs = head + "".join(
        f'[[workloads]]\nkind = "fixed"\nsrc = "left{i}"\ndst = ["right{i}"]\nsize = "10MB"\n'
        for i in range(3))
    s, _ = ns3check.setup(Scenario.from_toml(pairs))
    assert (s.senders, s.size, s.pairs) == (3, 10_000_000, True) and "--pairs=1" in s.args()
    crossed = pairs.replace('dst = ["right2"]', 'dst = ["right1"]')
    with pytest.raises(ns3check.CrosscheckError, match="left<i> to right<i>"):
        ns3check.setup(Scenario.from_toml(crossed))
