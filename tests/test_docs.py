"""The documentation site: it builds in strict mode (MkDocs), no internal link of the
built site is broken, the generated reference pages are those the code gives today,
every code block of every page runs as written, and user-facing text cites papers
by name and section, never issue numbers or files outside the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from docblocks import DOCS, ROOT, blocks, pages, run_console, run_python, run_shell, run_toml

PAGES = pages()
IDS = [str(p.relative_to(DOCS)) for p in PAGES]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                        "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(str(a[key]))


def test_the_site_builds_strict_and_no_internal_link_is_broken(site: Path) -> None:
    parsed: dict[Path, _Links] = {}
    for html in site.rglob("*.html"):
        if html.name == "404.html":  # served from any path: its links are absolute
            continue
        p = _Links()
        p.feed(html.read_text(encoding="utf-8"))
        parsed[html] = p
    broken = []
    for html, p in parsed.items():
        for link in p.links:
            u = urlsplit(link)
            if u.scheme or u.netloc or link.startswith(("mailto:", "data:")):
                continue
            base = site if u.path.startswith("/") else html.parent
            target = (base / unquote(u.path).lstrip("/")).resolve() if u.path else html
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{html.relative_to(site)}: {link}")
            elif u.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else set()
                if u.fragment not in ids:
                    broken.append(f"{html.relative_to(site)}: {link} (no #{u.fragment})")
    assert not broken, broken
    assert (site / "reference" / "scenario" / "index.html").is_file()


def test_the_generated_reference_pages_are_up_to_date() -> None:
    args = [sys.executable, str(ROOT / "scripts" / "docgen.py"), "--check"]
    if sys.version_info[:2] != (3, 11):  # argparse's layout differs between versions
        args.append("--scenario-only")
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "examples", d / "examples")
    return d


SLOW_PAGES = {"guide/compare.md", "guide/performance.md"}
"""Pages whose commands run for several seconds (a comparison, a sweep, benchmarks)."""


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow)
                                  if i in SLOW_PAGES else p
                                  for p, i in zip(PAGES, IDS, strict=True)], ids=IDS)
def test_every_code_block_runs(page: Path, workdir: Path) -> None:
    bs = blocks(page)
    assert all(b.lang for b in bs), [b.line for b in bs if not b.lang]
    assert {b.lang for b in bs} <= {"sh", "console", "python", "toml", "text"}, page
    run_toml(page)
    run_console(page, workdir)
    run_shell(page, workdir)
    run_python(page, workdir)


def test_blocks_another_test_runs_are_the_ones_it_runs() -> None:
    from docblocks import run_by
    ran = run_by("tests/test_compare.py")
    assert len(ran) == 1
    emulated = run_by("tests/test_emulate.py", DOCS / "guide" / "emulation.md")
    assert len(emulated) == 3
    for page in [ROOT / "README.md", *PAGES]:
        for b in blocks(page):
            if b.run_by == "tests/test_emulate.py":
                assert page.name == "emulation.md", (page.name, b.line)
            elif b.run_by is not None:
                assert b.run_by == "tests/test_compare.py" and b.text == ran[0].text, (
                    page.name, b.line)


def test_the_full_scenario_is_the_example() -> None:
    full = next(b.text for b in blocks(DOCS / "guide" / "scenarios.md")
                if b.lang == "toml" and "[simulation]" in b.text)
    example = (ROOT / "examples" / "dctcp-incast.toml").read_text(encoding="utf-8")
    assert example.endswith(full), "examples/dctcp-incast.toml is the guide's scenario"


FORBIDDEN = [(r"\bissue \d+", "an issue number"), (r"\(in progress", "\"in progress\""),
             (r"\b\w+\.txt\b", "a paper's text file"), (r"\bspec §", "the spec"),
             (r"\bspec [A#]\d", "the spec"), (r"\b[TQ]:L\d+", "a line of a paper's text"),
             (r"module docstring", "a docstring instead of the explanation")]


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES],
                         ids=["README.md", *IDS])
def test_user_facing_text_cites_papers_not_files_or_issues(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for pattern, what in FORBIDDEN:
        m = re.search(pattern, text)
        assert m is None, f"{page.name}: {what}: {m.group(0) if m else ''}"
