#!/usr/bin/env python3
"""Writes the generated pages of the documentation site: the scenario reference from
the JSON Schema (`tenantnet schema`), the command-line reference from `--help` and
what the core's registration macros generate (`scripts/kinds_page.py`).

    python3 scripts/docgen.py          # rewrite docs/reference/{scenario,cli,generated}.md
    python3 scripts/docgen.py --check  # exit 1 if any is out of date
    (--scenario-only: leave the command-line page, whose layout argparse changes
    between Python versions)

The tests run the check, so the pages never drift from the code."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"scenario": ROOT / "docs" / "reference" / "scenario.md",
         "cli": ROOT / "docs" / "reference" / "cli.md",
         "generated": ROOT / "docs" / "reference" / "generated.md"}


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


class Schema:
    """The scenario's JSON Schema, walked table by table."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.defs: dict[str, Any] = doc.get("$defs", {})

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """Follows `$ref` and drops the null branch of an optional key (keeping the
        key's own description)."""
        for _ in range(8):
            if "$ref" in node:
                target = dict(self.defs[node["$ref"].split("/")[-1]])
                if "description" in node:
                    target["_key_description"] = node["description"]
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            elif "anyOf" in node:
                real = [b for b in node["anyOf"] if b.get("type") != "null"]
                if len(real) != 1:
                    return node
                rest = {k: v for k, v in node.items() if k != "anyOf"}
                node = {**self.resolve(real[0]), **rest}
            else:
                return node
        return node

    def _ref(self, node: dict[str, Any]) -> str | None:
        """The definition a key's value is, through an optional key's `anyOf`."""
        if "$ref" in node:
            return str(node["$ref"]).split("/")[-1]
        real = [b for b in node.get("anyOf", []) if b.get("type") != "null"]
        return self._ref(real[0]) if len(real) == 1 else None

    def expects(self, node: dict[str, Any]) -> str:
        """What a key takes, in words."""
        n = self.resolve(node)
        if "enum" in n:
            return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in n["enum"])
        if "oneOf" in n and all("const" in self.resolve(b) for b in n["oneOf"]):
            return "one of " + ", ".join(f"`{json.dumps(self.resolve(b)['const'])}`"
                                         for b in n["oneOf"])
        if "oneOf" in n:
            return "a table with a `kind`"
        if "const" in n:
            return f"`{json.dumps(n['const'])}`"
        t = n.get("type")
        ref = self._ref(node)
        own = n.get("description", "") if ref is None else ""
        described = str(self.defs.get(ref, {}).get("description", "")) if ref else ""
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        if t == "string" or (t is None and "anyOf" in n):
            text = described or (own if own[:2] in ("a ", "an") else "")
            return _one_line(text) if text else "a string"
        if t == "integer":
            return "a whole number"
        if t == "number":
            return "a number"
        if t == "boolean":
            return "`true` or `false`"
        if t == "array":
            items = n.get("items")
            each = self.expects(items) if isinstance(items, dict) else ""
            plural = {"a string": "strings", "a table": "tables", "a number": "numbers",
                      "a whole number": "whole numbers"}
            return (f"a list of {plural[each]}" if each in plural else
                    f"a list, each {each}" if each else "a list")
        if t == "object":
            return "a table"
        return _one_line(described or "see the description")

    @staticmethod
    def default(node: dict[str, Any]) -> str:
        if "default" not in node:
            return ""
        return f"`{json.dumps(node['default'], ensure_ascii=False)}`"

    def table(self, node: dict[str, Any], title: str, out: list[str], level: int,
              skip: set[str] | None = None) -> None:
        """`node`'s keys as a table under `title`, then each key that is a table of its
        own (or a list of tables), but those in `skip`, as a section below."""
        n = self.resolve(node)
        if "oneOf" in n and not all("const" in self.resolve(b) for b in n["oneOf"]):
            out.append(f"{'#' * level} `{title}`\n")
            if n.get("description"):
                out.append(_one_line(n["description"]).replace("\\|", "|") + "\n")
            branches = [self.resolve(b) for b in n["oneOf"]]
            common = set.intersection(*(set(b.get("properties", {})) for b in branches))
            for b in branches:
                kind = b["properties"]["kind"]["const"]
                self.table(b, f'{title} kind = "{kind}"', out, level + 1, skip=common)
            self.nested_sections(branches[0], title, out, level + 1, only=common)
            return
        props: dict[str, Any] = n.get("properties", {})
        required = set(n.get("required", []))
        out.append(f"{'#' * level} `{title}`\n")
        desc = n.get("_key_description") or n.get("description")
        if desc:
            out.append(_one_line(desc).replace("\\|", "|") + "\n")
        rows = ["| key | takes | default | what |", "|---|---|---|---|"]
        for key, p in sorted(props.items()):
            if key == "kind" and "const" in p:
                continue
            r = self.resolve(p)
            what = _one_line(p.get("description", r.get("_key_description", "")))
            req = " (required)" if key in required else ""
            rows.append(f"| `{key}`{req} | {self.expects(p)} | {self.default(p)} | {what} |")
        out.append("\n".join(rows) + "\n")
        self.nested_sections(n, title, out, level + 1, skip=skip or set())

    def nested_sections(self, n: dict[str, Any], title: str, out: list[str], level: int,
                        skip: set[str] | None = None, only: set[str] | None = None) -> None:
        """A section for each key of `n` that is a table or a list of tables."""
        for key, p in sorted(n.get("properties", {}).items()):
            if key in (skip or set()) or (only is not None and key not in only):
                continue
            r = self.resolve(p)
            many = r.get("type") == "array" and isinstance(r.get("items"), dict)
            item = self.resolve(r["items"]) if many else r
            tagged = "oneOf" in item and not all("const" in self.resolve(b)
                                                   for b in item["oneOf"])
            if not ((item.get("type") == "object" and item.get("properties")) or tagged):
                continue
            base = title.split(" kind = ")[0].strip("[]")
            name = f"{base}.{key}" if base else key
            self.table(r["items"] if many else p, f"[[{name}]]" if many else f"[{name}]",
                       out, level)


