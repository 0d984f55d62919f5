"""A host scheme as Linux traffic control on a hypervisor's uplink (``tenantnet deploy
linux``): the same plan printed as ``tc`` commands (``--dry-run``) or applied over
netlink with pyroute2 (``--apply``, the ``tenantnet[linux]`` extra).

* ``none``: the NIC's queue as the scenario has it, a bfifo of the host buffer
  (``network.host_buffer``, else ``network.buffer``) in bytes.
* ``mbfq``: the same classes as static, each at the NIC's rate until MBFQ's agent
  (:mod:`tenantnet.linux.emulation.agent`) sets it to the VM's allocated rate every
  macro-interval; ``--apply`` runs the agent in the foreground.
* Where the scenario's switches classify (several queues per port), each VM of a
  tenant whose workloads all carry one DSCP (other than 0) is tagged with it on the
  uplink's egress, by source address (an eBPF program, :mod:`tenantnet.linux.bpf`,
  loaded by ``--apply``; ``--dry-run`` says so in a comment).
* ``static``: static reservation (each VM capped at its guarantee, as the simulator's
  ``static`` policy): an HTB root at the NIC's rate (handle ``1:``, class ``1:1``), a
  class per VM of the host at its guarantee with the same ceiling, each over a bfifo
  of the host buffer, and a u32 filter sending the VM's source address to its class.
  Traffic from any other address goes to the default class ``1:9999`` at the NIC's
  rate less the guarantees (at least 1 Mb/s), borrowing up to the NIC's rate.

Queues are limited in bytes, not packets: with segmentation offload (TSO/GSO) a queued
packet can be up to 64 KB, so a packet count would hold many times the scenario's
buffer. Every HTB class gets a burst and cburst of one millisecond at its rate (at least
one full packet; an emulation may ask for less, :attr:`Plan.burst_s`), written out so
that the ``tc`` commands and the netlink calls set the same values. Minor handles are
hexadecimal, as ``tc`` reads them.
"""

from __future__ import annotations

import ipaddress
import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError
from ..sim import schemes
from ..sim.layout import size_bytes, switch_layout
from ..sim.scenario import Scenario
from .bpf import attach

ROOT, TOP, DEFAULT, FIRST_VM, QUEUE = 0x1, 0x1, 0x9999, 0x10, 0x100
"""The HTB root qdisc's major (1:), its top class (1:1), the default class (1:9999),
the first VM class (1:10) and a switch port's queue 0 (1:100)."""
SCHEMES = ("none", "static", "mbfq")
"""The host schemes ``deploy linux`` writes."""
MIN_DEFAULT_BPS = 1_000_000


@dataclass(frozen=True)
class VmClass:
    """A VM's HTB class: its name, source address, minor handle, rate (bit/s) and
    tenant and guarantee (bit/s, what MBFQ's agent is given)."""

    vm: str
    addr: str
    minor: int
    rate_bps: int
    tenant: str = ""
    guarantee_bps: int = 0


@dataclass(frozen=True)
class QueueClass:
    """A switch queue's HTB class: its queue number, guaranteed rate (bit/s), priority
    (0 served first), quantum (bytes: spare capacity is shared in proportion), the
    DSCPs classified into it and its buffer."""

    queue: int
    rate_bps: int
    prio: int
    quantum: int
    dscps: tuple[int, ...] = ()
    limit_bytes: int | None = None
    """Its buffer (default: the port's)."""


@dataclass(frozen=True)
class HtbClass:
    """One HTB class of a plan: parent and own minor handle, rate and ceiling (bit/s),
    and for a switch queue its priority and quantum."""

    parent: int
    minor: int
    rate: int
    ceil: int
    prio: int | None = None
    quantum: int | None = None


