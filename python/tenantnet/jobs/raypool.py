"""Runs on a Ray cluster (``sweep --backend ray``, ``advise --ray``): a session on
the cluster at an address (None: a local one of `n` CPUs, started and stopped here)
and a map of a function over tasks that hands each result back as it comes. A task
has one CPU: one thread per simulation, unless ``TENANTNET_THREADS`` says more."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import ScenarioError
from . import progress


@contextmanager
def session(address: str | None, n: int, option: str) -> Iterator[None]:
    """Ray connected to `address` for the duration (None or ``"local"``: a cluster of
    `n` CPUs started here; ``"auto"``: the one this machine belongs to; else a head
    node's ``HOST:PORT`` or ``ray://HOST:PORT``); `option` names what asked for Ray,
    for the errors."""
    try:
        # deferred: Ray is optional (the ``ray`` extra)
        import ray
    except ImportError:
        raise ScenarioError(f"{option} needs Ray: pip install 'tenantnet[ray]'") from None
    started = not ray.is_initialized()
    local = address in (None, "local")
    if started:
        try:
            ray.init(address=address, num_cpus=n if local else None,
                     include_dashboard=False, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ScenarioError(f"{option} {address}: no Ray cluster answers there "
                                f"({str(e).splitlines()[0] if str(e) else type(e).__name__})"
                                ) from None
    try:
        yield
    finally:
        if started:
            ray.shutdown()


def ray_map(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]],
            on_done: Callable[[int, Any], None], label: Callable[[int, int], str]) -> None:
    """Runs `fn(*task)` for every task on the session's cluster, calling
    `on_done(index, result)` as each finishes; `label(done, total)` is the progress
    line."""
    import ray  # deferred: Ray is optional; session() said so where it is missing

    threads = {"TENANTNET_THREADS": os.environ.get("TENANTNET_THREADS", "1")}
    remote = ray.remote(num_cpus=1, runtime_env={"env_vars": threads})(fn)
    refs = {remote.remote(*t): i for i, t in enumerate(tasks)}
    while refs:
        progress.step(label(len(tasks) - len(refs), len(tasks)))
        ready, _ = ray.wait(list(refs), num_returns=1)
        for ref in ready:
            on_done(refs.pop(ref), ray.get(ref))
