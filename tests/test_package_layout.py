"""The Python package's layout holds: folders by what a user does, at most 15 modules at
the top, no import circle (counting imports inside functions and those for type checking
only), no private name imported from another module, and an import inside a function
only where start-up time needs it, saying so."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[1] / "python"
PACKAGE = PYTHON / "tenantnet"
TOP_MAX = 15
DEFERRED = re.compile(r"#\s*deferred\b.*\b(start-up|optional)\b", re.I)
"""The comment a deferred import carries: the start-up time it saves, or the optional
dependency it needs."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PYTHON).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    found.update({"tenantnet._core": PACKAGE / "_core.pyi"})
    return found


def imports(name: str) -> list[tuple[ast.ImportFrom | ast.Import, str, str]]:
    """Each import of a tenantnet module in `name`: the node, the module it loads and
    the name taken from it ("" for a whole module)."""
    path = modules()[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, a.name, "") for a in node.names if a.name.startswith("tenantnet")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if not base.startswith("tenantnet"):
                continue
            for a in node.names:
                whole = f"{base}.{a.name}"
                found.append((node, whole, "") if whole in modules() else (node, base, a.name))
    return found


def graph() -> dict[str, set[str]]:
    return {m: {t for _, t, _ in imports(m) if t != m} for m in modules()}


def cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import circle of `edges`, or [] if there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                return [*stack[stack.index(t):], t]
            if t not in state and (found := visit(t)):
                return found
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return []


def test_the_cycle_finder_finds_a_circle_and_only_a_circle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_no_import_circle_in_the_package() -> None:
    assert cycle(graph()) == [], " -> ".join(cycle(graph()))


def test_at_most_15_modules_at_the_top() -> None:
    top = [p.name for p in PACKAGE.iterdir()
           if (p.suffix in (".py", ".so") or (p / "__init__.py").is_file())
           and not p.name.startswith(".")]
    assert len(top) <= TOP_MAX, sorted(top)


def test_no_private_name_is_imported_from_another_module() -> None:
    private = [f"{m}: {t}.{n}" for m in modules() for _, t, n in imports(m)
               if n.startswith("_") and not t.endswith("_core")]
    assert private == []


def reason(lines: list[str], lineno: int) -> bool:
    """Whether the import at `lineno` (1-based) carries a reason: a comment on it or
    above it, in the run of imports, comments and blank lines it opens or belongs to."""
    i = lineno - 1
    while i >= 0:
        s = lines[i].strip()
        if DEFERRED.search(s):
            return True
        if s and not s.startswith(("from ", "import ", "#", ")")) and not re.fullmatch(
                r"[\w, ]+,?", s):
            return False
        i -= 1
    return False


def test_an_import_inside_a_function_says_what_start_up_time_it_saves() -> None:
    bare = []
    for path in modules().values():
        if path.suffix != ".py":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            bare += [f"{path.relative_to(PYTHON)}:{node.lineno}" for node in ast.walk(fn)
                     if isinstance(node, ast.Import | ast.ImportFrom)
                     and not reason(lines, node.lineno)]
    assert bare == [], f"{len(bare)} imports inside functions without a reason: {bare}"


def test_a_reason_is_read_from_the_run_of_imports_it_opens() -> None:
    lines = ["def f():", "    # deferred for start-up: loads pandas", "    import numpy",
             "", "    import pandas", "    x = 1", "    import os"]
    assert reason(lines, 3) and reason(lines, 5) and not reason(lines, 7)
