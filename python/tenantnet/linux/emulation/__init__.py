"""``tenantnet emulate``: a scenario on this machine's Linux networking, in network
namespaces, beside the simulator's run of the same scaled scenario (:mod:`.run`).

``emulate``, ``twin`` and ``Emulation`` are loaded when first used, so that importing a
light submodule (:mod:`.kinds`) does not load pandas."""

from __future__ import annotations

from typing import Any

__all__ = ["Emulation", "emulate", "twin"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        # deferred for start-up: loads matplotlib, numpy, pandas, pyarrow
        from . import run
        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
