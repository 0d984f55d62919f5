"""Fixtures that several test modules share, each computed once per session, and the
``slow`` marker (tests/README.md says where a new test goes)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from builders.scaled import FIG8_SCALE, FIG9_QUERIES, TABLES_QUERIES
from helpers import Ran, cli, htsim_scheduled


@pytest.fixture(scope="session")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """``tenantnet ARGS -q -o DIR`` (``ran("reproduce", "barberq-fig1")``), run once per
    session for every test that reads it (the digests, the figure's or the command's
    own checks): the folder DIR it wrote. Read it, never write into it."""
    done: dict[tuple[str, ...], Path] = {}

    def get(*args: str) -> Path:
        if args not in done:
            out = tmp_path_factory.mktemp("-".join(a for a in args if "/" not in a)) / "out"
            res = cli(*args, "-q", "-o", str(out))
            assert res.returncode == 0, res.stderr
            done[args] = out
        return done[args]
    return get


@pytest.fixture(scope="session")
def trinity_fig8_scaled() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 8's points at `FIG8_SCALE` and their comparison with the paper, under the
    former defaults (`htsim_scheduled`: under the defaults FileStore's eight connections
    a pair no longer finish first without protection, 6.29 against 4.45 s)."""
    from tenantnet.reproduce import trinity_shuffle as ts
    with htsim_scheduled():
        pts = ts.fig8_points(FIG8_SCALE)
    return pts, ts.fig8_compare(pts, FIG8_SCALE)


@pytest.fixture(scope="session")
def trinity_tables_scaled() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables II-IV's points at `TABLES_QUERIES` and their comparison with the paper."""
    from tenantnet.reproduce import trinity_tables as tt
    pts = tt.table_points(queries=TABLES_QUERIES)
    return pts, tt.tables_compare(pts)


@pytest.fixture(scope="session")
def trinity_fig9_scaled() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 9's summary at `FIG9_QUERIES` and its comparison with the paper."""
    from tenantnet.reproduce import trinity_memcached as tm
    summary = tm.fig9_summary(tm.fig9_points(queries=FIG9_QUERIES))
    return summary, tm.fig9_compare(summary)
