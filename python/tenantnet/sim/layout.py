"""A scenario's switches as a deployment sees them (``_core.switch_layout``): the
network keys after the host policies' presets, the packet size, the resolved DSCP map
and each switch's ports; shared by ``deploy sonic`` and ``deploy linux``."""

from __future__ import annotations

import json
from typing import Any

from .. import _core
from ..errors import ScenarioError
from .scenario import Scenario
from .tables import scenario_tables


def switch_layout(data: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The layout of the scenario `data` (read as `scenario`'s source, its files relative
    to `scenario`'s folder); an error names the key."""
    try:
        text = _core.switch_layout(json.dumps(data), scenario.source, str(scenario.base_dir),
                                   "json", scenario_tables(data, scenario.base_dir,
                                                           scenario.source) or None)
    except _core.ScenarioError as e:
        raise ScenarioError(*e.args) from None
    out: dict[str, Any] = json.loads(text)
    return out


def size_bytes(value: Any, packet: int, key: str) -> int:
    """A size as the core writes it (``"500000B"`` or ``"65pkt"``) in bytes, a packet
    being `packet` bytes on the wire; ValueError names `key`."""
    text = str(value)
    if text.endswith("pkt"):
        return int(text[:-3]) * packet
    try:
        return int(_core.parse_size(text))
    except ValueError as e:
        raise ValueError(f"{key} = {text!r}: {e}") from None
