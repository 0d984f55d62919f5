"""The page of what the core's registration macros generate (docs/reference/generated.md).

A type such as `Policy`, `Scheduler` or `Event` is written by a macro from a one-line-
per-kind registration, so "go to definition" lands on the macro. This page lists, for
every registration, what it expands to (the types and the methods of each impl block,
read from the macro's own body) and each registered kind (variant, type, scenario name,
doc), and every `named_kinds!` enum with its names and default. `scripts/docgen.py`
writes it and its `--check` (run by the tests) keeps it in step with the sources."""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "crates" / "tenantnet-core" / "src"
NOT_REGISTRATIONS = {"named_kinds", "for_each_policy", "params_of", "unit_type", "id_type",
                     "gather_columns"}
"""Macros that are not a registration of kinds: the named kinds (listed on their own),
the policies' list (read through the macros it feeds) and helpers."""


def braced(code: str, start: int) -> tuple[str, int]:
    """The text inside the brace at or after `start`, and the index after its close."""
    i = code.index("{", start)
    depth = 0
    for j in range(i, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return code[i + 1:j], j + 1
    raise ValueError(f"unbalanced braces after {start}")


def sources() -> dict[str, str]:
    return {str(p.relative_to(CORE)): p.read_text(encoding="utf-8")
            for p in sorted(CORE.rglob("*.rs"))}


def macros(files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each macro_rules! of the core: (file, body)."""
    out = {}
    for path, code in files.items():
        for m in re.finditer(r"^macro_rules! (\w+)", code, re.M):
            out[m.group(1)] = (path, braced(code, m.end())[0])
    return out


def generated(body: str) -> list[str]:
    """What a macro's body generates: its named kinds, types and impl blocks' methods."""
    items = [f"`{k}` (named kind)" for k in re.findall(
        r"named_kinds!\s*\{\s*(?:///[^\n]*\n\s*|#\[[^\]]*\]\s*)*(\w+)", body)]
    items += [f"{kind} `{name}`" for kind, name in re.findall(
        r"\bpub (enum|struct|trait) (\w+)", body)]
    for m in re.finditer(r"\bimpl(?:<[^>]*>)? (?:(\w+) for )?(\w+)\s*\{", body):
        inner, _ = braced(body, m.end() - 1)
        fns = ", ".join(f"`{f}`" for f in re.findall(r"\bfn (\w+)", inner))
        head = f"`{m.group(1)} for {m.group(2)}`" if m.group(1) else f"`{m.group(2)}`"
        items.append(f"impl {head}: {fns}")
    return items


ENTRY = re.compile(r"(?:(\d+)\s*=>\s*)?(\w+)(?:\((.*)\))?(?:\s*=\s*\"([^\"]+)\")?"
                   r"(?:,\s*(\w+):\s*([\w:$]+))?\s*[;,]?$")


def entries(body: str) -> list[dict[str, str]]:
    """The registered kinds of an invocation's body: one a line, its doc above it."""
    out, doc = [], []
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("///"):
            doc.append(s[3:].strip())
        elif s and not s.startswith(("//", "#")) and (m := ENTRY.fullmatch(s)):
            code, v, ty, name, field, table = m.groups()
            out.append({"code": code or "", "variant": v, "type": (ty or "").replace(
                "$crate::", ""), "name": name or "",
                "table": f"{field}: {table.replace('$crate::', '')}" if field else "",
                "doc": " ".join(doc)})
            doc = []
    return out


def invocations(files: dict[str, str], name: str) -> list[tuple[str, str]]:
    """Each (file, body) where `name!` is invoked with a registration; a macro fed by
    `for_each_policy!(name)` reads that list."""
    out = []
    for path, code in files.items():
        for m in re.finditer(rf"^{name}! \{{", code, re.M):
            out.append((path, braced(code, m.end() - 1)[0]))
    if re.search(rf"for_each_policy!\({name}\)", "\n".join(files.values())):
        path, body = macros(files)["for_each_policy"]
        out.append((path, braced(body, body.index("$then!"))[0]))
    return out


def table(rows: list[dict[str, str]]) -> list[str]:
    cols = [c for c in ("code", "variant", "type", "name", "table") if any(r[c] for r in rows)]
    head = {"code": "code", "variant": "variant", "type": "type", "name": "scenario name",
            "table": "its table"}
    out = ["| " + " | ".join(head[c] for c in cols) + " | what |",
           "|" + "---|" * (len(cols) + 1)]
    for r in rows:
        cells = [f"`{r[c]}`" if r[c] else "" for c in cols]
        out.append("| " + " | ".join(cells) + f" | {r['doc'].replace('|', '/')} |")
    return out


def named_kinds(files: dict[str, str]) -> list[str]:
    out = ["| enum | file | scenario names (the default in bold) |", "|---|---|---|"]
    for path, code in files.items():
        for m in re.finditer(r"^crate::kinds::named_kinds! \{", code, re.M):
            body = braced(code, m.end() - 1)[0]
            head = re.search(r"^\s*(\w+)\s*(?:\(default (\w+)\))?\s*\{", body, re.M)
            if head is None:
                continue
            rows = entries(braced(body, head.end() - 1)[0])
            default = head.group(2) or rows[0]["variant"]
            names = ", ".join(f"**`{r['name']}`**" if r["variant"] == default else
                              f"`{r['name']}`" for r in rows)
            out.append(f"| `{head.group(1)}` | `{path}` | {names} |")
    return out


def kinds_page() -> str:
    files = sources()
    out = ["# What the registrations generate", "",
           "Generated from the core's sources by `scripts/docgen.py` (do not edit). Each "
           "interface's kinds are registered once, a line each, and a macro writes the "
           "enums and the dispatch from that list, so \"go to definition\" on these types "
           "lands on the macro: below is what each expands to and what is registered. "
           "Paths are relative to `crates/tenantnet-core/src`.", ""]
    for name, (path, body) in sorted(macros(files).items()):
        if name in NOT_REGISTRATIONS:
            continue
        for where, inv in invocations(files, name):
            out += [f"## `{name}!`", "", f"Defined in `{path}`, its kinds registered in "
                    f"`{where}`. It generates:", ""]
            out += [f"- {item}" for item in generated(body)]
            out += ["", *table(entries(inv)), ""]
    out += ["## Named kinds", "", "`named_kinds!` (`kinds.rs`) writes each of these:",
            "",
            "Each is an enum of unit variants with its scenario names (serde and JSON "
            "Schema), `ALL` in declaration order and `name()`.", "", *named_kinds(files), ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(kinds_page())
