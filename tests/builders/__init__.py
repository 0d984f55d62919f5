"""Scenario builders that several test modules share (tests/README.md)."""
