"""A scheme's tunable parameters (:class:`Param`): the scenario key a search may
set, its range and scale, the value the scheme runs with when nobody sets it, and
where the paper gives it. Each scheme declares its own where it is registered
(:data:`tenantnet.sim.schemes.SCHEMES`); ``tenantnet schemes`` lists them and
``tenantnet advise`` searches them.

A parameter's numbers are in its unit: seconds for a duration, bytes for a size,
bits per second for a rate, none for a plain number. :meth:`Param.value` writes a
number as the scenario takes it (``"5ms"``, ``"30000B"``, ``"2.5Gbps"``); a whole
parameter (a count of queues) is rounded."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from .. import _core

UNITS = ("", "s", "B", "pkt", "bps")
"""A plain number, a duration, a size in bytes or in packets, a rate."""

PACKET = 1500
"""Bytes of a packet, to give a size in bytes the range of one in packets."""

SCALES = ("linear", "log")


@dataclass(frozen=True)
class Param:
    """One tunable parameter of a scheme."""
    key: str
    """The scenario key it sets, dotted (``vswitch.mbfq.interval``)."""
    low: float
    high: float
    """Its range, in its unit, both ends included."""
    default: float
    """The value the scheme runs with when the scenario does not set it."""
    source: str
    """Where the paper gives it (or why it is ours)."""
    what: str
    """What it does, in a few words."""
    scale: str = "linear"
    """``linear`` or ``log``: how a search spreads its tries over the range."""
    unit: str = ""
    """``""`` (a number), ``"s"``, ``"B"`` or ``"bps"``."""
    whole: bool = False
    """Takes whole numbers only."""
    step: float = 0.0
    """Its values are whole multiples of this (0: any value)."""
    powers_of_two: bool = False
    """Takes powers of two only (a gain a kernel keeps as a shift)."""
    on_tick: bool = False
    """A period of the hosts' policy: a whole multiple of the hosts' tick
    (``vswitch.interval``) where the scenario sets one (:func:`read` makes it the
    step)."""

    def __post_init__(self) -> None:
        if self.unit not in UNITS or self.scale not in SCALES:
            raise ValueError(f"{self.key}: unit {self.unit!r} or scale {self.scale!r}")
        if not self.low <= self.default <= self.high:
            raise ValueError(f"{self.key}: default {self.default} outside "
                             f"[{self.low}, {self.high}]")
        if (self.scale == "log" or self.powers_of_two) and self.low <= 0:
            raise ValueError(f"{self.key}: a log scale needs a range above 0")

    def value(self, x: float) -> Any:
        """`x` (in the parameter's unit) as the scenario takes it."""
        if self.powers_of_two:
            x = 2.0 ** round(math.log2(x))
        elif self.step:
            x = max(1, round(x / self.step)) * self.step
        elif not self.whole:
            x = float(f"{x:.3g}")  # three figures: a setting people can read and type
        if self.whole:
            return round(x)
        if self.unit == "s":
            return _core.format_duration(x) if x > 0 else "0s"
        if self.unit in ("B", "pkt"):
            return f"{round(x)}{self.unit}"
        if self.unit == "bps":
            return f"{x / 1e6:.6g}Mbps"
        return x

    def show(self, x: float) -> str:
        """`x` for people: ``5ms``, ``30000B``, ``0.25``."""
        v = self.value(x)
        return str(v) if not isinstance(v, float) else f"{v:g}"

    def range_text(self) -> str:
        """``[1ms, 50ms] log``."""
        return f"[{self.show(self.low)}, {self.show(self.high)}]" + (
            " log" if self.scale == "log" else "")

    def fraction(self, x: float) -> float:
        """Where `x` lies in the range, 0 to 1, on the parameter's scale."""
        if self.scale == "log":
            return (math.log(x) - math.log(self.low)) / (math.log(self.high) -
                                                         math.log(self.low))
        return (x - self.low) / (self.high - self.low)


def set_key(d: dict[str, Any], dotted: str, value: Any) -> None:
    """Sets `dotted` in the nested scenario `d`, making the tables on its way."""
    *path, last = dotted.split(".")
    for k in path:
        nxt = d.get(k)
        if not isinstance(nxt, dict):
            nxt = d[k] = {}
        d = nxt
    d[last] = value


def get_key(d: Any, dotted: str) -> Any:
    """The value at `dotted` in the nested scenario `d`, or None."""
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def applied(data: dict[str, Any], params: tuple[Param, ...],
            values: dict[str, float]) -> dict[str, Any]:
    """`data` (a scenario under a scheme, which it changes) with each of `values`
    (by key, in the parameter's unit) set; an error names a key that is not one of
    `params` or a value outside its range."""
    by_key = {p.key: p for p in params}
    for key, x in values.items():
        p = by_key.get(key)
        if p is None:
            raise ValueError(f"{key!r} is no tunable parameter here; expected one of "
                             f"{', '.join(by_key) or 'none'}")
        if not (p.low <= x <= p.high):
            raise ValueError(f"{key} = {p.show(x)}: expected a value in {p.range_text()}")
        set_key(data, key, p.value(x))
    return data


def on_tick(p: Param, tick: Any) -> Param:
    """`p`, a period of the hosts' policy, stepped by the hosts' tick `tick` (the
    scenario's ``vswitch.interval``, None where it sets none) and starting at it."""
    if not p.on_tick or tick is None:
        return p
    t = _core.parse_duration(str(tick))
    return replace(p, step=t, low=max(p.low, t), high=max(p.high, t),
                   default=max(p.default, t))


def read(p: Param, v: Any) -> Param | None:
    """`p` with the scenario's own value `v` of its key as its default (its range
    widened to hold it; a size the scenario gives in packets makes it a parameter in
    packets); None if `v` cannot be read as the parameter's unit."""
    try:
        if p.unit == "s":
            x = _core.parse_duration(str(v))
        elif p.unit == "B" and str(v).strip().endswith("pkt"):
            x = float(str(v).strip()[:-3])
            p = replace(p, unit="pkt", low=max(1.0, p.low / PACKET),
                        high=max(2.0, p.high / PACKET), default=1.0)
        elif p.unit == "B":
            x = float(_core.parse_size(str(v)))
        elif p.unit == "":
            x = float(v)
        else:
            return None
    except (TypeError, ValueError):
        return None
    return replace(p, default=x, low=min(p.low, x), high=max(p.high, x))
