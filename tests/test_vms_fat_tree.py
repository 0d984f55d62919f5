"""scripts/vms_fat_tree.py writes the BENCHMARKS case of VMs on every host of a fat-tree
(the memory and threads measurements are re-run from it): a valid scenario whose
flows are what its docstring says."""

from __future__ import annotations

import sys
from pathlib import Path

import tenantnet

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from vms_fat_tree import scenario  # noqa: E402


def test_every_host_sends_one_flow_of_t_and_four_of_u_one_pod_over() -> None:
    k = 4
    s = tenantnet.Scenario.from_toml(scenario(k, "1ms"))
    flows = s.flows()
    hosts = k**3 // 4
    assert len(flows) == 5 * hosts
    for src, dst in zip(flows["src"], flows["dst"], strict=True):
        i, j = int(src[1:]), int(dst[1:])
        assert j == (i + k * k // 4) % hosts
    counts = flows.groupby("tenant").size().to_dict()
    assert counts == {"T": hosts, "U": 4 * hosts}
