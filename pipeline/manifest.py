"""Typed manifests: ``benchmark.toml`` and ``submission.toml``, and their JSON Schema.

The generic fields are defined here; each track adds a section named after it (``[gindex]``
for the g-index track, and so on) validated by the track's own settings model.
Parsing never stops at the first problem: every pydantic error becomes a
:class:`~pipeline.errors.Problem` naming the file and the dotted field.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.errors import Problem
from pipeline.limits import bad_name, parse_toml
from pipeline.tracks import get_track, track_names

if TYPE_CHECKING:
    TrackName = str
else:
    # The tracks are discovered (pipeline.tracks), never listed here; as a Literal, the
    # schema's enum and pydantic's message name them in their listed order.
    TrackName = Literal[track_names()]

ID_PATTERN = r"^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9_-])?$"
"""Benchmark and bundle ids: lower-case ASCII, at most 64 characters, no trailing '.'."""
RESERVED_IDS = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)")
"""Windows device names: a folder so named cannot be checked out on Windows."""


def bad_id(name: str) -> str:
    """Why ``name`` is not a valid benchmark or bundle id (``""`` when it is)."""
    if not re.match(ID_PATTERN, name):
        return (f"{name!r} is not a valid id (lower-case letters, digits, '.', '_', '-'; "
                "at most 64; not ending in '.')")
    if RESERVED_IDS.match(name):
        return f"{name!r} is a reserved device name on Windows"
    return ""
VERSION_PATTERN = r"^[0-9]+(\.[0-9]+){0,2}([-+][0-9A-Za-z.-]+)?$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Origin(_Strict):
    """Where data came from (paper, repository, licence notes)."""

    paper: str = Field("", description="Citation of the paper the data belongs to.")
    url: str = Field("", description="Where the original data or code is published.")
    notes: str = Field("", description="How the files were derived from the original.")
    licence_note: str = Field("", description="Licence and permission remarks for the data.")


class BenchmarkManifest(_Strict):
    """``submissions/<id>/benchmark.toml`` without its track section."""

    id: str = Field(pattern=ID_PATTERN, description="Equals the folder name.")
    title: str = Field(min_length=1, max_length=200, description="Human title.")
    track: TrackName = Field(
        description="Which measure this benchmark uses."
    )
    version: str = Field(
        pattern=VERSION_PATTERN,
        description="Benchmark version; entries scored on an older version are marked stale.",
    )
    description: str = Field(min_length=1, max_length=20000, description="What it measures.")
    licence: str = Field(min_length=1, max_length=200, description="Licence of the benchmark data.")
    created: dt.date = Field(description="When the benchmark was first published (YYYY-MM-DD).")
    origin: Origin | None = Field(None, description="Provenance of the benchmark's data.")


class SystemInfo(_Strict):
    """The system a bundle reports on."""

    name: str = Field(min_length=1, max_length=200, description="Display name of the system.")
    version: str = Field("", max_length=100, description="System version.")
    organisation: str = Field("", max_length=200, description="Who built it.")
    url: str = Field("", max_length=500, description="Paper or home page (http/https).")


class SubmissionManifest(_Strict):
    """``submissions/<benchmark>/<bundle>/submission.toml`` without its track section."""

    submitted: dt.date = Field(description="Submission date (YYYY-MM-DD), not in the future.")
    contact: str = Field(min_length=1, max_length=300, description="Name and e-mail or URL.")
    licence: str = Field(min_length=1, max_length=200, description="Licence of the bundle's files.")
    description: str = Field("", max_length=20000, description="What was run and how.")
    system: SystemInfo = Field(description="The system the bundle reports on.")
    origin: Origin | None = Field(None, description="Provenance, when the data is republished.")


def _fix_for(err: Mapping[str, Any]) -> str:
    kind = str(err.get("type", ""))
    if kind == "missing":
        return "add this field"
    if kind == "extra_forbidden":
        return "remove it, or check its spelling against `gmeter schema`"
    if kind.startswith("string_pattern"):
        return "use lower-case letters, digits, '.', '_' and '-' (versions like 1.2.0)"
    if "date" in kind:
        return "write a date as YYYY-MM-DD without quotes"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return "give a value of the right type (see `gmeter schema`)"
    if kind.startswith("literal"):
        return "use one of the allowed values"
    return "correct the value"


def pydantic_problems(
    file: str, exc: ValidationError, prefix: str = ""
) -> list[Problem]:
    """Turn every error of a pydantic validation into a :class:`Problem`."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or "-")
        out.append(Problem(file, field, str(err.get("msg", "invalid")), _fix_for(err)))
    return out


