"""Tenants arriving and departing while QShare's controller runs (issue 16; §5.3:
"Tenant departures will trigger network allocation state update as well. Newly
arrived tenants are served in shared queues, and will be evaluated at the end of
current interval").

The scenario: Fig. 3(c)'s link with two queues and one VM slot per server. A is
there throughout; B arrives at 1 s on the second pair of servers and departs at
2 s; C, given by its size, arrives at 2.5 s and fits only in the slots B left."""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd
import pytest

import tenantnet
from helpers import simulate
from tenantnet.errors import ScenarioError
from tenantnet.reproduce import qshare_packet as qp

CORE = "switch-left->switch-right"


def scenario() -> dict[str, Any]:
    d = qp.fig3c_scenario(duration_s=4.0, bc_s=(1.0, 2.0))
    d["topology"]["hosts_per_side"] = 2
    d["qshare"].update(slots=1)
    d["tenants"] = [
        {"name": "A", "guarantee": "300Mbps",
         "vms": [{"name": "A1", "host": "left0"}, {"name": "A2", "host": "right0"}]},
        {"name": "B", "guarantee": "300Mbps", "arrive": "1s", "depart": "2s",
         "vms": [{"name": "B1", "host": "left1"}, {"name": "B2", "host": "right1"}]},
        {"name": "C", "guarantee": "300Mbps", "arrive": "2500ms", "size": 2},
    ]
    d["workloads"] = [
        {"kind": "long_lived", "tenant": "A", "src": "A1", "dst": "A2"},
        # no stop: B's departure ends it
        {"kind": "long_lived", "tenant": "B", "src": "B1", "dst": "B2", "start": "1s"},
        {"kind": "long_lived", "tenant": "C", "src": "C/vm0", "dst": "C/vm1",
         "start": "2500ms"},
    ]
    return d


@pytest.fixture(scope="module")
def run() -> Any:
    r, _ = simulate(scenario())  # packet conservation checked there
    return r


def test_tenants_are_bound_only_while_present(run: Any) -> None:
    t = run.qshare_tenants
    seen = t.groupby("tenant", observed=True)["time_s"].agg(["min", "max"])
    assert seen.loc["A"].tolist() == pytest.approx([0.0, 4.0])  # the end included
    # B: from its arrival to the last decision before it left; C from its arrival
    assert seen.loc["B"].tolist() == pytest.approx([1.0, 1.5])
    assert seen.loc["C", "min"] == pytest.approx(2.5)
    # a newcomer starts in the shared queue, unmeasured, and is bound at a decision
    first = t.sort_values("time_s").groupby("tenant", observed=True).first()
    assert (first.loc[["B", "C"], "dedicated"] == 0).all()
    assert (first.loc[["B", "C"], "u_factor"] == 0).all()
    # updates at the arrivals and the departure as well as every 0.5 s decision
    assert sorted(set(t["time_s"])) == pytest.approx(
        [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0])


def test_the_core_port_follows_arrivals_and_departures(run: Any) -> None:
    q = run.qshare_queues
    core = q[q["port"] == CORE]
    at = {round(t, 3): dict(zip(d["tenants"], d["weight"], strict=True))
          for t, d in core.groupby("time_s")}
    # A dedicated from 0.5 s; B joins the shared queue at 1 s (300 : 300), leaves at 2 s
    assert at[1.0] == {"A": 15, "B": 15}
    after = {k: v for k, v in at.items() if 2.0 <= k < 2.5}
    assert after and all("B" not in v for v in after.values())
    assert any("C" in v for k, v in at.items() if k >= 2.5)


def test_traffic_stays_inside_each_lifetime(run: Any) -> None:
    s = qp.tenant_series(run)

    def mean(name: str, a: float, b: float) -> float:
        w = s[(s["time_s"] > a + 1e-9) & (s["time_s"] <= b + 1e-9)]
        return float(w[name].mean()) if name in w else 0.0

    assert mean("B", 0.0, 1.0) == 0
    # B in the shared queue (until the decision at 1.5 s) is capped at its guarantee
    assert mean("B", 1.1, 1.5) == pytest.approx(300, rel=0.03)
    assert mean("A", 1.3, 1.5) > 600
    assert mean("B", 2.1, 4.0) == 0  # its long-lived flow stopped when it departed
    assert mean("C", 0.0, 2.5) == 0
    assert mean("C", 2.7, 4.0) > 250
    flows = run.flows.set_index("tenant")
    assert flows.loc["B", "stop_s"] == pytest.approx(2.0)


