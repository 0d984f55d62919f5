"""A host scheme as Linux traffic control on a hypervisor's uplink (``tenantnet deploy
linux``): the same plan printed as ``tc`` commands (``--dry-run``) or applied over
netlink with pyroute2 (``--apply``, the ``tenantnet[linux]`` extra).

* ``none``: the NIC's queue as the scenario has it, a bfifo of the host buffer
  (``network.host_buffer``, else ``network.buffer``) in bytes.
* ``static``: static reservation (each VM capped at its guarantee, as the simulator's
  ``static`` policy): an HTB root at the NIC's rate (handle ``1:``, class ``1:1``), a
  class per VM of the host at its guarantee with the same ceiling, each over a bfifo
  of the host buffer, and a u32 filter sending the VM's source address to its class.
  Traffic from any other address goes to the default class ``1:9999`` at the NIC's
  rate less the guarantees (at least 1 Mb/s), borrowing up to the NIC's rate.

Queues are limited in bytes, not packets: with segmentation offload (TSO/GSO) a queued
packet can be up to 64 KB, so a packet count would hold many times the scenario's
buffer. Every HTB class gets a burst and cburst of one millisecond at its rate (at least one
full packet), written out so that the ``tc`` commands and the netlink calls set the
same values. Minor handles are hexadecimal, as ``tc`` reads them.
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass, field
from typing import Any

from . import schemes
from .errors import ScenarioError
from .layout import size_bytes, switch_layout
from .scenario import Scenario

ROOT, TOP, DEFAULT, FIRST_VM = 0x1, 0x1, 0x9999, 0x10
"""The HTB root qdisc's major (1:), its top class (1:1), the default class (1:9999)
and the first VM class (1:10)."""
SCHEMES = ("none", "static")
"""The host schemes ``deploy linux`` writes."""
MIN_DEFAULT_BPS = 1_000_000


@dataclass(frozen=True)
class VmClass:
    """A VM's HTB class: its name, source address, minor handle and rate (bit/s)."""

    vm: str
    addr: str
    minor: int
    rate_bps: int


