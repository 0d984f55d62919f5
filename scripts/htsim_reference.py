"""Builds an htsim reference file for `tenantnet bench crosscheck` from the output
of htsim's DCTCP permutation, one file per seed.

htsim's `htsim_dctcp_permutation` needs three local edits, described in
BENCHMARKS.md ("Against htsim, flow by flow"): `srand` from `HTSIM_SEED`, the main
loop counting events (printed as `EVENTS n`), and at the end one line per flow,
`FLOW src dst bytes queue queue ...`: its sink's cumulative ACK and the names of the
queues on its route. This script reads those lines and writes each run's per-flow
bytes and each flow's max-min fair share on htsim's own paths (Gb/s, all links
10 Gb/s), which the cross-check uses to separate path luck from transport.

    python scripts/htsim_reference.py --k 12 --commit SHA --machine TEXT \
        OUT.json run-seed1.out run-seed2.out ...

Each input's seed is read from its name (`...s<seed>.out`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tenantnet.crosscheck.htsim import maxmin_shares

DURATION_S = 0.21
PACKET_BYTES = 9000


def parse(path: Path) -> dict[str, object]:
    """One run: its seed, event count, per-flow bytes and fair shares."""
    m = re.search(r"s(\d+)\.out$", path.name)
    if not m:
        raise SystemExit(f"{path}: expected a name ending in s<seed>.out")
    events, flows = None, []
    for line in path.read_text().splitlines():
        w = line.split()
        ev = re.search(r"EVENTS (\d+)", line)  # after htsim's progress dots
        if ev:
            events = int(ev.group(1))
        elif w[:1] == ["FLOW"]:
            # a queue's name ends in its bundle index, "(0)": the same link either way
            flows.append((int(w[3]), [re.sub(r"\(\d+\)$", "", q) for q in w[4:]]))
    if events is None or not flows:
        raise SystemExit(f"{path}: no EVENTS or FLOW lines (is htsim patched?)")
    return {"seed": int(m.group(1)), "events": events,
            "flow_bytes": [b for b, _ in flows],
            "flow_fair_gbps": [round(x, 4) for x in maxmin_shares([p for _, p in flows])]}


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--commit", required=True, help="htsim's commit")
    p.add_argument("--machine", required=True, help="where and when it ran")
    p.add_argument("out", type=Path)
    p.add_argument("runs", type=Path, nargs="+")
    a = p.parse_args(argv)
    n = a.k ** 3 // 4
    runs = sorted((parse(r) for r in a.runs), key=lambda r: int(str(r["seed"])))
    a.out.write_text(json.dumps({
        "what": "Per-flow bytes delivered by htsim's DCTCP permutation "
                "(datacenter/old_tests/main_dctcp_permutation.cpp), one run per seed, "
                "and each flow's max-min fair share on its htsim path",
        "htsim_commit": a.commit,
        "command": f"htsim_dctcp_permutation -nodes {n} -conns {n} -ssthresh 15 -q 100 "
                   f"({DURATION_S} s, {PACKET_BYTES}-byte packets, 10 Gb/s, 1 us links), "
                   "srand(seed); bytes are each TcpSink's cumulative ACK at the end",
        "machine": a.machine, "duration_s": DURATION_S, "packet_bytes": PACKET_BYTES,
        "k": a.k, "runs": runs,
    }, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