def scenario_page() -> str:
    from tenantnet.sim.scenario import schema
    s = Schema(schema())
    out = ["# Scenario reference\n",
           "Every key of a scenario file, generated from the scenario format's JSON Schema "
           "(`tenantnet schema` prints it). Quantities are strings with units: rates "
           '(`"10Gbps"`), durations (`"2us"`), sizes (`"1MB"`, `"100pkt"`). The '
           "[user guide](../guide/scenarios.md) explains them with examples.\n"]
    props = s.doc["properties"]
    for key in ("name", "description"):
        out.append(f"`{key}`: {_one_line(props[key].get('description', ''))}\n")
    for key in ("simulation", "topology", "network", "transport", "vswitch", "tenants",
                "qshare", "workloads", "output"):
        p = props[key]
        r = s.resolve(p)
        if r.get("type") == "array":
            s.table(r["items"], f"[[{key}]]", out, 2)
        else:
            s.table(p, f"[{key}]", out, 2)
    return "\n".join(out)


def _subcommands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def cli_page() -> str:
    os.environ["COLUMNS"] = "100"
    from tenantnet.cli.main import build_parser
    top = build_parser()
    out = ["# Command-line reference\n",
           "Every command's `--help`, generated from the command itself. Every command "
           "either succeeds or prints one `error:` line and exits with code 2, having "
           "written nothing; Ctrl-C stops it with exit code 130 and leaves no partial "
           "folder of results. Ctrl-C pressed again while it stops (twice more at "
           "most) lets it finish removing what it had begun; a fourth press ends it "
           "where it stands.\n",
           "```text", top.format_help().rstrip(), "```\n"]

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        for name, sub in _subcommands(p).items():
            out.extend([f"## `{prefix} {name}`\n", "```text", sub.format_help().rstrip(),
                        "```\n"])
            walk(sub, f"{prefix} {name}")
    walk(top, "tenantnet")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(ROOT / "scripts"))
    from kinds_page import kinds_page  # a sibling script, found once scripts/ is on the path
    pages = {"scenario": scenario_page(), "generated": kinds_page()}
    if "--scenario-only" not in argv:
        pages["cli"] = cli_page()
    stale = [n for n, text in pages.items()
             if not PAGES[n].exists() or PAGES[n].read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for n in stale:
            print(f"{PAGES[n].relative_to(ROOT)} is out of date: run scripts/docgen.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for n, text in pages.items():
        PAGES[n].parent.mkdir(parents=True, exist_ok=True)
        PAGES[n].write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
