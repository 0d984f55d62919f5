"""What an emulation offers, as names (light: the command line's parser reads them)."""

POLICIES = ("none", "static", "mbfq")
"""The host schemes an emulation enforces with Linux's traffic control."""
VM_STACKS = ("host", "namespace")
"""Where a VM's sockets live (:mod:`tenantnet.linux.emulation.fabric`)."""
