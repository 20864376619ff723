"""The audit table of docs/security.md covers every field a bundle may set (issue 20, item 1).

The fields are enumerated from the code that reads bundles — the manifest models, each
track's ``[<track>]`` submission model, the column specifications its readers check, the
run log's field domains — never from a hand-written list, so a field added to a reader
without a row (field, owner, why) in the table fails here.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "security.md"
OWNERS = ("bundle", "benchmark", "reported")


class Field(NamedTuple):
    """One field a bundle may set: its track (or ``all``), where it lives, its name."""

    track: str
    where: tuple[str, ...]  # any of these spellings names its container ("" = the manifest)
    name: str


def _names(columns: Any) -> list[str]:
    return [c.name for c in columns]


def code_fields() -> list[Field]:
    """Every field of every track's bundle schema, from the readers' own definitions."""
    from pipeline.manifest import SubmissionManifest
    from pipeline.tracks import get_track, track_names
    from pipeline.tracks.aiq.bundle import SAMPLE_COLUMNS, SAMPLES
    from pipeline.tracks.aiq.settings import LOG, LOG_DOMAINS
    from pipeline.tracks.generality.data import AGENT_COLUMNS, response_columns
    from pipeline.tracks.generality.settings import AGENTS, RESPONSES, BenchmarkSettings
    from pipeline.tracks.gindex.settings import (
        COMPUTE,
        CURRICULUM,
        CURRICULUM_SAMPLES,
        DIVERGENCES,
        PROGRAMS,
    )
    from pipeline.tracks.gindex.validate import (
        COMPUTE_COLUMNS,
        CURRICULUM_COLUMNS,
        DIVERGENCE_COLUMNS,
    )
    from pipeline.tracks.similarity.runs import RUNS_FILE, RunRow

    out: list[Field] = []
    for name, info in SubmissionManifest.model_fields.items():
        sub = getattr(info.annotation, "model_fields", None)
        if sub is None:  # an optional sub-model: Optional[Model]
            args = [a for a in getattr(info.annotation, "__args__", ()) if a is not type(None)]
            sub = getattr(args[0], "model_fields", None) if args else None
        if sub:
            out += [Field("all", ("",), f"{name}.{k}") for k in sub]
        else:
            out.append(Field("all", ("",), name))
    for track in track_names():
        model: Any = get_track(track).submission_settings
        out += [Field(track, (f"[{track}]", f"{track}."), k) for k in model.model_fields]
    gen = BenchmarkSettings()
    out += [Field("generality", (RESPONSES,), n) for n in _names(response_columns(gen))]
    out += [Field("generality", (AGENTS,), n) for n in _names(AGENT_COLUMNS)]
    out += [Field("aiq", (SAMPLES,), n) for n in _names(SAMPLE_COLUMNS)]
    out += [Field("aiq", (LOG,), n) for n in LOG_DOMAINS]
    out += [Field("aiq", (LOG,), "[result]"), Field("aiq", (LOG,), "[training]")]
    out += [Field("gindex", (CURRICULUM,), n) for n in _names(CURRICULUM_COLUMNS)]
    out += [Field("gindex", (COMPUTE,), n) for n in _names(COMPUTE_COLUMNS)]
    out += [Field("gindex", (DIVERGENCES,), n) for n in _names(DIVERGENCE_COLUMNS)]
    out += [Field("gindex", (PROGRAMS,), f"{PROGRAMS}<task>.json"),
            Field("gindex", (CURRICULUM_SAMPLES,), f"{CURRICULUM_SAMPLES}<domain>.jsonl")]
    out += [Field("similarity", (RUNS_FILE,), f.name) for f in dataclasses.fields(RunRow)]
    return out


class Row(NamedTuple):
    track: str
    field: str
    owner: str
    why: str


def audit_rows() -> list[Row]:
    """The rows of the table under "## Audit" in docs/security.md."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Audit")
    end = text.index("\n## ", start + 1)
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") \
            else []  # fmt: skip
        if len(cells) != 4 or cells[0] in ("track", "") or set(cells[0]) <= {"-", ":"}:
            continue
        rows.append(Row(*cells))
    return rows


def _spans(cell: str) -> set[str]:
    """Every code span of a cell and every word inside one."""
    spans = set(re.findall(r"`([^`]+)`", cell))
    words = {w for s in spans for w in re.split(r"[\s,()]+", s) if w}
    return spans | words


def covered(field: Field, rows: list[Row]) -> bool:
    for r in rows:
        if r.track not in (field.track, "all"):
            continue
        spans = _spans(r.field)
        if field.name not in spans and field.name not in r.field:
            continue
        if "" in field.where or any(w in r.field for w in field.where):
            return True
    return False


def test_every_bundle_field_has_a_row_with_owner_and_why() -> None:
    rows = audit_rows()
    assert len(rows) > 20
    for r in rows:
        assert r.owner.split()[0].strip(",") in OWNERS, r
        assert len(r.why) > 10, r
    missing = [f for f in code_fields() if not covered(f, rows)]
    assert not missing, "docs/security.md, ## Audit: add a row (field, owner, why) for " + \
        ", ".join(f"{f.track} {f.where[0]} {f.name}".replace("  ", " ") for f in missing)


@pytest.mark.parametrize("name", ["made_up_field", "programs/<task>.csv"])
def test_a_field_without_a_row_is_found(name: str) -> None:
    """The check can fail: a field no row names is reported."""
    assert not covered(Field("gindex", ("[gindex]", "gindex."), name), audit_rows())
