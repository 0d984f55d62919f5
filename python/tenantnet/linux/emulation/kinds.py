"""What an emulation offers, as names (light: the command line's parser reads them)."""

from dataclasses import dataclass

POLICIES = ("none", "static", "mbfq")
"""The host schemes an emulation enforces with Linux's traffic control."""
VM_STACKS = ("host", "namespace")
"""Where a VM's sockets live (:mod:`tenantnet.linux.emulation.fabric`)."""


@dataclass(frozen=True)
class Wire:
    """How the hosts put packets on the emulated wire.

    * ``burst_s``: every HTB class's burst (the time at its rate it may send at once
      after idling). Linux's HTB needs one of a timer tick or so to hold its rate on a
      busy machine; a millisecond (the default, as ``deploy linux`` writes) lets a
      flow that starts on an idle link send that long's worth at the veth's speed.
    * ``tso``: whether the hosts' NICs pass TCP's segmentation-offload packets (up to
      ``GSO_SEGMENTS`` segments) on to the switches whole, as a veth does (the
      default), or cut them into wire-sized packets first, as a real NIC's TSO does;
      a switch's queue then holds and drops single segments, at eight times the
      packets for the CPUs to forward.
    """

    burst_s: float = 1e-3
    tso: bool = True

    def words(self) -> str:
        """The settings in words, where they are not the defaults."""
        out = []
        if self.burst_s != Wire.burst_s:
            out.append(f"HTB bursts of {self.burst_s * 1e6:g} us")
        if not self.tso:
            out.append("segments cut at the hosts' NICs")
        return ", ".join(out)


DEFAULT_WIRE = Wire()
"""The wire an emulation has unless asked otherwise."""


CROSSCHECK_WIRE = Wire(burst_s=100e-6)
"""``crosscheck linux``'s wire: HTB bursts of 100 µs (12.5 KB at 1 Gb/s, about one
offload packet of 8 segments) rather than the millisecond ``emulate`` and ``deploy
linux`` use. With a millisecond, a flow that starts on an idle port passes 125 KB at
the veth's speed, faster than the link: the Hadoop leaf-spine's FCT median read
0.34 ms on the kernel against the simulator's 0.65 (+94 %), and with 100 µs 0.68-0.72
(-4 to -10 %) in four sittings of five repeats."""