@dataclass
class Plan:
    """The tc configuration of one port `dev`: a host's uplink (VM classes) or a switch
    port (queue classes, :func:`tenantnet.linux.queues.switch_queues`)."""

    scheme: str
    dev: str
    nic_bps: int
    limit_bytes: int
    packet_bytes: int
    vms: list[VmClass] = field(default_factory=list)
    mbfq: str = "{}"
    """With ``mbfq``: the scenario's ``[vswitch.mbfq]`` as JSON, for the agent."""
    queues: list[QueueClass] = field(default_factory=list)
    """A switch port's queues (none on a host's uplink)."""
    tags: list[tuple[str, int]] = field(default_factory=list)
    """(source address, DSCP): packets the port's egress tags (an eBPF program,
    :mod:`tenantnet.linux.bpf`; set by :meth:`apply` only)."""

    burst_s: float = 1e-3
    """How long a class may send at link speed after idling (its burst and cburst, as
    time at its rate; whole microseconds)."""

    def vm_rates(self, rate_bps: int) -> tuple[int, int]:
        """A VM class's HTB rate and ceiling for a limit of `rate_bps`. At the NIC's rate
        (no limit: MBFQ's microschedulers off) the VM classes share the NIC equally and
        each may borrow all of it: HTB lets a class send at its own rate whatever its
        parent's, so VM classes each at the NIC's rate would together send past the
        NIC (an emulated NIC of 1 Gb/s sent 1.157 Gb/s over 100 ms with three such
        classes)."""
        if rate_bps >= self.nic_bps and self.vms:
            return max(1, self.nic_bps // len(self.vms)), self.nic_bps
        return rate_bps, rate_bps

    def burst(self, rate_bps: int) -> int:
        """:attr:`burst_s` at `rate_bps`, at least a full packet, in bytes."""
        us = round(self.burst_s * 1e6)  # whole microseconds: integer arithmetic
        return max(self.packet_bytes, rate_bps * us // 8_000_000)

    @property
    def default(self) -> int:
        """The class of traffic no filter classifies: queue 0's on a switch port."""
        return QUEUE + self.queues[0].queue if self.queues else DEFAULT

    def limit(self, minor: int) -> int:
        """The buffer (bytes) of class `minor`'s queue."""
        q = next((q for q in self.queues if QUEUE + q.queue == minor), None)
        return q.limit_bytes if q is not None and q.limit_bytes else self.limit_bytes

    def classes(self) -> list[HtbClass]:
        """Every HTB class, top class first."""
        out = [HtbClass(0, TOP, self.nic_bps, self.nic_bps)]
        if self.queues:
            return out + [HtbClass(TOP, QUEUE + q.queue, q.rate_bps, self.nic_bps, q.prio,
                                   q.quantum) for q in self.queues]
        rates = [self.vm_rates(v.rate_bps) for v in self.vms]
        rest = max(self.nic_bps - sum(r for r, _ in rates), MIN_DEFAULT_BPS)
        out += [HtbClass(TOP, v.minor, r, c) for v, (r, c) in zip(self.vms, rates, strict=True)]
        out.append(HtbClass(TOP, DEFAULT, rest, self.nic_bps))
        return out

    def matches(self) -> list[tuple[str, str, int]]:
        """Each u32 filter: (tc's match, pyroute2's key, the class's minor)."""
        out = [(f"ip src {v.addr}/32",
                f"0x{int(ipaddress.IPv4Address(v.addr)):08x}/0xffffffff+12", v.minor)
               for v in self.vms]
        out += [(f"ip tos 0x{d << 2:02x} 0xfc", f"0x{d << 18:08x}/0x00fc0000+0",
                 QUEUE + q.queue) for q in self.queues[1:] for d in q.dscps]
        return out

    def commands(self) -> list[str]:
        """The plan as ``tc`` commands (the tagging program, which tc loads only from a
        compiled object, as a comment)."""
        dev = shlex.quote(self.dev)
        if self.scheme == "none":
            return [f"tc qdisc replace dev {dev} root handle {ROOT:x}: bfifo limit "
                    f"{self.limit_bytes}b", *self._tag_note()]
        out = [f"tc qdisc replace dev {dev} root handle {ROOT:x}: htb default "
               f"{self.default:x}"]
        for c in self.classes():
            up = f"{ROOT:x}:{c.parent:x}" if c.parent else f"{ROOT:x}:"
            extra = "" if c.prio is None else f" prio {c.prio} quantum {c.quantum}"
            out.append(f"tc class add dev {dev} parent {up} classid "
                       f"{ROOT:x}:{c.minor:x} htb rate {c.rate}bit ceil {c.ceil}bit burst "
                       f"{self.burst(c.rate)}b cburst {self.burst(c.ceil)}b{extra}")
        for c in self.classes()[1:]:
            out.append(f"tc qdisc add dev {dev} parent {ROOT:x}:{c.minor:x} handle "
                       f"{c.minor:x}: bfifo limit {self.limit(c.minor)}b")
        for match, _, minor in self.matches():
            out.append(f"tc filter add dev {dev} parent {ROOT:x}: protocol ip prio 1 u32 "
                       f"match {match} flowid {ROOT:x}:{minor:x}")
        return out + self._tag_note()

    def _tag_note(self) -> list[str]:
        if not self.tags:
            return []
        return [f"# and DSCP tagging on {self.dev}'s egress, an eBPF program on clsact that "
                "--apply loads: " + ", ".join(f"{a} -> {d}" for a, d in self.tags)]

    def apply(self, netns: str | None = None) -> None:
        """Sets the plan on `dev` over netlink (in network namespace `netns`, if given),
        replacing the device's root qdisc."""
        ipr = _netlink(netns)
        # deferred: pyroute2 is the optional ``linux`` extra
        from pyroute2.netlink.exceptions import NetlinkError
        try:
            self._set(ipr, netns)
        except NetlinkError as e:
            raise ScenarioError(f"tc on {self.dev}{f' in {netns}' if netns else ''}: "
                                f"{e.args[-1] if e.args else e}") from None
        finally:
            ipr.close()

    def _set(self, ipr: Any, netns: str | None) -> None:
        found = ipr.link_lookup(ifname=self.dev)
        if not found:
            raise ScenarioError(f"--dev {self.dev}: no such network device"
                                f"{f' in namespace {netns}' if netns else ''}")
        idx = found[0]
        if self.tags:
            attach(ipr, idx, self.tags)
        if self.scheme == "none":
            ipr.tc("replace", "bfifo", idx, ROOT << 16, limit=self.limit_bytes)
            return
        ipr.tc("replace", "htb", idx, ROOT << 16, default=self.default)
        for c in self.classes():
            extra = {} if c.prio is None else {"prio": c.prio, "quantum": c.quantum}
            ipr.tc("add-class", "htb", idx, (ROOT << 16) | c.minor,
                   parent=(ROOT << 16) | c.parent, rate=f"{c.rate}bit", ceil=f"{c.ceil}bit",
                   burst=self.burst(c.rate), cburst=self.burst(c.ceil), **extra)
        for c in self.classes()[1:]:
            ipr.tc("add", "bfifo", idx, c.minor << 16, parent=(ROOT << 16) | c.minor,
                   limit=self.limit(c.minor))
        for _, key, minor in self.matches():
            ipr.tc("add-filter", "u32", idx, parent=ROOT << 16, prio=1, protocol=0x0800,
                   target=(ROOT << 16) | minor, keys=[key])


def _netlink(netns: str | None) -> Any:
    try:
        # deferred: pyroute2 is the optional ``linux`` extra
        from pyroute2 import IPRoute, NetNS
        from pyroute2.netlink.rtnl.tcmsg import plugins
    except ImportError:
        raise ScenarioError("--apply needs pyroute2: pip install 'tenantnet[linux]'") from None
    # pyroute2 knows pfifo's options (a 32-bit limit) but not bfifo's, which are the same
    plugins.setdefault("bfifo", plugins["pfifo"])
    return NetNS(netns) if netns else IPRoute()


def tenant_dscps(data: dict[str, Any]) -> dict[str, int]:
    """The tenants whose workloads all carry one DSCP other than 0: a hypervisor tags
    their VMs' packets (QShare's model of a tenant's traffic class)."""
    seen: dict[str, set[int]] = {}
    for w in data.get("workloads", []):
        d = w.get("dscp", 0)
        seen.setdefault(str(w.get("tenant", "default")), set()).update(
            d if isinstance(d, list) else [d])
    return {t: next(iter(ds)) for t, ds in seen.items() if len(ds) == 1 and 0 not in ds}


def host_scheme(data: dict[str, Any]) -> str:
    """The host scheme a scenario runs as it is: its ``vswitch.policy`` (none where
    it sets none)."""
    return str((data.get("vswitch") or {}).get("policy") or "none")


def plan(scenario: Scenario, scheme: str | None, host: str, dev: str,
         addrs: dict[str, str]) -> Plan:
    """Host `host`'s uplink `dev` under `scheme` for `scenario` (None: the scenario's
    own host policy, its settings as they are, as ``tenantnet advise`` writes a tuned
    scenario), the VMs' source addresses from `addrs` (VM name to IPv4). An error names
    what is wrong."""
    data = scenario.data()
    own = scheme is None
    scheme = host_scheme(data) if scheme is None else scheme
    if scheme not in SCHEMES:
        raise ScenarioError(f"{f'{scenario.source}: runs ' if own else ''}scheme {scheme!r}: "
                            f"deploy linux writes {', '.join(SCHEMES)} (the channel "
                            "schemes, Trinity and ElasticSwitch, are not deployable yet)")
    if not own:
        data = schemes.apply(data, scheme, str(scenario.base_dir))
    layout = switch_layout(data, scenario)
    r = Scenario.from_dict(data, scenario.source, scenario.base_dir).simulation().results()
    switches = {s["name"] for s in layout["switches"]}
    hosts = sorted({str(n) for n in r.links["node"]} - switches)
    if host not in hosts:
        raise ScenarioError(f"--host {host}: not a host of the scenario (hosts: "
                            f"{', '.join(hosts[:8])}{', ...' if len(hosts) > 8 else ''})")
    nics = r.links[r.links["node"] == host]
    net, packet = layout["network"], int(layout["packet_bytes"])
    buffer = net.get("host_buffer") or net["buffer"]
    limit = max(packet, size_bytes(buffer, packet, "network.host_buffer"))
    out = Plan(scheme, dev, round(float(nics["rate_gbps"].iloc[0]) * 1e9), limit, packet,
               mbfq=json.dumps(data.get("vswitch", {}).get("mbfq", {})))
    mine = r.vms[r.vms["host"] == host]
    dscp = tenant_dscps(data) if int(net["queues"]) > 1 else {}
    for i, (vm, tenant, g) in enumerate(zip(mine["vm"], mine["tenant"], mine["guarantee_gbps"],
                                            strict=True)):
        if scheme == "none" and str(tenant) not in dscp:
            continue
        if vm not in addrs:
            raise ScenarioError(f"VM {vm} on {host} has no address: give --addr {vm}=IPV4")
        try:
            ip = str(ipaddress.IPv4Address(addrs[vm]))
        except ValueError:
            raise ScenarioError(f"--addr {vm}={addrs[vm]}: expected an IPv4 address") from None
        if str(tenant) in dscp:
            out.tags.append((ip, dscp[str(tenant)]))
        if scheme == "none":
            continue
        bps = round(float(g) * 1e9)
        out.vms.append(VmClass(str(vm), ip, FIRST_VM + i, bps if scheme == "static" else
                               out.nic_bps, str(tenant), bps))
    unknown = sorted(set(addrs) - set(mine["vm"]))
    if unknown:
        raise ScenarioError(f"--addr {unknown[0]}: no such VM on {host} (its VMs: "
                            f"{', '.join(map(str, mine['vm']))})")
    return out
