"""Judging schemes against each other: ``compare`` (a scenario under every scheme
and several seeds), its tables and report, and ``sweep`` (a grid of parameters)."""
