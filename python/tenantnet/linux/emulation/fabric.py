"""A scenario's network as Linux namespaces (``tenantnet emulate``): a namespace per
host and switch, a veth pair per link, IPv4 addresses and static routes (equal-cost
multipath where the topology has several shortest paths), and each port's rate as an
HTB class over a bfifo of the port's buffer (in bytes: the veths carry
segmentation-offloaded packets of up to 64 KB, as a host's TCP hands its NIC).

Addresses: host number k owns ``10.<1 + k // 250>.<k % 250>.0/24``; the host is ``.1``
and its VMs ``.10``, ``.11``, ... Switch number j is ``10.254.<j>.1``. Every interface
carries its node's address as a point-to-point ``/32`` whose peer is the node at the
other end, so a route needs only a next hop; a switch reaches a host's ``/24`` through
the neighbours on its shortest paths to it (the kernel's multipath, hashed on the
five-tuple). The hosts' and VMs' routes carry the scenario's minimum RTO (``rto_min``).

**VMs.** By default (``vm_stack = "host"``) a VM is an address of its host's
namespace and its sockets are bound to it: its packets reach the host's NIC queues
from the stack that sent them, so that TCP small queues hold a sender back while its
class is full, as a vswitch's per-VM queue holds back a VM (the simulator's
``vswitch.queue``: "TCP senders wait when it is full"). With ``vm_stack =
"namespace"`` each VM has a namespace of its own behind a veth (``vm<i>`` on the host,
``eth0`` in the VM): a veth hands the packet over without its socket, so a full class
drops it instead, as HTB on a hypervisor's NIC drops a VM's forwarded packets. The
two differ where a rate changes: MBFQ's ramp-up waits for a VM to fill its new rate,
and a sender recovering from drops fills it late (docs: Emulation).

Ports are named ``p<port>`` after the simulator's port numbers (a host's NIC is
``p0``).
A port's egress is shaped by :class:`tenantnet.linux.tc.Plan`, the code ``deploy
linux`` writes (:mod:`.plans` makes each port's).
"""

from __future__ import annotations

import subprocess
import sys
from collections import deque
from dataclasses import dataclass, field

import pandas as pd

from ...errors import ScenarioError
from ..lab import Lab
from ..tc import Plan
from .kinds import VM_STACKS

MAX_HOSTS = 250 * 250
MAX_SWITCHES = 250


@dataclass(frozen=True)
class Port:
    """One end of a link: its node, port number, interface, peer node and rate."""

    node: str
    number: int
    peer: str
    rate_bps: int

    @property
    def ifname(self) -> str:
        return f"p{self.number}"


@dataclass(frozen=True)
class VmEnd:
    """A VM: its name, tenant, host, address, the host's interface toward it and its
    guarantee (bit/s)."""

    vm: str
    tenant: str
    host: str
    addr: str
    ifname: str
    guarantee_bps: int


@dataclass
class Fabric:
    """The namespaces, links, addresses and routes of one scenario."""

    hosts: list[str]
    switches: list[str]
    ports: list[Port]
    vms: list[VmEnd]
    addr: dict[str, str]
    prefix: dict[str, str]
    """Each host's /24."""
    routes: dict[str, list[tuple[str, list[tuple[str, str]]]]] = field(default_factory=dict)
    """Each switch's routes: (prefix, [(next hop, interface), ...])."""

    def uplink(self, host: str) -> Port:
        """The host's NIC."""
        return next(p for p in self.ports if p.node == host)

    def vm_of(self, tenant: str, host: str) -> VmEnd | None:
        return next((v for v in self.vms if v.tenant == tenant and v.host == host), None)


def plan_fabric(links: pd.DataFrame, vms: pd.DataFrame, switches: set[str]) -> Fabric:
    """The fabric of a run's ``links`` and ``vms`` tables (:class:`tenantnet.Results`),
    `switches` naming the switches."""
    nodes = list(dict.fromkeys(str(n) for n in links["node"]))
    hosts = [n for n in nodes if n not in switches]
    sw = [n for n in nodes if n in switches]
    if len(hosts) > MAX_HOSTS or len(sw) > MAX_SWITCHES:
        raise ScenarioError(f"{len(hosts)} hosts and {len(sw)} switches: an emulation "
                            f"takes at most {MAX_HOSTS} hosts and {MAX_SWITCHES} switches")
    ports = [Port(str(n), int(p), str(q), round(float(g) * 1e9)) for n, p, q, g in
             zip(links["node"], links["port"], links["peer"], links["rate_gbps"],
                 strict=True)]
    for h in hosts:
        mine = [p for p in ports if p.node == h]
        if len(mine) != 1 or mine[0].peer not in switches:
            raise ScenarioError(f"host {h} has {len(mine)} links: an emulation takes hosts "
                                "with one link, to a switch")
    addr: dict[str, str] = {}
    prefix: dict[str, str] = {}
    for k, h in enumerate(hosts):
        net = f"10.{1 + k // 250}.{k % 250}"
        addr[h], prefix[h] = f"{net}.1", f"{net}.0/24"
    for j, s in enumerate(sw):
        addr[s] = f"10.254.{j}.1"
    ends: list[VmEnd] = []
    for h in hosts:
        mine = vms[vms["host"].astype(str) == h]
        for i, (vm, t, g) in enumerate(zip(mine["vm"], mine["tenant"], mine["guarantee_gbps"],
                                           strict=True)):
            ends.append(VmEnd(str(vm), str(t), h, addr[h][:-1] + str(10 + i), f"vm{i}",
                              round(float(g) * 1e9)))
    f = Fabric(hosts, sw, ports, ends, addr, prefix)
    f.routes = {s: _routes(f, s) for s in sw}
    return f


