"""Traffic generators: Poisson load and sizes, CDF files, matrices, UDP rates."""

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tenantnet
from helpers import simulate
from tenantnet import _core

CDFS = ["websearch", "datamining", "cache", "hadoop", "enterprise"]
# ../shared/workloads/README.md, mean under linear interpolation
PUBLISHED_MEAN = {"websearch": 1711250, "datamining": 12658199, "cache": 935453,
                  "hadoop": 4135297, "enterprise": 200688}


def star(hosts: int, workloads: list[dict[str, Any]], duration: str = "10ms",
         **extra: Any) -> dict[str, Any]:
    d = {"simulation": {"duration": duration, "seed": 3},
         "topology": {"kind": "star", "hosts": hosts, "link_rate": "10Gbps"},
         "workloads": workloads}
    d.update(extra)
    return d


def offered_load(flows: Any, hosts: int, rate_bps: float = 10e9) -> float:
    """Arrival-rate estimate (n-1)/span times the sample mean size, over capacity."""
    t = np.sort(flows["start_s"].to_numpy())
    lam = (len(t) - 1) / (t[-1] - t[0])
    return float(lam * flows["size_bytes"].astype(float).mean() * 8 / (hosts * rate_bps))


def test_builtin_cdfs_have_the_published_means() -> None:
    for name in CDFS:
        _, mean = _core.builtin_cdf(name)
        assert abs(mean - PUBLISHED_MEAN[name]) < 1, name


@pytest.mark.parametrize("cdf", CDFS)
def test_poisson_hits_the_load_and_the_mean_size(cdf: str) -> None:
    sc = tenantnet.Scenario.from_dict(star(16, [
        {"kind": "poisson", "load": 0.6, "cdf": cdf, "flows": 10_000}]))
    f = sc.flows()
    assert len(f) == 10_000
    load = offered_load(f, 16)
    mean = f["size_bytes"].astype(float).mean()
    print(f"{cdf}: offered load {load:.4f} (target 0.6), mean size {mean:.0f} "
          f"(CDF {PUBLISHED_MEAN[cdf]})")
    assert abs(load / 0.6 - 1) <= 0.02
    assert abs(mean / PUBLISHED_MEAN[cdf] - 1) <= 0.03
    assert (f["src"] != f["dst"]).all()
    # arrivals are a Poisson process: inter-arrival CV close to 1
    gaps = np.diff(np.sort(f["start_s"].to_numpy()))
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05


@pytest.mark.parametrize("cdf", CDFS)
def test_iid_sizes_follow_the_cdf_within_sampling_error(cdf: str) -> None:
    """With i.i.d. sizes the sample mean of n draws has standard error sigma/sqrt(n);
    for these heavy-tailed CDFs that is 2-8 % at n = 10 000, so a fixed 3 % bound would
    be a coin toss. Check the mean against 4 standard errors, and the distribution
    itself with a Kolmogorov-Smirnov distance."""
    pts, mean = _core.builtin_cdf(cdf)
    sc = tenantnet.Scenario.from_dict(star(16, [
        {"kind": "poisson", "load": 0.6, "cdf": cdf, "flows": 10_000, "sizes": "iid"}]))
    sizes = sc.flows()["size_bytes"].astype(float).to_numpy()
    xs = np.array([p[0] for p in pts])
    ps = np.array([p[1] for p in pts])
    second = sum((p1 - p0) * (x0 * x0 + x0 * x1 + x1 * x1) / 3
                 for (x0, p0), (x1, p1) in itertools.pairwise(pts))
    sigma = np.sqrt(second - mean ** 2)
    assert abs(sizes.mean() - mean) <= 4 * sigma / np.sqrt(len(sizes))
    # empirical CDF vs the CDF at its own points (sizes rounded to whole bytes); at
    # an atom (two points with the same size) the CDF is the larger probability
    f_at = {x: ps[xs == x].max() for x in xs}
    emp = np.array([(sizes <= x + 0.5).mean() for x in f_at])
    true = np.array(list(f_at.values()))
    assert np.max(np.abs(emp - true)) < 1.63 / np.sqrt(len(sizes)) + 1e-3  # KS at 1 %


