"""docs/schema.md is complete and true: its metric table, its tables and views, its examples.

The SQL examples name gmeter's own boards, so they run against the DuckDB file of a built site:
``$GMETER_SCHEMA_DB`` (CI sets it to ``public/data/gmeter.duckdb`` after ``make site``), else
that file when it exists at the current schema version. Everything else runs on a synthetic
store.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from site_fixtures import make_store

from pipeline.store import CURRENT, MIGRATIONS, open_store
from pipeline.tracks import all_metrics, get_track, track_names

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DOC.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _statements() -> list[str]:
    blocks = re.findall(r"^```sql\n(.*?)^```", _section("Examples"), re.M | re.S)
    assert blocks
    out = []
    for block in blocks:
        text = "\n".join(ln for ln in block.splitlines() if not ln.strip().startswith("--"))
        out += [s.strip() for s in text.split(";") if s.strip()]
    return out


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield make_store(tmp_path_factory.mktemp("schema") / "store.duckdb")


def test_the_metric_table_lists_every_metric_of_every_track() -> None:
    rows = re.findall(r"^\| (\w+) \| `(\w+)`( \(primary\))? \| (\S+) \|", _section("Metrics"),
                      re.M)
    documented = {(track, name) for track, name, _, _ in rows}
    assert documented == {(m.track, m.name) for m in all_metrics().values()}
    primary = {track: name for track, name, flag, _ in rows if flag}
    assert primary == {t: get_track(t).primary_metric for t in track_names()}
    better = {name: b for _, name, _, b in rows}
    for m in all_metrics().values():
        assert better[m.name] == (m.direction if m.direction in ("higher", "lower") else "—")


def test_every_table_and_view_is_documented(store_path: Path) -> None:
    with open_store(store_path, read_only=True) as store:
        names = store.table_names()
    assert {"leaderboard", "score_history", "release_changes", "scores"} <= set(names)
    for name in names:
        assert f"`{name}`" in DOC, f"docs/schema.md does not describe {name}"
    assert "metric registry" not in DOC


def _versions(store_path: Path) -> list[str]:
    with open_store(store_path, read_only=True) as store:
        rows = store.con.execute("select name from releases order by date, name").fetchall()
    return [r[0] for r in rows] + [CURRENT]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def test_release_changes_is_every_difference_between_consecutive_versions(
    store_path: Path,
) -> None:
    versions = _versions(store_path)
    assert len(versions) >= 3
    with open_store(store_path, read_only=True) as store:
        scores = store.con.execute(
            "select release, benchmark, bundle, agent, metric, value, rank from scores"
        ).fetchall()
        view = store.con.execute(
            "select release, previous, benchmark, bundle, agent, metric, change, "
            "previous_value, value, previous_rank, rank from release_changes"
        ).fetchall()
    by_version: dict[str, dict[tuple[str, ...], tuple[float | None, int | None]]] = {}
    for rel, bm, bu, ag, me, val, rank in scores:
        by_version.setdefault(rel, {})[(bm, bu, ag, me)] = (val, rank)
    expected = set()
    for prev, rel in pairwise(versions):
        old, new = by_version.get(prev, {}), by_version.get(rel, {})
        for key in set(old) | set(new):
            if key not in old:
                kind = "new"
            elif key not in new:
                kind = "removed"
            elif not _same(old[key][0], new[key][0]):
                kind = "changed"
            elif old[key][1] != new[key][1]:
                kind = "moved"
            else:
                continue
            expected.add((rel, prev, *key, kind))
    got = {row[:7] for row in view}
    assert len(got) == len(view)
    assert got == expected
    assert {row[6] for row in view} >= {"new", "changed"}


def _published_db() -> Path | None:
    env = os.environ.get("GMETER_SCHEMA_DB", "").strip()
    if env:
        assert Path(env).is_file(), f"GMETER_SCHEMA_DB={env} does not exist"
        return Path(env)
    path = ROOT / "public" / "data" / "gmeter.duckdb"
    if not path.is_file():
        return None
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        have = con.execute("select max(version) from schema_migrations").fetchone()
    finally:
        con.close()
    return path if have and have[0] == MIGRATIONS[-1][0] else None


@pytest.mark.parametrize("sql", _statements())
def test_every_example_returns_rows_from_the_published_file(sql: str) -> None:
    db = _published_db()
    if db is None:
        pytest.skip("no built site at the current schema version (CI runs this after make site)")
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    assert rows, f"no rows from:\n{sql}"