def test_a_departure_frees_the_slots_a_later_tenant_is_placed_in(run: Any) -> None:
    vms = run.vms
    c = vms[vms["tenant"] == "C"]
    assert sorted(map(str, c["host"])) == ["left1", "right1"]  # where B was
    # without B's departure, C finds no room: one slot per server, all taken
    d = scenario()
    d["tenants"][1].pop("depart")
    with pytest.raises(ScenarioError, match=r'tenants\[2\].*no Tenant-Routing tree.*"C"'):
        tenantnet.Scenario.from_dict(d).simulation()


def test_arrivals_are_deterministic_and_change_nothing_without_them(run: Any) -> None:
    r2, _ = simulate(scenario())
    for name in ("flows", "throughput", "qshare_tenants", "qshare_queues"):
        pd.testing.assert_frame_equal(getattr(run, name), getattr(r2, name))
    # lifetimes that span the run are the same run as none at all
    d = qp.fig3c_scenario(duration_s=2.0, bc_s=(1.0, 2.0))
    e = copy.deepcopy(d)
    for t in e["tenants"]:
        t["arrive"] = "0s"
    t["depart"] = "5s"  # after the run's end
    a, _ = simulate(d)
    b, _ = simulate(e)
    for name in ("flows", "throughput", "qshare_tenants", "qshare_queues"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


def test_a_departing_dedicated_tenants_queue_waits_for_the_next_decision() -> None:
    d = scenario()
    d["tenants"][0]["depart"] = "1250ms"  # A holds the dedicated queue by then
    d["workloads"][0]["stop"] = "1250ms"
    r, _ = simulate(d)
    t = r.qshare_tenants
    at = {round(k, 3): set(g[g["dedicated"] == 1]["tenant"]) for k, g in t.groupby("time_s")}
    assert at[1.0] == {"A"}
    assert at[1.25] == set()  # A gone, its queue free until 1.5 s
    assert at[1.5] == {"B"}  # backlogged B takes it
    s = qp.tenant_series(r)
    late = s[(s["time_s"] > 1.7) & (s["time_s"] <= 2.0 + 1e-9)]
    assert late["B"].mean() > 900  # dedicated and uncapped, alone on the link


@pytest.mark.parametrize(("change", "key", "words"), [
    (lambda d: d.pop("qshare"), r"tenants\[1\]\.depart", r"expected a \[qshare\] table"),
    (lambda d: d["tenants"][1].update(depart="1s"), r"tenants\[1\]\.depart",
     "after the arrival at 1 s"),
    (lambda d: d["tenants"][2].update(arrive="4s"), r"tenants\[2\]\.arrive",
     "before the run ends at 4 s"),
    (lambda d: d["workloads"][1].pop("start"), r"workloads\[1\]",
     'tenant "B" starts at 0 s, before the tenant arrives at 1 s'),
    (lambda d: d["qshare"].update(dedicated=["B"]), r"qshare\.dedicated\[0\]",
     "arrives after 0 s"),
    (lambda d: d["tenants"][2].update(arrive="1500ms"), r"tenants\[2\]",
     'no Tenant-Routing tree with room for tenant "C"'),
])
def test_bad_lifetimes_name_the_key(change: Any, key: str, words: str) -> None:
    d = scenario()
    change(d)
    if "qshare" not in d:
        d["network"]["host_nic"] = "fifo"
        d["tenants"][2] = {"name": "C", "guarantee": "300Mbps", "hosts": ["left0", "right0"]}
        d["workloads"][2].update(src="C/left0", dst="C/right0")
    with pytest.raises(ScenarioError, match=key + ".*" + words):
        tenantnet.Scenario.from_dict(d).simulation()


def test_the_report_shows_arrivals_and_departures(run: Any, tmp_path: Any) -> None:
    from tenantnet.report import qshare as report_qshare
    from tenantnet.report import runs as report
    s = report_qshare.tenant_summary(run).set_index("tenant")
    assert s.loc["B", "at the end"] == "departed"
    assert s.loc["A", "at the end"] == s.loc["C", "at the end"] == "dedicated"
    assert s.loc["C", "bound from (s)"] == pytest.approx(2.5)
    h = report.write_report({"lifetimes": run}, tmp_path / "r.html", "lifetimes").read_text()
    assert 'alt="QShare binding over time"' in h and "departed" in h


def test_the_controllers_wall_time_is_in_the_summary(run: Any) -> None:
    from helpers import dumbbell
    assert 0 < run.summary["control_wall_s"] < run.summary["wall_s"]
    plain, _ = simulate(dumbbell(1, "tcp", "5ms", "100KB"))
    assert "control_wall_s" not in plain.summary  # no controller, no figure