@dataclass
class Plan:
    """The tc configuration of one host's uplink `dev`."""

    scheme: str
    dev: str
    nic_bps: int
    limit_bytes: int
    packet_bytes: int
    vms: list[VmClass] = field(default_factory=list)

    def burst(self, rate_bps: int) -> int:
        """One millisecond at `rate_bps`, at least a full packet, in bytes."""
        return max(self.packet_bytes, rate_bps // 8000)

    def classes(self) -> list[tuple[int, int, int, int]]:
        """(parent minor, minor, rate, ceil) of every HTB class, top class first."""
        rest = max(self.nic_bps - sum(v.rate_bps for v in self.vms), MIN_DEFAULT_BPS)
        out = [(0, TOP, self.nic_bps, self.nic_bps)]
        out += [(TOP, v.minor, v.rate_bps, v.rate_bps) for v in self.vms]
        out.append((TOP, DEFAULT, rest, self.nic_bps))
        return out

    def commands(self) -> list[str]:
        """The plan as ``tc`` commands."""
        dev = shlex.quote(self.dev)
        if self.scheme == "none":
            return [f"tc qdisc replace dev {dev} root handle {ROOT:x}: bfifo limit "
                    f"{self.limit_bytes}b"]
        out = [f"tc qdisc replace dev {dev} root handle {ROOT:x}: htb default {DEFAULT:x}"]
        for parent, minor, rate, ceil in self.classes():
            up = f"{ROOT:x}:{parent:x}" if parent else f"{ROOT:x}:"
            out.append(f"tc class add dev {dev} parent {up} classid "
                       f"{ROOT:x}:{minor:x} htb rate {rate}bit ceil {ceil}bit burst "
                       f"{self.burst(rate)}b cburst {self.burst(ceil)}b")
        for _, minor, _, _ in self.classes()[1:]:
            out.append(f"tc qdisc add dev {dev} parent {ROOT:x}:{minor:x} handle {minor:x}: "
                       f"bfifo limit {self.limit_bytes}b")
        for v in self.vms:
            out.append(f"tc filter add dev {dev} parent {ROOT:x}: protocol ip prio 1 u32 "
                       f"match ip src {v.addr}/32 flowid {ROOT:x}:{v.minor:x}")
        return out

    def apply(self, netns: str | None = None) -> None:
        """Sets the plan on `dev` over netlink (in network namespace `netns`, if given),
        replacing the device's root qdisc."""
        ipr = _netlink(netns)
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
        if self.scheme == "none":
            ipr.tc("replace", "bfifo", idx, ROOT << 16, limit=self.limit_bytes)
            return
        ipr.tc("replace", "htb", idx, ROOT << 16, default=DEFAULT)
        for parent, minor, rate, ceil in self.classes():
            ipr.tc("add-class", "htb", idx, (ROOT << 16) | minor,
                   parent=(ROOT << 16) | parent, rate=f"{rate}bit", ceil=f"{ceil}bit",
                   burst=self.burst(rate), cburst=self.burst(ceil))
        for _, minor, _, _ in self.classes()[1:]:
            ipr.tc("add", "bfifo", idx, minor << 16, parent=(ROOT << 16) | minor,
                   limit=self.limit_bytes)
        for v in self.vms:
            ip = int(ipaddress.IPv4Address(v.addr))
            ipr.tc("add-filter", "u32", idx, parent=ROOT << 16, prio=1, protocol=0x0800,
                   target=(ROOT << 16) | v.minor, keys=[f"0x{ip:08x}/0xffffffff+12"])


def _netlink(netns: str | None) -> Any:
    try:
        from pyroute2 import IPRoute, NetNS
        from pyroute2.netlink.rtnl.tcmsg import plugins
    except ImportError:
        raise ScenarioError("--apply needs pyroute2: pip install 'tenantnet[linux]'") from None
    # pyroute2 knows pfifo's options (a 32-bit limit) but not bfifo's, which are the same
    plugins.setdefault("bfifo", plugins["pfifo"])
    return NetNS(netns) if netns else IPRoute()


def plan(scenario: Scenario, scheme: str, host: str, dev: str,
         addrs: dict[str, str]) -> Plan:
    """Host `host`'s uplink `dev` under `scheme` for `scenario`, the VMs' source
    addresses from `addrs` (VM name to IPv4). An error names what is wrong."""
    if scheme not in SCHEMES:
        raise ScenarioError(f"scheme {scheme!r}: deploy linux writes {', '.join(SCHEMES)} "
                            "(MBFQ's agent and the channel schemes are not deployable yet)")
    data = schemes.apply(scenario.data(), scheme, str(scenario.base_dir))
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
    out = Plan(scheme, dev, round(float(nics["rate_gbps"].iloc[0]) * 1e9), limit, packet)
    if scheme == "none":
        return out
    mine = r.vms[r.vms["host"] == host]
    for i, (vm, g) in enumerate(zip(mine["vm"], mine["guarantee_gbps"], strict=True)):
        if vm not in addrs:
            raise ScenarioError(f"VM {vm} on {host} has no address: give --addr {vm}=IPV4")
        try:
            ip = str(ipaddress.IPv4Address(addrs[vm]))
        except ValueError:
            raise ScenarioError(f"--addr {vm}={addrs[vm]}: expected an IPv4 address") from None
        out.vms.append(VmClass(str(vm), ip, FIRST_VM + i, round(float(g) * 1e9)))
    unknown = sorted(set(addrs) - set(mine["vm"]))
    if unknown:
        raise ScenarioError(f"--addr {unknown[0]}: no such VM on {host} (its VMs: "
                            f"{', '.join(map(str, mine['vm']))})")
    return out
