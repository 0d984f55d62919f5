"""Every reproduction's comparison with its paper has one shape, and the documentation's
table of claims (docs/guide/claims.md) is what the stored comparisons give."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from tenantnet.reproduce import REPRODUCTIONS
from tenantnet.reproduce.catalog import ITEMS, PAPERS
from tenantnet.reproduce.claims import COLUMNS, check, claim, frame, status
from tenantnet.reproduce.claims_page import csv_name, render

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "claims"


def test_a_status_follows_the_verdict_and_names_its_reason() -> None:
    assert status(True) == "reproduced"
    assert status(None) == "reported"
    assert status(False) == "not reproduced: cause not found"
    assert status(False, why_not="a lost ACK") == "not reproduced: a lost ACK"
    assert status(False, differs="the paper is silent") == "differs: the paper is silent"
    # a reason given to a claim that holds is not shown
    assert status(True, why_not="x", differs="y") == "reproduced"


def test_rows_put_the_key_columns_first_and_the_paper_apart_from_our_bound() -> None:
    df = frame([claim("VM1, Gb/s", 4.1, paper="4", expected="4 ± 5 %", ok=True, phase=1),
                claim("VM2, Gb/s", 2.0, expected=">= 3", ok=False, phase=2,
                      why_not="its ACKs are dropped")])
    assert list(df.columns) == ["phase", *COLUMNS]
    assert df["paper"].tolist() == ["4", ""]
    assert df["status"].tolist() == ["reproduced", "not reproduced: its ACKs are dropped"]
    check(df)
    with pytest.raises(ValueError, match="ends with"):
        check(df.drop(columns="expected"))
    bad = df.copy()
    bad.loc[0, "status"] = "fine"
    with pytest.raises(ValueError, match="status 'fine'"):
        check(bad)


def test_the_catalog_covers_every_reproduction_and_accounts_for_every_item() -> None:
    named = {n for i in ITEMS for n in i.reproductions}
    assert named == set(REPRODUCTIONS), set(REPRODUCTIONS) ^ named
    assert {i.paper for i in ITEMS} == set(PAPERS)
    for i in ITEMS:
        # an item is checked by a reproduction, or says why not
        assert bool(i.reproductions) != bool(i.why_not), i
        assert not i.why_not or i.why_not.startswith(("not applicable: ",
                                                      "not reproduced yet: ")), i
    # no item twice
    assert len({(i.paper, i.item) for i in ITEMS}) == len(ITEMS)


@pytest.mark.parametrize("name", sorted(REPRODUCTIONS))
def test_every_stored_comparison_has_the_shape(name: str) -> None:
    df = pd.read_csv(STORED / csv_name(name), dtype=str, keep_default_na=False)
    check(df)
    for _, r in df.iterrows():
        # a verdict and its status agree
        ok = {"True": True, "False": False, "": None}[r["ok"]]
        want: str | tuple[str, ...] = ("reported" if ok is None else "reproduced" if ok
                                       else ("not reproduced", "differs"))
        assert r["status"].startswith(want), r.to_dict()


def test_the_page_is_what_the_stored_comparisons_give() -> None:
    page = (ROOT / "docs" / "guide" / "claims.md").read_text(encoding="utf-8")
    assert page == render(STORED), ("docs/guide/claims.md is out of date: "
                                    "python scripts/claims_table.py --from DIR")
    # every stored table is on the page, each of its rows once
    for name in REPRODUCTIONS:
        with (STORED / csv_name(name)).open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert f"### `{name}`" in page
        assert rows, name
