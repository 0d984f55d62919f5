"""``tenantnet emulate``: a scenario on this machine's Linux networking, in network
namespaces, beside the simulator's run of the same scaled scenario (:mod:`.run`)."""

from .run import Emulation, emulate, twin

__all__ = ["Emulation", "emulate", "twin"]
