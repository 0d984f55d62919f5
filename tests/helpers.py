"""Shared helpers: scenario builders and a runner that checks packet conservation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tenantnet
from tenantnet.sim.results import Results
from tenantnet.sim.results import jain as jain  # re-exported for the fidelity tests
from tenantnet.sim.scenario import TIES_ENV, env_setting, transport_profile

Ran = Callable[..., Path]
"""The ``ran`` fixture (conftest.py): a command's arguments -> the folder it wrote
this session."""


@contextmanager
def htsim_scheduled() -> Iterator[None]:
    """Every scenario built within the block (here and in the workers it starts) runs
    under the `htsim` transport profile and scheduled ties: tenantnet's defaults before
    they became a Linux host's. A few Trinity reproduction tests hold their claims
    there; under the defaults those claims' verdicts changed, and docs/claims/ (the
    published verdicts) and the performance guide's table say which and why."""
    with transport_profile("htsim"), env_setting(TIES_ENV, "scheduled"):
        yield


def check_conservation(r: Results) -> None:
    """sent = delivered + dropped + evicted + in flight, in-flight counted independently."""
    s = r.summary
    accounted = (s["packets_delivered"] + s["packets_dropped"] + s["packets_evicted"]
                 + s["packets_in_flight"])
    assert s["packets_sent"] == accounted
    assert s["conservation_ok"], s
    assert s["buffer_accounting_ok"], s


def simulate(scenario: dict[str, Any] | tenantnet.Scenario,
             checkpoints: tuple[float, ...] = ()) -> tuple[Results, list[dict[str, int]]]:
    """Runs a scenario, reading the packet counters at each checkpoint (seconds), and
    checks conservation at the end."""
    sc = (scenario if isinstance(scenario, tenantnet.Scenario)
          else tenantnet.Scenario.from_dict(scenario))
    sim = sc.simulation()
    counters = []
    for t in checkpoints:
        sim.run_until(t)
        counters.append(sim.counters())
    sim.run_until(sim.end_s)
    r = sim.results()
    check_conservation(r)
    return r, counters


def dumbbell(n: int, protocol: str, duration: str, buffer: str, *, ecn_threshold: str | None = None,
             ecn_mark: str = "enqueue", link_delay: str = "10us",
             bottleneck_delay: str | None = None, sample: str = "1ms") -> dict[str, Any]:
    """n long-lived flows left{i} -> right{i} over a 10 Gb/s dumbbell, under the `htsim`
    transport profile (`tcp` is NewReno; the ports' clocks exact), as the theory and the
    htsim figures the tests hold them to assume."""
    topo: dict[str, Any] = {"kind": "dumbbell", "hosts_per_side": n, "link_rate": "10Gbps",
                            "link_delay": link_delay}
    if bottleneck_delay:
        topo["bottleneck_delay"] = bottleneck_delay
    net: dict[str, Any] = {"buffer": buffer, "ecn_mark": ecn_mark}
    if ecn_threshold:
        net["ecn_threshold"] = ecn_threshold
    return {
        "simulation": {"duration": duration, "seed": 1},
        "topology": topo,
        "network": net,
        "transport": {"protocol": protocol, "profile": "htsim"},
        "workloads": [{"kind": "long_lived", "src": f"left{i}", "dst": f"right{i}"}
                      for i in range(n)],
        "output": {"sample_interval": sample, "throughput": ["flow", "link"]},
    }


def bottleneck(r: Results) -> Any:
    """The links row of the dumbbell's bottleneck port."""
    L = r.links
    return L[(L["node"] == "switch-left") & (L["peer"] == "switch-right")].iloc[0]


def cli(*args: str, cwd: Path | None = None, timeout: float = 600
        ) -> subprocess.CompletedProcess[str]:
    """Runs ``tenantnet ARGS`` in a fresh interpreter; its exit code and output."""
    return subprocess.run([sys.executable, "-m", "tenantnet", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


def namespaces_why_not() -> str | None:
    """Why this machine cannot create network namespaces (not root, no iproute2, or not
    permitted), or None when it can."""
    from tenantnet.linux.lab import why_not
    return why_not()


def default_sigint() -> None:
    """For ``Popen(preexec_fn=...)``: the child takes SIGINT as a terminal's Ctrl-C does.
    A suite started in the background of a shell without job control inherits SIGINT
    ignored, and a Python child would then never see KeyboardInterrupt."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def classifying(scheduler: str) -> dict[str, Any]:
    """Tenant a (four flows, DSCP 0) and tenant b (one flow, DSCP 1, which b's host
    tags) share a switch port whose two queues take DSCP 0 and 1."""
    return {
        "name": "two-queues", "simulation": {"duration": "1.5s"},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "1Gbps", "link_delay": "5us"},
        "network": {"buffer": "500KB", "queues": 2, "scheduler": scheduler,
                    "dscp_map": "identity", "buffer_policy": "static_partition",
                    **({"weights": [1, 3]} if scheduler == "dwrr" else {})},
        "transport": {"protocol": "tcp", "min_rto": "5ms"},
        "tenants": [{"name": "a", "guarantee": "100Mbps", "hosts": ["h0"]},
                    {"name": "b", "guarantee": "100Mbps", "hosts": ["h1"]}],
        "workloads": [
            {"kind": "long_lived", "tenant": "a", "src": "h0", "dst": "h2", "dscp": 0,
             "flows_per_pair": 4},
            {"kind": "long_lived", "tenant": "b", "src": "h1", "dst": "h2", "dscp": 1}],
        "output": {"sample_interval": "50ms"}}


def braced(code: str, start: int) -> str:
    """The text from the brace at or after `start` to the one that closes it (the
    tests that read Rust sources take a body, an impl block or a struct with it)."""
    i = code.index("{", start)
    depth = 0
    for j in range(i, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return code[i:j + 1]
    return code[i:]


def names_the_place(e: BaseException, file: Path, key: str, fragments: list[str]) -> None:
    """Error `e` names `file`, the scenario `key` that named it, and each fragment."""
    msg = str(e)
    assert str(file) in msg and key in msg, msg
    for f in fragments:
        assert f in msg, msg