def _routes(f: Fabric, switch: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The switch's route to every host: the neighbours on its shortest paths."""
    nbr: dict[str, list[Port]] = {}
    for p in f.ports:
        nbr.setdefault(p.node, []).append(p)
    switches = set(f.switches)
    out = []
    for h in f.hosts:
        dist = {h: 0}
        todo = deque([h])
        while todo:  # hop counts to h through switches only
            n = todo.popleft()
            for p in nbr.get(n, []):
                if p.peer not in dist and p.peer in switches:
                    dist[p.peer] = dist[n] + 1
                    todo.append(p.peer)
        if switch not in dist:
            continue
        hops = [(f.addr[p.peer], p.ifname) for p in nbr[switch]
                if dist.get(p.peer, -1) == dist[switch] - 1]
        out.append((f.prefix[h], hops))
    return out


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise ScenarioError(f"{' '.join(cmd)}: {r.stderr.strip() or 'failed'}")


GSO_SEGMENTS = 8
"""The most MSS-sized segments a VM's or host's TCP puts in one packet (``gso_max_segs``
of every interface): a veth otherwise carries 64 KB packets, which a 10 Mb/s HTB class
sends as one 52 ms burst, so that what a class sent in a 100 ms interval would read
up to half off its rate."""


def _segments(ns: str, ifname: str, segs: int) -> None:
    _run(["ip", "-n", ns, "link", "set", ifname, "gso_max_segs", str(segs)])


NO_TSO = """import sys
from pyroute2.ethtool import Ethtool
e = Ethtool()
for name in sys.argv[1:]:
    f = e.get_features(name)
    f.features["tx-tcp-segmentation"].enable = False
    e.set_features(name, f)
"""
"""Turns TCP segmentation offload off on the interfaces named (run in their
namespace): the kernel then cuts TCP's packets into segments when the interface
sends them, after its queue, and the next hop receives single segments."""


def _no_tso(ns: str, ifnames: list[str]) -> None:
    _run(["ip", "netns", "exec", ns, sys.executable, "-c", NO_TSO, *ifnames])


def build(f: Fabric, lab: Lab, plans: dict[tuple[str, str], Plan], rto_min_ms: float,
          vm_stack: str = "host", segs: int = GSO_SEGMENTS, tso: bool = True
          ) -> dict[str, str]:
    """Creates the fabric in `lab`: `plans` gives each port's traffic control (by node
    and interface), `vm_stack` where VMs' sockets live (module doc), `tso` whether the
    hosts' uplinks pass TCP's offload packets on whole (else they cut them into
    segments, :data:`NO_TSO`). Returns each node's and VM's namespace."""
    if vm_stack not in VM_STACKS:
        raise ScenarioError(f"vm_stack {vm_stack!r}: expected one of {', '.join(VM_STACKS)}")
    ns = {n: lab.ns(n.replace("/", "-")) for n in [*f.switches, *f.hosts]}
    for n in [*f.switches, *f.hosts]:
        _run(["ip", "netns", "exec", ns[n], "sysctl", "-qw", "net.ipv4.ip_forward=1",
              "net.ipv4.fib_multipath_hash_policy=1"])
    done: set[tuple[str, str]] = set()
    by_end = {(p.node, p.peer): p for p in f.ports}
    for p in f.ports:
        if (p.peer, p.node) in done:
            continue
        q = by_end[(p.peer, p.node)]
        lab.link(ns[p.node], p.ifname, ns[q.node], q.ifname)
        _segments(ns[p.node], p.ifname, segs)
        _segments(ns[q.node], q.ifname, segs)
        done.add((p.node, p.peer))
    for p in f.ports:
        _run(["ip", "-n", ns[p.node], "addr", "add", f"{f.addr[p.node]}/32", "peer",
              f.addr[p.peer], "dev", p.ifname])
    rto = ["rto_min", f"{rto_min_ms:g}ms"] if rto_min_ms > 0 else []
    for h in f.hosts:
        up = f.uplink(h)
        _run(["ip", "-n", ns[h], "route", "add", "default", "via", f.addr[up.peer], "dev",
              up.ifname, *rto])
    for v in f.vms:
        if vm_stack == "host":
            _run(["ip", "-n", ns[v.host], "addr", "add", f"{v.addr}/32", "dev", "lo"])
            ns[v.vm] = ns[v.host]
            continue
        ns[v.vm] = lab.ns("vm-" + v.vm.replace("/", "-"))
        lab.link(ns[v.host], v.ifname, ns[v.vm], "eth0")
        _segments(ns[v.vm], "eth0", segs)
        _run(["ip", "-n", ns[v.host], "addr", "add", f"{f.addr[v.host]}/32", "peer", v.addr,
              "dev", v.ifname])
        _run(["ip", "-n", ns[v.vm], "addr", "add", f"{v.addr}/32", "peer", f.addr[v.host],
              "dev", "eth0"])
        _run(["ip", "-n", ns[v.vm], "route", "add", "default", "via", f.addr[v.host], "dev",
              "eth0", *rto])
    for s, routes in f.routes.items():
        for pre, hops in routes:
            if len(hops) == 1:
                _run(["ip", "-n", ns[s], "route", "add", pre, "via", hops[0][0], "dev",
                      hops[0][1]])
            else:
                nh = [w for via, dev in hops for w in ("nexthop", "via", via, "dev", dev)]
                _run(["ip", "-n", ns[s], "route", "add", pre, *nh])
    if not tso:
        for h in f.hosts:
            _no_tso(ns[h], [p.ifname for p in f.ports if p.node == h])
    for p in f.ports:
        plans[(p.node, p.ifname)].apply(ns[p.node])
    return ns
