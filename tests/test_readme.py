"""Every code block of the README runs as written: TOML blocks validate (the complete
scenario also runs; fragments extend it), shell blocks run, console blocks print what
they show, Python blocks run. A block may be skipped only with a stated reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomllib

import tenantnet
from helpers import check_conservation

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@dataclass
class Block:
    lang: str
    text: str
    line: int
    skip: str | None
    run_by: str | None = None
    """A test file that runs the block itself (and checks more of it than that it
    runs), so that this file does not run it twice."""


def blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    out = []
    pat = re.compile(r"(?:<!-- readme-test: (?:skip \(([^)]*)\)|run by (tests/\w+\.py): [^>]*)"
                     r" -->\n)?```(\w*)\n(.*?)```", re.S)
    for m in pat.finditer(text):
        out.append(Block(m.group(3), m.group(4), text[:m.start()].count("\n") + 1, m.group(1),
                         m.group(2)))
    return out


def of(lang: str) -> list[Block]:
    return [b for b in blocks() if b.lang == lang and b.skip is None and b.run_by is None]


def run_by(test_file: str) -> list[Block]:
    """The blocks the test file `test_file` (tests/NAME.py) runs itself."""
    return [b for b in blocks() if b.run_by == test_file]


def test_blocks_run_elsewhere_are_run_there() -> None:
    for b in blocks():
        if b.run_by is not None:
            test = ROOT / b.run_by
            assert test.is_file(), (b.line, b.run_by)
            assert f'run_by("{b.run_by}")' in test.read_text(encoding="utf-8"), (
                b.line, f"{b.run_by} does not run the block")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", d / "examples")
    return d


def shell(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               COLUMNS="200")
    return subprocess.run(cmd, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_every_block_has_a_language_and_only_the_quick_start_is_skipped() -> None:
    bs = blocks()
    assert all(b.lang for b in bs), [b.line for b in bs if not b.lang]
    skipped = [b for b in bs if b.skip]
    assert len(skipped) == 1 and "make test" in skipped[0].text, skipped
    assert {b.lang for b in bs} <= {"sh", "console", "python", "toml", "text"}


def merge(base: dict[str, Any], frag: dict[str, Any]) -> dict[str, Any]:
    """``frag`` over ``base``: tables merge key by key, lists of tables append."""
    out = dict(base)
    for k, v in frag.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        elif isinstance(v, list) and isinstance(out.get(k), list) and k in ("workloads",
                                                                            "tenants"):
            out[k] = out[k] + v
        else:
            out[k] = v
    return out


def test_toml_blocks_validate_and_the_scenario_runs() -> None:
    tomls = of("toml")
    full = [b for b in tomls if "[simulation]" in b.text]
    assert len(full) == 1, "one complete scenario, which the fragments extend"
    base = tomllib.loads(full[0].text)
    r = tenantnet.run(tenantnet.Scenario.from_toml(full[0].text, "README"))
    check_conservation(r)
    assert r.summary["flows_completed"] > 0
    for b in tomls:
        if b is full[0]:
            continue
        d = merge(base, tomllib.loads(b.text))
        parts = tenantnet.Scenario.from_dict(d, f"README line {b.line}").validate()
        assert parts, b.line
    example = (ROOT / "examples" / "dctcp-incast.toml").read_text(encoding="utf-8")
    assert example.endswith(full[0].text), "examples/dctcp-incast.toml is the README's scenario"


def test_shell_blocks_run(workdir: Path) -> None:
    for b in of("sh"):
        for cmd in b.text.strip().splitlines():
            p = shell(cmd, workdir)
            assert p.returncode == 0, (b.line, cmd, p.stderr)
            assert "Traceback" not in p.stderr, (cmd, p.stderr)


def test_console_blocks_print_what_they_show(workdir: Path) -> None:
    for b in of("console"):
        steps = re.split(r"^\$ ", b.text, flags=re.M)[1:]
        assert steps, b.line
        for step in steps:
            cmd, _, expected = step.partition("\n")
            p = shell(cmd, workdir)
            assert (p.stdout + p.stderr).strip() == expected.strip(), (b.line, cmd)


def test_python_blocks_run(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    for b in of("python"):
        exec(compile(b.text, f"README.md:{b.line}", "exec"), {})
