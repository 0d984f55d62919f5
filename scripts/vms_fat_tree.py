"""The scenario of BENCHMARKS.md's "Hosts, controllers and gates on threads" case, printed
as TOML: a fat-tree (the permutation benchmark's links, buffers, ECN and DCTCP) with
two tenants' VMs on every host, Trinity's paper rate control in every vswitch, each VM
of tenant T sending one long-lived flow to the VM one pod over (h_i to h_(i + k²/4))
and each of tenant U four, hose guarantees 2 Gb/s, tenant and VM throughput sampled
every 1 ms, partitioned ties.

    python scripts/vms_fat_tree.py 12 15ms > vms-k12.toml
    /usr/bin/time -f "%M KB" target/release/tenantnet-sim vms-k12.toml --threads 2

k = 8 over 30 ms processes 11 095 718 events, k = 12 over 15 ms 18 185 649."""

from __future__ import annotations

import sys


def scenario(k: int, duration: str) -> str:
    """The case's TOML for a fat-tree of arity `k`, run for `duration`."""
    n = k**3 // 4
    hosts = ", ".join(f'"h{i}"' for i in range(n))
    out = [
        f'name = "vms-k{k}"',
        "[simulation]", f'duration = "{duration}"', "seed = 1", 'ties = "partitioned"',
        "[topology]", 'kind = "fat_tree"', f"k = {k}", 'link_rate = "10Gbps"',
        'link_delay = "1us"',
        "[network]", 'buffer = "100pkt"', 'ecn_threshold = "15pkt"', 'ecn_mark = "dequeue"',
        "[transport]", 'protocol = "dctcp"', 'mss = "8960B"', 'header = "40B"',
        'ack_size = "64B"', "init_ssthresh = 15", 'min_rto = "10ms"',
        "[vswitch]", 'policy = "trinity"', "[vswitch.trinity]", 'profile = "paper"',
    ]
    for t in ("T", "U"):
        out += ["[[tenants]]", f'name = "{t}"', 'guarantee = "2Gbps"', f"hosts = [{hosts}]"]
    for t, per in (("T", 1), ("U", 4)):
        for i in range(n):
            out += ["[[workloads]]", 'kind = "long_lived"', f'tenant = "{t}"',
                    f'src = "h{i}"', f'dst = "h{(i + k * k // 4) % n}"',
                    f"flows_per_pair = {per}"]
    out += ["[output]", 'throughput = ["tenant", "vm"]', 'sample_interval = "1ms"',
            "queues = false"]
    return "\n".join(out) + "\n"


def main() -> int:
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) % 2:
        print("usage: vms_fat_tree.py K DURATION   (K even, e.g. 12 15ms)", file=sys.stderr)
        return 2
    sys.stdout.write(scenario(int(sys.argv[1]), sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
