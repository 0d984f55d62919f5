"""How events at the same picosecond are ordered (`simulation.ties`): `partitioned`, the
default, by a seeded rank of the port that scheduled them, drawn afresh at each instant:
the order each part of a partitioned network can compute on its own, as a parallel run
needs; `scheduled`, in the order they were scheduled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import bottleneck, cli, dumbbell, jain, simulate


def with_ties(sc: dict[str, Any], ties: str | None, seed: int = 1) -> dict[str, Any]:
    sc["simulation"]["seed"] = seed
    if ties is not None:
        sc["simulation"]["ties"] = ties
    return sc


def outcome(sc: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The run's summary without its wall time and seed, and its flows table."""
    r, _ = simulate(sc)
    summary = {k: v for k, v in r.summary.items() if k not in ("wall_s", "seed")}
    return summary, r.flows


def test_partitioned_is_the_default() -> None:
    default = outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), None))
    partitioned = outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), "partitioned"))
    assert default[0] == partitioned[0]
    assert default[1].equals(partitioned[1])


def test_partitioned_is_repeatable_and_orders_the_ties_otherwise() -> None:
    # four identical flows on one dumbbell: their packets meet at the bottleneck at
    # the same picoseconds, so the rule decides who gets a queue's slot
    runs = [outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), t))
            for t in ("partitioned", "partitioned", "scheduled")]
    assert runs[0][0] == runs[1][0] and runs[0][1].equals(runs[1][1])
    assert runs[0][0]["events"] != runs[2][0]["events"]
    # another seed draws other ranks (the dumbbell itself draws nothing at random)
    other = outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), "partitioned", seed=2))
    assert other[0]["events"] != runs[0][0]["events"]
    seeded = [outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), "scheduled", seed=s))
              for s in (1, 2)]
    assert seeded[0][0] == seeded[1][0]


@pytest.mark.parametrize("buffer", ["100KB", "1MB"])
def test_under_partitioned_ties_no_port_is_favoured(buffer: str) -> None:
    """A fixed order of ports (lowest first) let the same flows win the bottleneck's
    last slot every time; ranks drawn afresh at each instant share the link as
    NewReno should."""
    r, _ = simulate(with_ties(dumbbell(8, "tcp", "1s", buffer), "partitioned"))
    g = r.flow_gbps().to_numpy()
    util = float(bottleneck(r)["utilization"])
    print(f"buffer {buffer}: per-flow {np.round(g, 3)}, Jain {jain(g):.4f}, utilization {util:.4f}")
    assert jain(g) >= 0.95
    assert util >= 0.95


def test_a_rule_of_no_kind_is_refused(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text('[simulation]\nduration = "1ms"\nties = "random"\n\n'
                  '[topology]\nkind = "star"\nhosts = 2\n')
    res = cli("run", str(sc), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    assert "simulation.ties" in res.stderr and "partitioned" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()


def test_the_command_line_replaces_the_rule(tmp_path: Path) -> None:
    sc = tmp_path / "s.json"
    sc.write_text(json.dumps(dumbbell(4, "tcp", "20ms", "100KB")))
    events = {}
    for ties in ("scheduled", "partitioned"):
        res = cli("run", str(sc), "--ties", ties, "-o", str(tmp_path / ties), "-q",
                  "--no-report")
        assert res.returncode == 0, res.stderr
        events[ties] = json.loads((tmp_path / ties / "summary.json").read_text())["events"]
    default = outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), None))[0]["events"]
    assert events["partitioned"] == default != events["scheduled"]
    bad = cli("validate", str(sc), "--ties", "random")
    assert bad.returncode == 2 and "--ties" in bad.stderr and "Traceback" not in bad.stderr


def test_the_environment_sets_the_rule_of_every_scenario_and_says_so() -> None:
    """What `tenantnet reproduce --ties` uses: TENANTNET_TIES, through `env_setting`,
    reaches every scenario built in the block, and each run's name records it."""
    from tenantnet.sim.scenario import TIES_ENV, env_setting
    sc = dumbbell(4, "tcp", "20ms", "100KB")
    sc["name"] = "four"
    partitioned = outcome(with_ties(dumbbell(4, "tcp", "20ms", "100KB"), "partitioned"))[0]
    with env_setting(TIES_ENV, "partitioned"):
        r, _ = simulate(sc)
    assert r.summary["events"] == partitioned["events"]
    assert r.summary["scenario"] == "four (simulation.ties = 'partitioned' from TENANTNET_TIES)"
    with env_setting(TIES_ENV, None):
        r, _ = simulate(sc)
    assert r.summary["scenario"] == "four"
    bad = cli("reproduce", "trinity-fig6", "-o", "x", "--ties", "random")
    assert bad.returncode == 2 and "--ties" in bad.stderr and "Traceback" not in bad.stderr