def test_user_cdf_file(tmp_path: Path) -> None:
    (tmp_path / "mine.cdf").write_text("# bytes prob\n1000 0\n2000 0.5\n10000 1\n")
    d = star(8, [{"kind": "poisson", "load": 0.3, "cdf_file": "mine.cdf", "flows": 2000}])
    sc = tenantnet.Scenario.from_dict(d, base_dir=tmp_path)
    f = sc.flows()
    s = f["size_bytes"].astype(float)
    assert s.min() >= 1000 and s.max() <= 10000
    expected = 0.5 * 1500 + 0.5 * 6000
    assert abs(s.mean() / expected - 1) < 0.01


def test_permutation_is_a_derangement() -> None:
    sc = tenantnet.Scenario.from_dict(star(16, [{"kind": "permutation"}]))
    f = sc.flows()
    assert len(f) == 16
    assert sorted(f["src"]) == sorted(f["dst"]) == sorted(f"h{i}" for i in range(16))
    assert (f["src"] != f["dst"]).all()
    assert f["size_bytes"].isna().all()


def test_incast_completes_no_sooner_than_the_receiver_link_allows() -> None:
    n, size = 8, 500_000
    d = star(9, [{"kind": "incast", "receiver": "h0", "size": f"{size}B"}], duration="50ms",
             transport={"protocol": "dctcp"},
             network={"buffer": "300KB", "ecn_threshold": "30pkt"},
             simulation={"duration": "50ms", "seed": 1, "stop_when_done": True})
    r, _ = simulate(d)
    f = r.flows
    assert len(f) == n and f["end_s"].notna().all()
    wire = n * size * 1500 / 1460 * 8 / 10e9
    last = f["end_s"].max()
    print(f"incast {n}x{size}B: last flow done at {last * 1e3:.3f} ms; wire time "
          f"{wire * 1e3:.3f} ms")
    assert last >= wire
    assert last <= 1.3 * wire  # DCTCP keeps the receiver's link busy
    # stop_when_done: under partitioned ties (the default) the run goes on to the next
    # step of the grid of link delays (the star's 1 us) after the last flow ends
    assert last <= r.summary["simulated_s"] <= last + 1e-6


def test_fixed_flows_repeat_at_the_interval() -> None:
    sc = tenantnet.Scenario.from_dict(star(4, [{"kind": "fixed", "src": "h0", "dst": "h1",
                                               "size": "10KB", "flows_per_pair": 3,
                                               "interval": "1ms", "start": "2ms"}]))
    f = sc.flows()
    assert f["start_s"].tolist() == pytest.approx([0.002, 0.003, 0.004])
    assert (f["size_bytes"] == 10_000).all()


def test_cbr_and_on_off_rates() -> None:
    wl = [
        {"kind": "cbr", "tenant": "cbr", "src": "h0", "dst": "h1", "rate": "2Gbps",
         "packet_size": "1000B"},
        {"kind": "on_off", "tenant": "onoff", "src": "h2", "dst": "h3", "rate": "4Gbps",
         "on": "100us", "off": "300us", "distribution": "exponential", "packet_size": "1000B"},
    ]
    r, _ = simulate(star(4, wl, duration="200ms"))
    g = r.flows.set_index("tenant")["bytes_delivered"] * 8 / 0.2 / 1e9
    print(f"cbr {g['cbr']:.4f} Gb/s, on/off {g['onoff']:.4f} Gb/s")
    assert g["cbr"] == pytest.approx(2.0, rel=1e-3)
    # duty cycle 1/4 of 4 Gb/s; 500 exponential cycles: about 5 % standard error
    assert g["onoff"] == pytest.approx(1.0, rel=0.15)
    assert r.summary["packets_dropped"] == 0
