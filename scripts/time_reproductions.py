#!/usr/bin/env python3
"""Times every reproduction on this machine (`tenantnet reproduce NAME`, one after the
other, each in a process of its own) and counts its runs, for the estimate `tenantnet
reproduce` prints before it starts: writes python/tenantnet/reference/reproductions.json
with the machine, the commit, the date, a calibration run's time (`tenantnet.sim.eta.
calibrate`, before and after) and each reproduction's runs and wall time.

Run it on a quiet machine: `python scripts/time_reproductions.py [NAME ...]` (names:
only those). What the file holds already is kept and the file is written after each
reproduction, so a run stopped half-way is taken up where it stopped with
`--missing`."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "python" / "tenantnet" / "reference" / "reproductions.json"


def main(names: list[str]) -> int:
    from tenantnet.jobs.runlog import RUN_LOG
    from tenantnet.reproduce import REPRODUCTIONS
    from tenantnet.sim.eta import calibrate
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    times = dict(old.get("reproductions", {}))
    missing = names == ["--missing"]
    todo = ([n for n in REPRODUCTIONS if n not in times] if missing else
            names or list(REPRODUCTIONS))
    cal = [calibrate()]
    for name in todo:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "runs"
            log.touch()
            env = dict(os.environ, **{RUN_LOG: str(log)})
            start = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "tenantnet", "reproduce", name, "-o",
                                str(Path(tmp) / "out"), "-q"], env=env, cwd=ROOT,
                               capture_output=True, text=True)
            wall = time.monotonic() - start
            if r.returncode:
                print(f"{name}: failed ({r.returncode}): {r.stderr[-500:]}", file=sys.stderr)
                return 1
            runs = log.stat().st_size // 2
        times[name] = {"runs": runs, "wall_s": round(wall, 1)}
        print(f"{name}: {runs} runs, {wall:.1f} s", flush=True)
        write(times, [*cal, old.get("calibration_s", math.inf)] if missing else cal)
    cal.append(calibrate())
    write(times, cal)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


def write(times: dict[str, dict[str, float]], cal: list[float]) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    OUT.write_text(json.dumps({
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Linux "
                   f"{platform.release()}",
        "commit": commit, "date": date.today().isoformat(),
        "calibration_s": round(sorted(cal)[0], 4),
        "reproductions": dict(sorted(times.items()))}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
