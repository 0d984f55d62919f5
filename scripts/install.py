#!/usr/bin/env python3
"""Installs tenantnet from this checkout (`pip install -e .`, with the extras named on
the command line, e.g. `test`), showing that the Rust core is compiling: pip alone
shows nothing for the minutes the build takes. On failure, pip's last lines are
printed and the exit status is pip's."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPILING = re.compile(r"^\s*Compiling (\S+) v")


def main(extras: list[str]) -> int:
    target = "." + (f"[{','.join(extras)}]" if extras else "")
    cmd = [sys.executable, "-m", "pip", "install", "-v", "-e", target]
    tty = sys.stderr.isatty()
    say = f"installing tenantnet{' with ' + ', '.join(extras) if extras else ''}"
    print(f"{say}: pip install -e '{target}' (the Rust core takes a few minutes to "
          "compile the first time)", file=sys.stderr, flush=True)
    start = time.monotonic()
    tail: deque[str] = deque(maxlen=40)
    crates = 0
    last = 0.0
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    assert proc.stdout is not None
    for line in proc.stdout:
        tail.append(line.rstrip())
        m = COMPILING.match(line)
        if m:
            crates += 1
            now = time.monotonic()
            text = f"  compiling the Rust core: {crates} crates ({m.group(1)}), " \
                   f"{now - start:.0f} s"
            if tty:
                print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
            elif now - last > 15:
                print(text, file=sys.stderr, flush=True)
                last = now
        elif "Finished `release` profile" in line or "Finished release" in line:
            if tty:
                print("\r\033[K", end="", file=sys.stderr)
            print(f"  compiled the Rust core ({crates} crates) in "
                  f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    code = proc.wait()
    if code != 0:
        print("\n".join(["", "pip failed; its last lines:", *tail]), file=sys.stderr)
        return code
    print(f"  installed in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
