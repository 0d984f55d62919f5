"""ARCHITECTURE.md's packet path holds: every line's function is in the file it names,
in an impl of the type it names (or its trait's default), and calls each function the
line says it calls next and each helper it names after `|`; every function called next
is itself a line; the count of files the text gives is the count of files listed, and
at most 12."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import braced

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "crates" / "tenantnet-core" / "src"
DOC = ROOT / "ARCHITECTURE.md"


def path_lines() -> list[tuple[str, str, str, list[str], list[str]]]:
    """(file, owner, function, the names it calls next, the helpers it calls) per line
    of the block."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- packet-path -->\s*```text\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no packet-path block"
    out = []
    for line in block.group(1).splitlines():
        file, func, *rest = line.split(maxsplit=2)
        owner, name = func.split("::")
        nexts, _, helpers = (rest[0] if rest else "").partition("|")
        names = [[c.strip() for c in part.split(",") if c.strip()] for part in (nexts, helpers)]
        out.append((file, owner, name, names[0], names[1]))
    return out


def body(file: str, owner: str, name: str) -> str | None:
    """The body of `fn name` in an impl of `owner` (its own or a trait's, a macro's
    included) in `file`, or None."""
    code = re.sub(r"//[^\n]*", "", (CORE / file).read_text(encoding="utf-8"))
    o = re.escape(owner)
    pattern = rf"\b(?:impl(?:<[^>]*>)? (?:[\w:<>, ]+ for )?|pub trait ){o}\b[^{{;]*\{{"
    for m in re.finditer(pattern, code):
        block = braced(code, m.end() - 1)
        if f := re.search(rf"\bfn {re.escape(name)}\b", block):
            return braced(block, f.end())
    return None


def calls(text: str, name: str) -> bool:
    return bool(re.search(rf"\b{re.escape(name)}\s*(::<[^>]*>)?\(", text))


def test_every_step_is_in_its_file_and_calls_the_next() -> None:
    wrong = []
    for file, owner, name, nexts, helpers in path_lines():
        if not (CORE / file).is_file():
            wrong.append(f"{file}: no such file")
            continue
        b = body(file, owner, name)
        if b is None:
            wrong.append(f"{file}: no {owner}::{name}")
            continue
        wrong += [f"{owner}::{name} does not call {n}" for n in nexts + helpers
                  if not calls(b, n)]
    assert wrong == []


def test_every_function_called_is_a_step_and_the_file_count_is_right() -> None:
    lines = path_lines()
    names = {name for _, _, name, _, _ in lines}
    assert {n for *_, nexts, _ in lines for n in nexts} <= names
    files = {file for file, *_ in lines}
    said = re.search(r"crosses the (\d+) files it lists", DOC.read_text(encoding="utf-8"))
    assert said and int(said.group(1)) == len(files), sorted(files)
    assert len(files) <= 12, sorted(files)


def test_the_check_catches_a_step_that_moved() -> None:
    assert body("sim/fabric.rs", "Fabric", "route") is not None
    assert body("sim/mod.rs", "Fabric", "route") is None
    assert body("sim/fabric.rs", "Sim", "route") is None
    assert body("vswitch/policy.rs", "HostPolicy", "egress") is not None
