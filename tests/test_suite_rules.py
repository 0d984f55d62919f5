"""The suite's own rules: what `make test` may run on every core at once."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# what a module that makes network namespaces imports
NAMESPACES = re.compile(r"\bnamespaces_why_not\b|\btenantnet\.linux_lab\b")


def test_every_module_that_makes_namespaces_runs_alone() -> None:
    # namespaces share the host's names and links, and their tests measure wall-clock
    # rates: two such tests on two workers would see each other's namespaces (the
    # leftover checks) and each other's CPU
    loose = [f.name for f in sorted(TESTS.glob("test_*.py"))
             if f != Path(__file__) and NAMESPACES.search(f.read_text())
             and "pytest.mark.serial" not in f.read_text()]
    assert loose == [], f"mark these `pytestmark = pytest.mark.serial`: {loose}"


def test_make_test_runs_both_passes() -> None:
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert '-n auto --dist loadfile -m "not serial"' in recipe
    assert "-m serial" in recipe