NAME_FIELDS = ("system.name", "system.organisation", "system.version")
"""Manifest fields shown as names on the site: :func:`pipeline.limits.bad_name` applies."""


def _name_problems(file: str, raw: dict[str, Any], fields: tuple[str, ...]) -> list[Problem]:
    out = []
    for dotted in fields:
        value: Any = raw
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            why = bad_name(value)
            if why:
                out.append(Problem(file, dotted, why,
                                   "write the name in plain characters (no invisible or "
                                   "direction-changing ones)"))
    return out


_PATH_KEYS = ("file", "dir", "path", "folder")


def _unsafe_paths(file: str, prefix: str, value: Any) -> list[Problem]:
    """Settings that name files must stay inside the folder: no absolute paths, no ``..``."""
    out: list[Problem] = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = f"{prefix}.{k}"
            if isinstance(v, str) and any(t in str(k).lower() for t in _PATH_KEYS):
                parts = v.replace("\\", "/").split("/")
                if v.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                    out.append(Problem(file, key, f"path {v!r} leaves the folder",
                                       "give a path relative to the folder, without '..'"))
            else:
                out += _unsafe_paths(file, key, v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _unsafe_paths(file, f"{prefix}[{i}]", v)
    return out


def _placeholders(file: str, value: Any, prefix: str = "") -> list[Problem]:
    """``TODO`` markers left by ``gmeter new`` are problems until filled in."""
    out: list[Problem] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _placeholders(file, v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _placeholders(file, v, f"{prefix}[{i}]")
    elif isinstance(value, str) and value.lstrip().startswith("TODO"):
        out.append(Problem(file, prefix or "-", "is still a TODO placeholder",
                           "replace it with the real value"))
    return out


def _track_section(
    file: str, raw: dict[str, Any], track: str | None, which: str
) -> tuple[dict[str, Any], list[Problem]]:
    """Split off and validate the track section of a manifest."""
    problems: list[Problem] = []
    for name in track_names():
        if name in raw and name != track:
            problems.append(
                Problem(file, name, f"section [{name}] does not belong to a {track} benchmark",
                        f"remove it (this benchmark's section is [{track}])")
            )
    section = raw.get(track, {}) if track else {}
    if not isinstance(section, dict):
        return {}, [*problems, Problem(file, str(track), "must be a table", f"write [{track}]")]
    if track is None:
        return {}, problems
    try:
        spec = get_track(track)
    except Exception:  # a track module not importable is a gmeter bug, not the user's
        return dict(section), problems
    problems += _unsafe_paths(file, track, section)
    if which == "submission":
        owned, section = owned_rules(file, track, section)
        problems += owned
    model: Any = spec.benchmark_settings if which == "benchmark" else spec.submission_settings
    try:
        settings = model.model_validate(section).model_dump(mode="json")
    except ValidationError as exc:
        return {}, [*problems, *pydantic_problems(file, exc, prefix=track)]
    return settings, problems


def owned_rules(
    file: str, track: str, section: Mapping[str, Any]
) -> tuple[list[Problem], dict[str, Any]]:
    """Refuse every rule of the benchmark written into a bundle's ``[<track>]`` section.

    A bundle carries observations; the benchmark owns every rule that changes a score
    (issue 20): a key of the track's benchmark settings that its submission settings do not
    have is one error naming ``<track>.<key>`` and saying who owns it, whatever its value.
    Returns the problems and the section without those keys (so the model's own checks do
    not report them twice).
    """
    spec = get_track(track)
    bench: Any = spec.benchmark_settings
    bundle: Any = spec.submission_settings
    rules = set(bench.model_fields) - set(bundle.model_fields)
    problems = [
        Problem(
            file,
            f"{track}.{key}",
            "is a rule of the benchmark, not an observation: a bundle cannot set it (the "
            "benchmark owns every rule that changes a score)",
            f"remove it from submission.toml; the benchmark's [{track}] section in "
            "benchmark.toml sets it for every bundle",
        )
        for key in section
        if key in rules
    ]
    return problems, {k: v for k, v in section.items() if k not in rules}


def url_problems(file: str, raw: Mapping[str, Any]) -> list[Problem]:
    """Every URL of a manifest, wherever it is: a key ``url`` or ``*_url`` at any depth.

    A link a submitter chooses is shown to visitors: only absolute http(s) addresses without
    credentials, at most :data:`pipeline.untrusted.MAX_URL_CHARS` characters
    (:func:`pipeline.untrusted.url_problem`); never ``javascript:`` or ``data:``.
    """
    from pipeline.limits import walk
    from pipeline.untrusted import url_problem

    out = []
    for path, leaf in walk(raw):
        key = path.rsplit(".", 1)[-1].split("[", 1)[0].lower()
        if not (key == "url" or key.endswith("_url")) or not isinstance(leaf, str) or not leaf:
            continue
        why = url_problem(leaf)
        if why:
            out.append(Problem(file, path, f"{why}",
                               "give a full http:// or https:// address, or leave it empty"))
    return out


def load_benchmark_manifest(
    file: str, data: bytes, folder_name: str
) -> tuple[dict[str, Any] | None, dict[str, Any], list[Problem]]:
    """Parse and check a ``benchmark.toml``.

    Returns
    -------
    manifest, settings, problems
        The raw manifest (``None`` when it does not parse), the validated track section and
        every problem found.
    """
    raw, problems = parse_toml(file, data)
    if raw is None:
        return None, {}, problems
    problems += _placeholders(file, raw)
    problems += _name_problems(file, raw, ("title",))
    problems += url_problems(file, raw)
    generic = {k: v for k, v in raw.items() if k not in track_names()}
    track = raw.get("track") if raw.get("track") in track_names() else None
    try:
        BenchmarkManifest.model_validate(generic)
    except ValidationError as exc:
        problems += pydantic_problems(file, exc)
    if bad_id(folder_name):
        problems.append(Problem(file, "id", bad_id(folder_name),
                                "rename the benchmark folder (and its id)"))
    if isinstance(raw.get("id"), str) and raw["id"] != folder_name:
        problems.append(
            Problem(file, "id", f"is {raw['id']!r} but the folder is {folder_name!r}",
                    "make the id equal the folder name")
        )
    settings, more = _track_section(file, raw, track, "benchmark")
    return raw, settings, problems + more


def load_submission_manifest(
    file: str, data: bytes, track: str | None, today: dt.date | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any], list[Problem]]:
    """Parse and check a ``submission.toml`` for a benchmark of ``track``."""
    raw, problems = parse_toml(file, data)
    if raw is None:
        return None, {}, problems
    problems += _placeholders(file, raw)
    generic = {k: v for k, v in raw.items() if k not in track_names()}
    try:
        SubmissionManifest.model_validate(generic)
    except ValidationError as exc:
        problems += pydantic_problems(file, exc)
    today = today or dt.date.today()
    submitted = raw.get("submitted")
    if isinstance(submitted, dt.date) and submitted > today:
        problems.append(
            Problem(file, "submitted", f"{submitted} is in the future",
                    "give the date the results were produced")
        )
    problems += _name_problems(file, raw, NAME_FIELDS)
    problems += url_problems(file, raw)
    settings, more = _track_section(file, raw, track, "submission")
    return raw, settings, problems + more


def json_schema(which: str) -> dict[str, Any]:
    """The published JSON Schema of ``benchmark`` or ``submission`` manifests.

    The schema holds the generic fields and, as optional properties, each track's section;
    only the section named by the benchmark's ``track`` may appear.
    """
    model: type[BaseModel] = BenchmarkManifest if which == "benchmark" else SubmissionManifest
    schema = model.model_json_schema()
    defs = schema.setdefault("$defs", {})
    for name in track_names():
        try:
            spec = get_track(name)
        except Exception:
            continue
        section: Any = spec.benchmark_settings if which == "benchmark" else spec.submission_settings
        sub = section.model_json_schema()
        defs.update(sub.pop("$defs", {}))
        schema["properties"][name] = {
            **sub,
            "description": f"Settings of the {name} track (only in {name} benchmarks).",
        }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"gmeter {which}.toml"
    return schema
