"""Mutated scenarios (issue 11's fuzz classes as a property test): every scenario made by
changing, deleting or adding keys of the examples with extreme and ill-typed values
either runs or is refused with a ScenarioError naming its key; from the command line it
ends in exit 0, or exit 2 with one error line and nothing written. Nothing aborts, hangs
or raises anything else. Hypothesis runs derandomized, so CI sees the same cases."""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenantnet
from helpers import cli

ROOT = Path(__file__).resolve().parents[1]
BASES = [tomllib.loads(p.read_text(encoding="utf-8"))
         for p in sorted((ROOT / "examples").glob("*.toml"))]

NASTY: list[Any] = [
    "1ps", "0s", "18446744s", "1000000s", "1000001s", "0B", "4294968756B", "65536B", "1pkt",
    "0pkt", "18446744073709551615bps", "1bps", "100Tbps", "101Tbps", "-1s", "nan", "",
    "h99", "all", "*", "zero", "identity", "tcp", "mbfq", "2ms", "1GB", "1ns",
    0, 1, -1, 2**31, 2**32, 2**63 - 1, 20_000_000, 65, 64,
    math.nan, math.inf, -math.inf, 1e308, 1e-308, 0.0, -0.0, 0.5, 1.5,
    True, False, [], [1], ["x"], [0, 64], {}, {"x": 1},
    # what the fuzz of issue 38 added: exponents, signs, lines, long and combining text,
    # integers beyond TOML's
    "1e20GHz", "-5ms", "1,5MB", "a\nb", "x" * 5000, "h0\u0301", 2**70, [[1]], [{"a": 1}],
]

JARGON = ("invalid type", "invalid value", "variant", "i64", "u64", "u32", "f64",
          "sequence", " map", "Bytes(", "Some(", "\\u{", "newtype", "usize")
"""Words of serde's and Rust's debug output that no message may show."""


def plain(message: str) -> None:
    """One line, short, in tenantnet's words."""
    assert "\n" not in message and len(message) < 1000, message
    for word in JARGON:
        assert word not in message, (word, message)

BUDGET = "1GiB"
"""Small enough that no accepted case can take the test machine's memory."""


def paths(d: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into ``d`` (tables and list items included)."""
    out: list[tuple[Any, ...]] = []
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else []
    for k, v in items:
        out.append((*prefix, k))
        out.extend(paths(v, (*prefix, k)))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    d = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        ps = paths(d)
        p = draw(st.sampled_from(ps))
        parent: Any = d
        for k in p[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["set", "set", "set", "delete", "add"]))
        if action == "set":
            parent[p[-1]] = copy.deepcopy(draw(st.sampled_from(NASTY)))
        elif action == "delete" and isinstance(parent, dict):
            del parent[p[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["colour", "seed ", "", "kind"]))] = draw(
                st.sampled_from(NASTY))
    return d


def short(d: dict[str, Any]) -> dict[str, Any]:
    """The scenario cut to at most 2 ms of simulated time (if it has a [simulation])."""
    d = copy.deepcopy(d)
    if isinstance(d.get("simulation"), dict):
        d["simulation"] = dict(d["simulation"], duration="2ms")
    return d


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated())
def test_a_mutated_scenario_runs_or_names_its_key(d: dict[str, Any]) -> None:
    try:
        sc = tenantnet.Scenario.from_dict(d, "fuzz")
        sc.validate(memory_budget=BUDGET)
    except tenantnet.ScenarioError as e:
        assert str(e).startswith("fuzz"), str(e)
        assert e.key or "expected a" in str(e), str(e)
        plain(str(e))
        return
    try:
        r = tenantnet.run(short(d), memory_budget=BUDGET)
    except tenantnet.ScenarioError as e:
        # a cut-down run may still be refused (a start beyond 2 ms, say) or stop at
        # its memory budget: always naming the key
        assert e.key, str(e)
        return
    assert r.summary["conservation_ok"]


CLI_CASES = 24


@pytest.mark.parametrize("case", range(CLI_CASES))
def test_a_mutated_scenario_from_the_command_line(case: int, tmp_path: Path) -> None:
    import json

    sc = tmp_path / "s.json"
    sc.write_text(json.dumps(short(_case(case))))
    out = tmp_path / "out"
    p = cli("run", str(sc), "--out", str(out), "-q", "--no-report", "--memory-budget", BUDGET,
            timeout=300)
    assert p.returncode in (0, 2), p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr, p.stderr
    if p.returncode == 2:
        assert p.stderr.startswith(f"error: {sc}") and len(p.stderr.splitlines()) == 1, p.stderr
        plain(p.stderr.strip())
        assert not out.exists(), "nothing written on error"
    else:
        assert (out / "summary.json").is_file()


def _case(i: int) -> dict[str, Any]:
    """The i-th of a fixed list of mutated scenarios (drawn once, reproducibly)."""
    import random
    rng = random.Random(1000 + i)
    d = copy.deepcopy(BASES[i % len(BASES)])
    for _ in range(rng.randint(1, 3)):
        ps = paths(d)
        p = rng.choice(ps)
        parent: Any = d
        for k in p[:-1]:
            parent = parent[k]
        value = copy.deepcopy(rng.choice([v for v in NASTY if not (
            isinstance(v, float) and not math.isfinite(v))]))
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[p[-1]]
        else:
            parent[p[-1]] = value
    return d


def test_a_scenario_of_200_000_workload_tables_is_validated(tmp_path: Path) -> None:
    """Validation grows with the file, not its square (a total the estimate summed
    again after each of its parts made it quadratic: 80 000 tables took 8 s, 200 000
    more than 30); `tenantnet bench validate` times it."""
    head = ('[simulation]\nduration = "10ms"\n[topology]\nkind = "star"\nhosts = 8\n'
            'link_rate = "10Gbps"\n')
    f = tmp_path / "many.toml"
    f.write_text(head + "".join(
        f'[[workloads]]\nkind = "long_lived"\nsrc = "h{i % 4}"\ndst = "h{4 + i % 4}"\n'
        for i in range(200_000)))
    p = cli("validate", str(f), timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{f}: ok; its run needs about"), p.stdout


@pytest.mark.parametrize("text", [
    "big = 18446744073709551616\n", "v = [1, 99999999999999999999999]\n",
    "t = { a = 36893488147419103232 }\n", "seed = 0x1FFFFFFFFFFFFFFFFF\n",
    "neg = -9223372036854775809\n"])
def test_integers_beyond_64_bits_anywhere_are_one_plain_error(tmp_path: Path,
                                                              text: str) -> None:
    for name, body in (("s.toml", f'name = "x"\n{text}'),
                       ("s.json", '{"name": "x", "v": ' + text.split("= ", 1)[1].strip()
                        .replace("{ a = ", '{"a": ').replace("0x1FFFFFFFFFFFFFFFFF",
                                                              "590295810358705651711")
                        + "}")):
        f = tmp_path / name
        f.write_text(body)
        p = cli("validate", str(f))
        assert p.returncode == 2, (name, p.stderr)
        plain(p.stderr.strip())
        assert "9223372036854775807" in p.stderr, (name, p.stderr)
