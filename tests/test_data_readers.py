"""The published CSV files can be read as they were meant: datapackage.json gives every type.

Release names such as ``2026.11`` look like numbers to readers that guess types; the sidecar
says which columns are text. The pandas and polars recipes of docs/schema.md run when those
libraries are installed (they are not gmeter dependencies).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_fixtures import make_store

from pipeline.site.exports import DATAPACKAGE, export_data
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    root = tmp_path_factory.mktemp("data")
    db = make_store(root / "store.duckdb")
    with open_store(db, read_only=True) as store:
        export_data(store, root / "data")
    yield root / "data", db


def _package(folder: Path) -> dict:
    return json.loads((folder / DATAPACKAGE).read_text(encoding="utf-8"))


def test_every_csv_is_described_column_by_column(data: tuple[Path, Path]) -> None:
    folder, db = data
    resources = {r["path"]: r for r in _package(folder)["resources"]}
    csvs = sorted(p.name for p in folder.glob("*.csv"))
    assert csvs and sorted(resources) == csvs
    with open_store(db, read_only=True) as store:
        for path, res in resources.items():
            with open(folder / path, encoding="utf-8", newline="") as fh:
                header = next(csv.reader(fh))
            fields = res["schema"]["fields"]
            assert [f["name"] for f in fields] == header, path
            types = dict(store.column_types(path.removesuffix(".csv")))
            for f in fields:
                if types[f["name"]] == "VARCHAR":
                    assert f["type"] == "string", (path, f)


def test_release_columns_are_text(data: tuple[Path, Path]) -> None:
    folder, _ = data
    for res in _package(folder)["resources"]:
        for f in res["schema"]["fields"]:
            if f["name"] in ("release", "previous") or (res["path"] == "releases.csv"
                                                        and f["name"] == "name"):
                assert f["type"] == "string", (res["path"], f)


def _store_releases(db: Path) -> set[str]:
    with open_store(db, read_only=True) as store:
        rows = store.con.execute("select distinct release from score_history").fetchall()
    return {r[0] for r in rows}


def test_release_cells_are_the_store_names_character_for_character(
    data: tuple[Path, Path],
) -> None:
    folder, db = data
    with open(folder / "score_history.csv", encoding="utf-8", newline="") as fh:
        cells = {row["release"] for row in csv.DictReader(fh)}
    assert cells == _store_releases(db)


def _recipe(reader: str) -> str:
    doc = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", doc, re.M | re.S)
    (code,) = [b for b in blocks if f"import {reader}" in b]
    return code


@pytest.mark.parametrize("reader", ["pandas", "polars"])
def test_the_documented_recipe_reads_releases_as_text(
    reader: str, data: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip(reader)
    folder, db = data
    monkeypatch.chdir(folder)
    scope: dict = {}
    exec(compile(_recipe(reader), f"docs/schema.md ({reader})", "exec"), scope)
    values = list(scope["history"]["release"])
    assert all(isinstance(v, str) for v in values)
    assert set(values) == _store_releases(db)
