"""Reference outputs, by digest: a change that is not meant to change results keeps every
one of these; a change that does updates them in the same commit, saying why.

Each digest covers the tables of a short run written as CSV with every float in full
precision (``%.17g``), so it is independent of the Parquet writer's version."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

import tenantnet

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def cut(name: str, duration: str) -> dict[str, Any]:
    d = tenantnet.Scenario.from_file(EXAMPLES / f"{name}.toml").data()
    d["simulation"]["duration"] = duration
    return d


CASES: dict[str, tuple[dict[str, Any], str]] = {
    # behaviour as of issue 11 (sized flows complete at the sender's last ACK)
    "dctcp-incast": (cut("dctcp-incast", "10ms"), "ecc867045ea6aefe"),
    "sp-dwrr-pias": (cut("sp-dwrr-pias", "10ms"), "2dff4e9d46eec3d1"),
    "vswitch-mbfq": (cut("vswitch-mbfq", "600ms"), "644e4e7008c2b8be"),
    "barberq-services": (cut("barberq-services", "80ms"), "0033da196a79dbd3"),
}


def digest(r: tenantnet.Results) -> str:
    h = hashlib.sha256()
    for name in ("flows", "throughput", "queues", "links", "queue_stats", "vms", "vm_rates"):
        h.update(getattr(r, name).to_csv(index=False, float_format="%.17g").encode())
    s = dict(r.summary)
    s.pop("wall_s")
    h.update(repr(sorted(s.items())).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_outputs_are_unchanged(name: str) -> None:
    scenario, expected = CASES[name]
    got = digest(tenantnet.run(scenario))
    assert got == expected, f"{name}: outputs changed ({got}); if meant, update the digest"
