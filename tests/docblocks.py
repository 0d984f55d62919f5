"""Code blocks of the README and the documentation site, and how the tests run them:
TOML blocks validate (a page's complete scenario also runs; its fragments extend it,
or extend `examples/dctcp-incast.toml` on a page without one), shell blocks run,
console blocks print what they show, Python blocks run. A block may be skipped with a
stated reason (`<!-- readme-test: skip (why) -->` or `docs-test`), or left to a test
file that runs it and checks more (`<!-- docs-test: run by tests/NAME.py: why -->`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tenantnet
from helpers import check_conservation
from tenantnet.advice import slo

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BASE_SCENARIO = ROOT / "examples" / "dctcp-incast.toml"
LANGS = {"sh", "console", "python", "toml", "text"}


@dataclass
class Block:
    lang: str
    text: str
    line: int
    skip: str | None
    run_by: str | None = None
    """A test file that runs the block itself (and checks more of it than that it
    runs), so that the page's own test does not run it twice."""


_PATTERN = re.compile(r"(?:<!-- (?:readme|docs)-test: (?:skip \(([^)]*)\)|run by (tests/\w+\.py): "
                      r"[^>]*) -->\n)?```(\w*)\n(.*?)```", re.S)


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(m.group(3), m.group(4), text[:m.start()].count("\n") + 1, m.group(1),
                  m.group(2)) for m in _PATTERN.finditer(text)]


def of(page: Path, lang: str) -> list[Block]:
    return [b for b in blocks(page) if b.lang == lang and b.skip is None and b.run_by is None]


def run_by(test_file: str, page: Path = DOCS / "guide" / "compare.md") -> list[Block]:
    """The blocks of `page` the test file `test_file` (tests/NAME.py) runs itself."""
    return [b for b in blocks(page) if b.run_by == test_file]


def shell(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               COLUMNS="200")
    return subprocess.run(cmd, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


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


def run_toml(page: Path) -> None:
    tomls = of(page, "toml")
    full = [b for b in tomls if "[simulation]" in b.text]
    base_text = full[0].text if full else BASE_SCENARIO.read_text(encoding="utf-8")
    base = tomllib.loads(base_text)
    if full:
        r = tenantnet.run(tenantnet.Scenario.from_toml(full[0].text, f"{page.name}"))
        check_conservation(r)
        assert r.summary["flows_completed"] > 0
    for b in tomls:
        if full and b is full[0]:
            continue
        if b.text.lstrip().startswith("# service levels"):
            assert slo.parse(tomllib.loads(b.text), f"{page.name} line {b.line}").every
            continue
        d = merge(base, tomllib.loads(b.text))
        parts = tenantnet.Scenario.from_dict(d, f"{page.name} line {b.line}").validate()
        assert parts, b.line


def run_shell(page: Path, workdir: Path) -> None:
    for b in of(page, "sh"):
        for cmd in b.text.strip().splitlines():
            p = shell(cmd, workdir)
            assert p.returncode == 0, (page.name, b.line, cmd, p.stderr)
            assert "Traceback" not in p.stderr, (cmd, p.stderr)


def run_console(page: Path, workdir: Path) -> None:
    for b in of(page, "console"):
        steps = re.split(r"^\$ ", b.text, flags=re.M)[1:]
        assert steps, b.line
        for step in steps:
            cmd, _, expected = step.partition("\n")
            p = shell(cmd, workdir)
            assert (p.stdout + p.stderr).strip() == expected.strip(), (page.name, b.line, cmd)


def run_python(page: Path, workdir: Path) -> None:
    cwd = Path.cwd()
    os.chdir(workdir)
    try:
        for b in of(page, "python"):
            exec(compile(b.text, f"{page.name}:{b.line}", "exec"), {})
    finally:
        os.chdir(cwd)


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))
