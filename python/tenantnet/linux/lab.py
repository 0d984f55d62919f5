"""Network namespaces for emulating a scenario on this machine's Linux (the ground for
``tenantnet emulate``): a lab that owns every namespace it creates and removes them on
every way out, and a probe of what the kernel's traffic control offers.

A lab's namespaces are named ``<prefix><node>`` (prefix ``tn-<tag>-``); deleting a
namespace deletes the veth ends in it, so removing the namespaces removes the links.
A lab refuses to start while namespaces of its prefix exist (a run that did not
clean up), and :func:`cleanup` removes them. While a lab is open, SIGTERM is turned
into ``SystemExit`` so that the ``with`` block's cleanup runs (Ctrl-C raises
``KeyboardInterrupt`` already), and the namespaces are removed at interpreter exit
if the block was never left. Only the process that opened the lab removes them: a
forked child (pyroute2's netlink helpers, an emulation's traffic generator) exits on
SIGTERM at once, so that it never unwinds through the parent's ``with`` block.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ..errors import ScenarioError

PREFIX = "tn-"
QDISCS: dict[str, tuple[str, ...]] = {
    "htb": (), "pfifo": (), "bfifo": (), "clsact": (), "netem": (), "fq": (), "prio": (),
    "tbf": ("rate", "1mbit", "burst", "10kb", "latency", "50ms"),
    "red": ("limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000", "burst",
            "55", "bandwidth", "10mbit", "probability", "0.02", "ecn"),
}
"""The qdiscs :func:`probe` tries, with the parameters each needs (RED with ECN
marking, as an emulated switch would use it)."""
CONGESTION = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode:
        raise ScenarioError(f"ip {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r


def why_not() -> str | None:
    """Why this machine cannot create network namespaces (not root, no iproute2, or not
    permitted), or None when it can."""
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "iproute2's ip and tc are not installed"
    name = f"{PREFIX}canary-{uuid.uuid4().hex[:6]}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if r.returncode:
        return f"network namespaces are not permitted here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def namespaces() -> list[str]:
    """Every network namespace of this machine, by name."""
    r = _ip("netns", "list", check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def leftovers(prefix: str = PREFIX) -> list[str]:
    """The namespaces named with `prefix`."""
    return sorted(n for n in namespaces() if n.startswith(prefix))


def cleanup(prefix: str = PREFIX) -> list[str]:
    """Removes every namespace named with `prefix` (and so the links in them); returns
    their names."""
    gone = leftovers(prefix)
    for n in gone:
        _ip("netns", "del", n, check=False)
    return gone


class Lab:
    """Namespaces and veth links that exist while the lab is open (``with Lab(...)``).

    `tag` names the run (a fresh one by default); every namespace is ``tn-<tag>-<node>``.
    `cleanup_hint` says how to remove a killed run's namespaces.
    """

    def __init__(self, tag: str | None = None, cleanup_hint: str = "") -> None:
        self.prefix = f"{PREFIX}{tag or uuid.uuid4().hex[:8]}-"
        self.cleanup_hint = cleanup_hint or ("`ip netns del NAME`, or "
                                             "tenantnet.linux.lab.cleanup()")
        self.made: list[str] = []
        self._old_term: Callable[[int, FrameType | None], Any] | int | None = None
        self._open = False
        self._pid = os.getpid()

    def __enter__(self) -> Lab:
        left = leftovers(self.prefix)
        if left:
            raise ScenarioError(f"namespaces of a run that did not clean up exist "
                                f"({', '.join(left[:4])}{', ...' if len(left) > 4 else ''}): "
                                f"remove them ({self.cleanup_hint})")
        self._pid = os.getpid()
        self._old_term = signal.signal(signal.SIGTERM, self._on_term)
        atexit.register(self.close)
        self._open = True
        return self

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self._pid:
            # a forked child (a netlink helper, the traffic generator) inherits the
            # handler and the stack: unwinding it would leave this lab's `with` block
            # in the child and remove the namespaces under the parent's feet
            os._exit(128 + signum)
        raise SystemExit(128 + signum)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Removes every namespace of the lab; safe to call twice, and a no-op in a
        forked child of the process that opened it."""
        if not self._open or os.getpid() != self._pid:
            return
        self._open = False
        cleanup(self.prefix)
        self.made.clear()
        atexit.unregister(self.close)
        if self._old_term is not None:
            signal.signal(signal.SIGTERM, self._old_term)

    def ns(self, node: str) -> str:
        """Creates node `node`'s namespace (loopback up) and returns its name."""
        name = f"{self.prefix}{node}"
        _ip("netns", "add", name)
        self.made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")
        return name

    def link(self, a: str, a_if: str, b: str, b_if: str) -> None:
        """A veth pair from `a_if` in namespace `a` to `b_if` in `b`, both up."""
        _ip("-n", a, "link", "add", a_if, "type", "veth", "peer", "name", b_if, "netns", b)
        _ip("-n", a, "link", "set", a_if, "up")
        _ip("-n", b, "link", "set", b_if, "up")


def probe() -> dict[str, bool]:
    """What this kernel offers an emulation: each of :data:`QDISCS` (tried on a veth in
    a scratch namespace) and each TCP congestion control (``tcp_<name>``) it lists."""
    out: dict[str, bool] = {}
    with Lab(f"probe{uuid.uuid4().hex[:6]}") as lab:
        a, b = lab.ns("a"), lab.ns("b")
        lab.link(a, "p0", b, "p1")
        for q, params in QDISCS.items():
            where = ["clsact"] if q == "clsact" else ["root", q, *params]
            r = subprocess.run(["tc", "-n", a, "qdisc", "add", "dev", "p0", *where],
                               capture_output=True, text=True)
            out[q] = r.returncode == 0
            subprocess.run(["tc", "-n", a, "qdisc", "del", "dev", "p0",
                            *(["clsact"] if q == "clsact" else ["root"])],
                           capture_output=True)
    available = CONGESTION.read_text().split() if CONGESTION.exists() else []
    for cc in ("reno", "cubic", "bbr", "dctcp"):
        out[f"tcp_{cc}"] = cc in available
    return out


def require(needed: dict[str, str], have: dict[str, bool] | None = None) -> None:
    """Raises ScenarioError naming each feature in `needed` (feature to what the scenario
    needs it for) that the kernel lacks."""
    have = probe() if have is None else have
    missing = [f"{f} ({why})" for f, why in needed.items() if not have.get(f, False)]
    if missing:
        raise ScenarioError("this kernel lacks what the scenario needs: " + "; ".join(missing))
