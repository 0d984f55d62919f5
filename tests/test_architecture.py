"""ARCHITECTURE.md stays true: every file, folder, type, method and macro it names in
backticks exists in the sources it describes."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from helpers import braced

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "ARCHITECTURE.md"
RUST = ROOT / "crates"
PYTHON = ROOT / "python" / "tenantnet"
ROOTS = [ROOT, RUST / "tenantnet-core" / "src", RUST / "tenantnet-py" / "src", PYTHON,
         ROOT / "python"]


@cache
def sources() -> str:
    files = [*RUST.rglob("*.rs"), *PYTHON.rglob("*.py"), *PYTHON.rglob("*.pyi")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def names() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks are samples
    return sorted({m for m in re.findall(r"`([^`\n]+)`", text)})


def is_path(n: str) -> bool:
    return bool(re.fullmatch(r"[\w./<>-]+", n)) and ("/" in n or
                                                     re.search(r"\.(rs|py|md|toml)$", n))


SEARCHED = ["crates", "python", "tests", "scripts", "examples", "docs", ".ci"]


def path_exists(n: str) -> bool:
    if "<" in n:  # a pattern such as control/<name>.rs: its folder
        n = n.split("<")[0]
    if any((r / n).exists() for r in ROOTS):
        return True
    # a path given relative to the folder the text is about (tcp_sender/sack_path.rs)
    return any(any((ROOT / d).rglob(n.rstrip("/"))) for d in SEARCHED)


def defined(kind: str) -> bool:
    """A Rust type, trait or enum variant (one a macro declares included), a Python
    class, or a macro."""
    k = re.escape(kind)
    return bool(re.search(rf"\b(struct|enum|trait|type|class|macro_rules!)\s+{k}\b"
                          rf"|^\s*(pub )?{k}\s*(\(|\{{|,|=)|^\s*\d+\s*=>\s*{k}\b", sources(),
                          re.M))


@cache
def own_bodies(owner: str) -> list[str]:
    """Where `owner`'s own members are written: its struct, enum or trait body, each of
    its impl blocks (inherent or of a trait), a macro's registration of it, or its
    Python class's body."""
    o = re.escape(owner)
    code = sources()
    heads = re.finditer(
        rf"^\s*(?:pub(?:\([\w:]+\))? )?(?:struct|enum|trait) {o}\b[^;{{]*\{{"
        rf"|^\s*impl(?:<[^>]*>)? (?:[\w:<>, ]+ for )?{o}\b(?:<[^>]*>)?\s*(?:where[^{{]*)?\{{"
        rf"|^\s*(?:pub )?{o}\s*\{{", code, re.M)
    bodies = [braced(code, h.start()) for h in heads]
    for m in re.finditer(rf"^( *)class {o}\b.*?:\n((?:\1 +.*\n|\s*\n)*)", code, re.M):
        bodies.append(m.group(2))
    return bodies


def member(owner: str, name: str) -> bool:
    """`owner::name`: a method, a variant or a field of `owner` itself (written in its
    own definition or impl blocks, not merely somewhere)."""
    n = re.escape(name)
    pattern = re.compile(rf"\bfn {n}\b|\bdef {n}\b|^\s*(pub(\(\w+\))? )?{n}\s*(:|\(|\{{|,|=)"
                         rf"|^\s*\d+\s*=>\s*{n}\b", re.M)
    return defined(owner) and any(pattern.search(b) for b in own_bodies(owner))


def checks(n: str) -> str | None:
    """Why the name `n` is wrong, or None (a name this test does not check is fine)."""
    if is_path(n):
        return None if path_exists(n) else "no such file or folder"
    if m := re.fullmatch(r"(\w+)!", n):
        return None if defined(m.group(1)) else "no such macro"
    if m := re.fullmatch(r"crate::(\w+)", n):  # a module of the core
        core = RUST / "tenantnet-core" / "src"
        found = (core / m.group(1)).is_dir() or (core / f"{m.group(1)}.rs").is_file()
        return None if found else "no such module"
    if m := re.fullmatch(r"(\w+)::(\w+)(?:\(.*\))?", n):
        return None if member(m.group(1), m.group(2)) else "no such type or member"
    if re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*|[A-Z][a-z]{2,}\w*", n) and n not in {"None"}:
        return None if defined(n) else "no such type"
    return None


def test_every_name_architecture_md_gives_exists() -> None:
    wrong = {n: why for n in names() if (why := checks(n))}
    assert not wrong, wrong


def test_the_check_catches_a_stale_name() -> None:
    assert checks("sim/nowhere.rs") == "no such file or folder"
    assert checks("Sim::no_such_method") == "no such type or member"
    assert checks("NoSuchType") == "no such type"
    assert checks("no_such_macro!") == "no such macro"
    assert checks("sim/datapath.rs") is None and checks("HostPolicy::tick") is None
    # a member of another type does not count: `Sim::route` is the fabric's
    assert checks("Fabric::route") is None and checks("Sim::route") is not None
