"""The README is the front door: short, true, and every code block in it runs as
written (tests/docblocks.py says how); only the Quick start is skipped, and a block
another test runs names that test."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from docblocks import ROOT, blocks, run_python, run_shell

README = ROOT / "README.md"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", d / "examples")
    return d


def test_every_block_has_a_language_and_only_the_quick_start_is_skipped() -> None:
    bs = blocks(README)
    assert all(b.lang for b in bs), [b.line for b in bs if not b.lang]
    skipped = [b for b in bs if b.skip]
    assert len(skipped) == 1 and "make test" in skipped[0].text, skipped
    assert {b.lang for b in bs} <= {"sh", "python", "text"}


def test_blocks_run_elsewhere_are_run_there() -> None:
    for b in blocks(README):
        if b.run_by is not None:
            test = ROOT / b.run_by
            assert test.is_file(), (b.line, b.run_by)
            assert "run_by(" in test.read_text(encoding="utf-8"), (b.line, b.run_by)


def test_the_front_door_is_short_and_shows_a_verdict_table_first() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 200, len(lines)
    # the first screen: what it is, then the picture of a compare verdict table
    first = "\n".join(lines[:25])
    assert "![" in first and "docs/img/compare-verdicts.png" in first
    assert (ROOT / "docs" / "img" / "compare-verdicts.png").is_file()
    # the compare command shown is the documentation's, which a test runs
    from docblocks import run_by
    readme_cmd = next(b.text for b in blocks(README) if b.run_by)
    assert readme_cmd == run_by("tests/test_compare.py")[0].text


def test_python_blocks_run(workdir: Path) -> None:
    run_python(README, workdir)


def test_shell_blocks_run(workdir: Path) -> None:
    run_shell(README, workdir)


def test_links_to_the_repository_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target
