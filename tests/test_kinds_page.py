"""The generated page of what the registration macros expand to lists every kind the
sources register: each scheduler and buffer policy the scenario schema names, and
every `named_kinds!` enum of the core."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from helpers import cli

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from kinds_page import CORE, entries, kinds_page  # noqa: E402  (a script beside the tests)


def schema_names(schema: dict, name: str) -> set[str]:
    spec = schema["definitions"][name] if "definitions" in schema else schema["$defs"][name]
    return {v for alt in spec.get("oneOf", [spec])
            for v in ([alt["const"]] if "const" in alt else alt.get("enum", []))}


def test_every_scheduler_and_buffer_policy_the_schema_names_is_listed() -> None:
    out = cli("schema")
    assert out.returncode == 0, out.stderr
    schema = json.loads(out.stdout)
    page = kinds_page()
    for spec in ("SchedulerSpec", "BufferPolicyKind"):
        names = schema_names(schema, spec)
        assert names, spec
        for n in names:
            assert f"| `{n}` |" in page, (spec, n)


def test_every_named_kinds_enum_is_listed() -> None:
    declared = {m.group(1) for p in CORE.rglob("*.rs") for m in re.finditer(
        r"^crate::kinds::named_kinds! \{\s*(?:///[^\n]*\n\s*|#\[[^\]]*\]\s*)*(\w+)",
        p.read_text(encoding="utf-8"), re.M)}
    assert len(declared) >= 20
    page = kinds_page()
    assert all(f"| `{k}` |" in page for k in declared), declared


def test_an_entry_line_reads_as_its_parts() -> None:
    rows = entries('/// Doc one.\n    Mbfq($crate::vswitch::mbfq::Mbfq) = "mbfq", '
                   'mbfq: $crate::vswitch::mbfq::MbfqSpec;\n    3 => FlowStart,\n')
    assert rows[0]["variant"] == "Mbfq" and rows[0]["name"] == "mbfq"
    assert rows[0]["type"] == "vswitch::mbfq::Mbfq" and rows[0]["doc"] == "Doc one."
    assert rows[0]["table"] == "mbfq: vswitch::mbfq::MbfqSpec"
    assert rows[1]["code"] == "3" and rows[1]["variant"] == "FlowStart"
