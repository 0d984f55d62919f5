"""The Rust core's top-level modules import one way: each only from the modules before
it in `ORDER` (ARCHITECTURE.md, "Layers"). Drawn from the sources' `crate::` paths,
comments left out; tests included, but for the circles (a test may build its run
from a scenario, saying so)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from helpers import braced

SRC = Path(__file__).resolve().parents[1] / "crates" / "tenantnet-core" / "src"
ORDER = ["units", "kinds", "engine", "table", "packet", "switch", "net", "transport",
         "vswitch", "workload", "qshare", "control", "sim", "scenario"]
"""Bottom to top."""
ROOTS = {"lib", "bin"}
"""The crate's root (declares the modules) and its binaries (use all of them)."""


def room(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".rs")


def imports(tests: bool = True) -> dict[tuple[str, str], set[str]]:
    """(module, module it imports from) -> the files where it does; with `tests`
    false, the code a build without tests compiles (a file's tests are its
    ``#[cfg(test)]`` module at its end, or a ``tests.rs``)."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.rs")):
        here = room(path)
        if here in ROOTS or (not tests and path.name == "tests.rs"):
            continue
        code = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
        if not tests:
            code = re.split(r"#\[cfg\(test\)\]\s*(?:pub(?:\(crate\))?\s+)?mod tests\b",
                            code)[0]
        for there in set(re.findall(r"\bcrate::(\w+)", code)) - {here, "VERSION"}:
            out[(here, there)].add(str(path.relative_to(SRC)))
    return out


def test_every_module_has_its_place_in_the_order() -> None:
    rooms = {room(p) for p in SRC.rglob("*.rs")} - ROOTS
    assert rooms == set(ORDER), "place a new module in ORDER and in ARCHITECTURE.md"


def explained(file: str, there: str) -> bool:
    """Whether every line of `file` naming ``crate::there`` follows a comment saying
    why it runs up the layers."""
    lines = (SRC / file).read_text(encoding="utf-8").splitlines()
    at = [i for i, x in enumerate(lines)
          if re.search(rf"\bcrate::{there}\b", x.split("//")[0])]
    def comment_above(i: int) -> str:
        block = []
        while i > 0 and lines[i - 1].strip().startswith("//"):
            i -= 1
            block.append(lines[i])
        return " ".join(block).lower()
    return all("up the layers" in comment_above(i) for i in at)


def test_imports_run_down_the_layers_but_for_three_at_most_each_saying_why() -> None:
    up = {(a, b): sorted(files) for (a, b), files in imports().items()
          if ORDER.index(b) > ORDER.index(a)}
    assert sum(len(f) for f in up.values()) <= 3, up
    unexplained = {k: f for k, fs in up.items() for f in fs if not explained(f, k[1])}
    assert not unexplained, unexplained


def cycles() -> list[set[str]]:
    """The strongly connected sets of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in imports(tests=False):
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_no_circle_between_modules_in_what_a_build_compiles() -> None:
    assert cycles() == []


def test_the_switch_and_the_vswitch_import_nothing_from_the_run_or_the_format() -> None:
    found = {k: v for k, v in imports().items()
             if k[0] in ("switch", "vswitch") and k[1] in ("scenario", "sim")}
    assert not found, found


def test_the_order_reads_the_same_in_architecture_md() -> None:
    doc = (SRC.parents[2] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    layers = doc.split("## Layers", 1)[1].split("\n## ", 1)[0]
    named = [n for n in re.findall(r"`(\w+)`", layers) if n in ORDER]
    assert named == ORDER, named


PARTS = ["Fabric", "Hosts", "Endpoints", "Records", "RunBudget", "ControlPlane",
         "Parallelism"]
"""The parts of a run's state (`sim/parts.rs`)."""
THE_LOOP = re.compile(r"\bSim\b|\bEvent\b|\bschedule\(|\bself\.events\b|\bself\.now\b")
"""What a part's method would name to reach into the event loop."""


def impl_blocks(code: str, name: str) -> list[str]:
    """The bodies of every ``impl name {…}`` in `code` (braces balanced)."""
    return [braced(code, m.end() - 1) for m in re.finditer(rf"^impl {name} \{{", code, re.M)]


def test_the_parts_own_their_state_and_never_call_back_into_the_loop() -> None:
    parts_rs = (SRC / "sim" / "parts.rs").read_text(encoding="utf-8")
    declared = re.findall(r"^pub struct (\w+)", parts_rs, re.M)
    assert declared == PARTS, "a new part: add it to PARTS and ARCHITECTURE.md"
    sim = re.search(r"^pub struct Sim \{(.*?)^\}", (SRC / "sim" / "mod.rs").read_text(
        encoding="utf-8"), re.M | re.S)
    assert sim
    fields = re.findall(r"^\s+(?:pub )?(\w+): (\w+)", sim.group(1), re.M)
    others = {name: ty for name, ty in fields if ty not in PARTS}
    assert others == {"now": "Time", "events": "EventQueue"}, (
        "Sim holds the clock, the event queue and the parts only")
    methods = 0
    for path in sorted((SRC / "sim").rglob("*.rs")):
        code = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
        for part in PARTS:
            for body in impl_blocks(code, part):
                methods += len(re.findall(r"\bfn \w+", body))
                assert not THE_LOOP.search(body), (
                    f"{path.name}: a method of {part} reaches into the loop: "
                    f"{THE_LOOP.search(body).group(0)!r}")
    assert methods >= 25


SIM_METHODS = 40
"""The most methods `impl Sim` may have (issue 58; at 136 before it). What stays: the
loop (new, start, run, run_until, run_observed, step, dispatch, schedule), the
hand-offs between parts (a packet's arrival, a port's admission and end of
transmission, the wire, a host's send, egress, delivery, a flow's sender and ACKs, a
shaper's drain, a tick, the CPU model's batches and timers, a controller's wake and
actions) and what changes the run from outside (its threads, an action, its results).
What reads it goes through a `RunView` (`sim/view.rs`)."""


def test_the_behaviour_is_in_the_parts_and_sim_only_hands_on() -> None:
    methods = []
    for path in sorted((SRC / "sim").rglob("*.rs")):
        code = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
        for body in impl_blocks(code, "Sim"):
            # its own functions only: a nested block's are its closures' and tests'
            depth, own = 0, []
            for line in body.splitlines():
                if depth == 1 and (m := re.match(r"\s*(?:pub(?:\([^)]*\))? )?fn (\w+)", line)):
                    own.append(m.group(1))
                depth += line.count("{") - line.count("}")
            methods += own
    assert 10 <= len(methods) <= SIM_METHODS, sorted(methods)
