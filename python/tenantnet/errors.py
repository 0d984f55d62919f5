"""Errors tenantnet raises for bad input."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that cannot be run.

    ``str(err)`` is the whole message, ``file: key = value: what was expected``;
    the parts are also attributes.
    """

    def __init__(self, message: str, file: str = "", key: str = "", value: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.value = value

    def __str__(self) -> str:
        return self.message
