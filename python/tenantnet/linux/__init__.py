"""The schemes on this machine's Linux: traffic control (``tc``) and eBPF for
``deploy linux``, network namespaces and switch queues for ``emulate``, and the
emulation itself."""
