"""Folders of results: written whole or not at all, replaced whole, and read back
only as far as the run that wrote them wrote them.

Every folder tenantnet writes holds ``manifest.json``: which command wrote it, the
tenantnet version and every file it wrote (paths relative to the folder). A command
that writes a results folder (``run``, ``demo``, ``compare``, ``reproduce``, …)
writes everything into a fresh folder beside the destination and then puts it in
the destination's place, so that nothing of an earlier run remains and a failure
half-way leaves the destination as it was. It refuses a destination that exists, is
not empty and holds no manifest (a folder tenantnet did not write) unless told to
replace it (``--force``). Readers (:meth:`tenantnet.Results.read`, ``tenantnet
report``) read only the files the manifest lists.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import _core
from .interrupts import shielded

MANIFEST = "manifest.json"


class OutputError(ValueError):
    """A destination folder that cannot take the results (printed as one error line)."""


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.relative_to(folder).as_posix() != MANIFEST)


def write_manifest(folder: Path, by: str, extra: dict[str, Any] | None = None,
                   files: list[str] | None = None) -> None:
    """Writes ``folder/manifest.json`` listing `files` (default: every file now in
    `folder`)."""
    doc = {"written_by": by, "tenantnet_version": _core.version(), **(extra or {}),
           "files": sorted(files) if files is not None else _files(folder)}
    (folder / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of `folder`, or None if it has none (or one that is not ours)."""
    try:
        doc = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("files"), list) else None


def listed(folder: Path) -> set[str] | None:
    """The files `folder`'s manifest lists (None: no manifest, every file counts)."""
    doc = manifest(folder)
    return None if doc is None else {str(f) for f in doc["files"]}


def check_out(out: Path, force: bool = False) -> None:
    """Raises :class:`OutputError` before any work if `out` cannot become a folder
    of results: a file, an unwritable place, the current folder or one above it, or
    a non-empty folder tenantnet did not write (unless `force`)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a folder; expected a folder for the "
                          "results")
    if out.exists():
        here = Path.cwd().resolve()
        if out.resolve() == here or out.resolve() in here.parents:
            raise OutputError(f"{out}: is the current folder or holds it; expected a "
                              "folder for the results, which replaces it whole")
        if any(out.iterdir()) and manifest(out) is None and not force:
            raise OutputError(
                f"{out}: exists, is not empty and was not written by tenantnet (no "
                f"{MANIFEST}); the results replace the folder whole: choose another "
                "folder or give --force to replace it")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{out}: cannot create it: {parent} is not a writable folder")


def write_parquet(frame: Any, path: Path) -> None:
    """Writes the DataFrame `frame` to `path` as Parquet (pyarrow, no index) through
    an open file: the writer then hands each page to Python as it goes, so Ctrl-C
    stops a large table within a page instead of after the whole table (given the
    path, pyarrow writes a table of millions of rows in one call: 0.5 s here, seconds
    on a busy machine). The bytes are those written to the path."""
    with open(path, "wb") as f:
        frame.to_parquet(f, index=False, engine="pyarrow")


def publish(out: Path, write: Callable[[Path], object], by: str,
            force: bool = False) -> None:
    """Runs ``write`` into a fresh folder beside `out`, lists what it wrote in a
    manifest, then puts the folder in `out`'s place: nothing of what `out` held
    remains, and a failure half-way leaves `out` as it was."""
    check_out(out, force)
    parent = out.parent if out.parent != Path("") else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as e:
        raise OutputError(f"{out}: cannot create it: {e.strerror or e}") from None
    old = None
    try:
        write(tmp)
        write_manifest(tmp, by)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            os.replace(out, old / "d")
        os.replace(tmp, out)
    finally:
        with shielded():
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)


def add_to(folder: Path, write: Callable[[Path], object], by: str) -> None:
    """Runs ``write`` into a fresh folder and moves what it wrote into `folder` (which
    must exist), each file replacing one of the same name; the manifest then lists
    them too."""
    parent = folder.parent if folder.parent != Path("") else Path(".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=parent))
    try:
        write(tmp)
        new = _files(tmp)
        for item in sorted(tmp.iterdir()):
            dest = folder / item.name
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            os.replace(item, dest)
    finally:
        with shielded():
            shutil.rmtree(tmp, ignore_errors=True)
    doc = manifest(folder)
    if doc is not None:
        doc["files"] = sorted(set(doc["files"]) | set(new))
        added = doc.setdefault("added_by", [])
        if by not in added:
            added.append(by)
        (folder / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
