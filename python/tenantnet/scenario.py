"""Scenarios: load them from a TOML file, TOML text or a dictionary, and check them.

The Rust core parses and validates; this module only carries the text and where it
came from, so errors name the right file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import tomllib

from . import _core
from .errors import ScenarioError


@dataclass(frozen=True)
class Scenario:
    """Scenario text plus where it came from."""

    text: str
    source: str = "<scenario>"
    base_dir: Path = field(default_factory=lambda: Path("."))
    fmt: str = "toml"

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Reads a scenario file (``.toml``, or ``.json``)."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise ScenarioError(f"{p}: cannot read the scenario: {e.strerror}", str(p)) from None
        fmt = "json" if p.suffix == ".json" else "toml"
        return cls(text, str(p), p.parent, fmt)

    @classmethod
    def from_toml(cls, text: str, source: str = "<toml>", base_dir: str | Path = ".") -> Scenario:
        """A scenario from TOML text."""
        return cls(text, source, Path(base_dir), "toml")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>",
                  base_dir: str | Path = ".") -> Scenario:
        """A scenario from a dictionary shaped like the TOML file."""
        return cls(json.dumps(data), source, Path(base_dir), "json")

    @classmethod
    def builtin(cls, name: str) -> Scenario:
        """One of the scenarios shipped in ``tenantnet/scenarios`` (``demo``, ``permutation``)."""
        ref = resources.files("tenantnet") / "scenarios" / f"{name}.toml"
        if not ref.is_file():
            raise ScenarioError(f"no built-in scenario named {name!r}")
        return cls(ref.read_text(encoding="utf-8"), f"<builtin:{name}>", Path("."), "toml")

    def data(self) -> dict[str, Any]:
        """The scenario as a dictionary."""
        if self.fmt == "json":
            return dict(json.loads(self.text))
        return tomllib.loads(self.text)

    def with_overrides(self, **sections: dict[str, Any]) -> Scenario:
        """A copy with keys replaced, e.g. ``with_overrides(simulation={"seed": 2})``."""
        d = self.data()
        for sec, kv in sections.items():
            d.setdefault(sec, {}).update(kv)
        return Scenario(json.dumps(d), self.source, self.base_dir, "json")

    def validate(self) -> None:
        """Raises :class:`ScenarioError` if the scenario cannot run."""
        try:
            _core.validate(self.text, self.source, str(self.base_dir), self.fmt)
        except _core.ScenarioError as e:
            raise ScenarioError(*e.args) from None

    def flows(self) -> Any:
        """The flows the scenario generates (a DataFrame like ``flows.parquet``), without
        running it."""
        from .results import Results

        return Results.from_core(*self.simulation().results()).flows

    def simulation(self) -> _core.Simulation:
        """A fresh simulation of this scenario at time 0."""
        try:
            return _core.Simulation(self.text, self.source, str(self.base_dir), self.fmt)
        except _core.ScenarioError as e:
            raise ScenarioError(*e.args) from None


def schema() -> dict[str, Any]:
    """The JSON Schema of the scenario format."""
    return dict(json.loads(_core.schema()))
