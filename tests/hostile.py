"""The hostile-input harness: a base tree of three small benchmarks and a store ingested from it.

Each hostile case copies the base tree and store, applies one attack and runs ``ingest`` (which
validates first). The case then asserts the exact problem (file, field, message), that the
attacked bundle was rejected, that the store holds exactly what it held before, and that no
file changed outside the store folder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.ingest import IngestReport, ingest
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[1]
GOOD = Path(__file__).parent / "fixtures" / "good"
MAYA = ROOT / "submissions" / "maya-fbp-16"
GEN, SIM, GIX = "gen-mini", "sim-mini", "maya-fbp-16"


def build_base(dest: Path) -> Path:
    """Write the base submissions tree: gen-mini, sim-mini and a two-bundle copy of maya-fbp-16.

    ``maya-fbp-16/g-rep`` is a reported bundle (a copy of gpt2-345m-1); ``g-ver`` a verified
    one whose programs are all empty (``[]``).
    """
    subs = dest / "submissions"
    shutil.copytree(GOOD, subs)
    g = subs / GIX
    g.mkdir()
    shutil.copy(MAYA / "benchmark.toml", g / "benchmark.toml")
    shutil.copytree(MAYA / "reference", g / "reference")
    shutil.copytree(MAYA / "gpt2-345m-1", g / "g-rep")
    ver = g / "g-ver"
    ver.mkdir()
    for name in ("curriculum.csv", "compute.csv"):
        shutil.copy(MAYA / "gpt2-345m-1" / name, ver / name)
    text = (MAYA / "gpt2-345m-1" / "submission.toml").read_text(encoding="utf-8")
    text = text.replace('name = "GPT2-345M"', 'name = "Verified Bot"')
    text = text.replace("average_divergence = 0.4525163213861693\n", "")
    (ver / "submission.toml").write_text(text, encoding="utf-8")
    (ver / "programs").mkdir()
    for task in sorted((g / "reference" / "domains").glob("*/*.json")):
        (ver / "programs" / task.name).write_text("[]\n", encoding="utf-8")
    return subs


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace ``old`` by ``new`` in a text file (the fixture must contain ``old``)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture drift: {old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def append(path: Path, text: str) -> None:
    """Append text to a file."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def store_state(db: Path) -> list[tuple[object, ...]]:
    """Everything ingest may write, in a stable order."""
    with open_store(db, read_only=True) as s:
        rows: list[tuple[object, ...]] = []
        for sql in ("select 'b', id, content_hash, current from benchmarks order by all",
                    "select benchmark, id, content_hash, current from bundles order by all",
                    "select 'f', content_hash, path, sha256 from bundle_files order by all",
                    "select 'r', name, date, notes from releases order by all"):
            rows += s.query(sql)[1]
        return rows


def tree_state(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Path → (size, mtime_ns) of every file and folder below ``root`` except ``skip``."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip or skip in here.parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = here / name
            st = p.lstat()
            out[p.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


@dataclass(frozen=True)
class Hostile:
    """One attack and the exact problem it must produce.

    ``file`` must be a substring of the problem's file, ``field`` equal to (or, ending in
    ``*``, a prefix of) its field, ``message`` a substring of its message. ``rejected`` is
    the ``benchmark/bundle`` that must not be ingested.
    """

    name: str
    mutate: Callable[[Path], None]
    file: str
    field: str
    message: str
    rejected: str


def matches(case: Hostile, file: str, field: str, message: str) -> bool:
    """Whether a problem is the one the case expects."""
    ok_field = field.startswith(case.field[:-1]) if case.field.endswith("*") else \
        field == case.field
    return case.file in file and ok_field and case.message in message


def _base_state(db: Path) -> list[tuple[object, ...]]:
    """:func:`store_state` of a base store, kept while its file is unchanged."""
    st = db.stat()
    return _base_state_of(str(db), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=4)
def _base_state_of(db: str, mtime_ns: int, size: int) -> list[tuple[object, ...]]:
    return store_state(Path(db))


def run_case(case: Hostile, base: Path, base_db: Path, work: Path) -> IngestReport:
    """Apply ``case`` to a copy of the base tree and ingest it; check that nothing changed."""
    shutil.copytree(base, work / "submissions", symlinks=True)
    db = work / "store" / "g.duckdb"
    db.parent.mkdir(parents=True)
    shutil.copy(base_db, db)
    case.mutate(work / "submissions")
    # The copy holds the base store's bytes, so its state is the base's: read once per base
    # file (opening DuckDB three times a case was a third of each case's time).
    before_store = _base_state(base_db)
    before_tree = tree_state(work, db.parent)
    with open_store(db) as s:
        report = ingest(s, [work / "submissions"])
    assert tree_state(work, db.parent) == before_tree, "a file outside the store changed"
    assert store_state(db) == before_store, "the store changed"
    bench, _, bundle = case.rejected.partition("/")
    statuses = {(o.benchmark, o.bundle): o.status for o in report.outcomes}
    if bundle:
        assert statuses.get((bench, bundle)) == "rejected", statuses
    else:
        assert all(st == "rejected" for (b, _), st in statuses.items() if b == bench), statuses
    return report
