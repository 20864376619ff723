"""Checks for every track.

Resubmissions, near-duplicates, copied columns, dates, and what a pull request may touch
(other submitters' bundles, the benchmark itself, releases, code).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from pipeline.bundles import RELEASES_DIR
from pipeline.inputs import BundleInput
from pipeline.tracks.review import (
    MANIFEST,
    Finding,
    IntegrityContext,
    PullRequestContext,
    agent_names,
    data_files,
    integrity_check,
    listing,
    plural,
    read_csv,
    same_submitter,
    sha,
    to_date,
    to_float,
)

NEAR_DUPLICATE = 0.9
"""Share of a bundle's result files identical to another bundle's that makes a near-duplicate."""
MIN_COLUMN_VALUES = 5
"""A numeric column shorter than this is never called copied (too little evidence)."""
NEAR_COLUMN_VALUES = 10
"""Fewest fractional values for a column to be called an edited copy of another."""


def _label(ctx: IntegrityContext, bundle: BundleInput) -> str:
    return f"{ctx.benchmark.id}/{bundle.id}"


@integrity_check(
    "resubmission",
    title="Resubmission of published files",
    description="The bundle's content hash (SHA-256 over all its files) equals a bundle already "
    "published — in any benchmark, at any time the store remembers — or another bundle of the "
    "same pull request. The leaderboard binds every score to a content hash, so the same "
    "files cannot become a second entry.",
)
def resubmission(ctx: IntegrityContext) -> Iterator[Finding]:
    """Exact content-hash matches with published bundles or other targets."""
    by_hash: dict[str, list[str]] = {}
    for t in ctx.targets:
        by_hash.setdefault(t.content_hash, []).append(_label(ctx, t))
    for t in ctx.targets:
        own = _label(ctx, t)
        same = sorted(set(ctx.known_hashes.get(t.content_hash, ())) - {own})
        same += sorted(set(by_hash[t.content_hash]) - {own})
        if same:
            yield Finding(
                "error", "resubmission", ctx.where(t), "content hash",
                f"identical to {listing(same)} (content hash {t.content_hash[:12]}): the same "
                "files are already on the leaderboard",
                "remove this copy; to update an entry, edit that bundle's own folder; for a new "
                "run, submit its new result files",
            )


@integrity_check(
    "lookalike-name",
    title="A system name that looks like another's",
    description="The system name, compared with every other bundle's by its confusable "
    "skeleton (NFKC, case folding, Unicode TR 39 confusables, separators ignored). A different "
    "name with the same skeleton (Cyrillic letters, full-width forms, `0` for `O`) is an "
    "error: it impersonates another system. Exactly the name of another bundle's system is a "
    "warning for the reviewer (the same system, or a copied name).",
)
def lookalike_name(ctx: IntegrityContext) -> Iterator[Finding]:
    """Names that impersonate another bundle's system."""
    from pipeline.limits import skeleton

    for t in ctx.targets:
        mine = t.system
        key = skeleton(mine)
        for other in [*ctx.peers, *(x for x in ctx.targets if x.id != t.id)]:
            theirs = other.system
            if skeleton(theirs) != key:
                continue
            if theirs != mine:
                yield Finding(
                    "error", "lookalike-name", ctx.where(t, "submission.toml"), "system.name",
                    f"{mine!r} looks like {theirs!r} of bundle {other.id!r} without being equal",
                    "use your own system's name, in plain letters",
                )
            elif not same_submitter(t, other):
                yield Finding(
                    "warning", "lookalike-name", ctx.where(t, "submission.toml"),
                    "system.name",
                    f"{mine!r} is the system name of bundle {other.id!r}",
                    "fine for a new run of the same system (say so in the description); "
                    "otherwise use your own system's name",
                )
    yield from _agent_lookalikes(ctx)


def _agent_lookalikes(ctx: IntegrityContext) -> Iterator[Finding]:
    """Agent names of the targets against every name on the board (system and agent)."""
    from pipeline.limits import MAX_NAME_CHARS, bad_name, skeleton

    board: dict[str, set[str]] = {}
    for other in [*ctx.peers, *ctx.targets]:
        for n in [other.system, *agent_names(other)]:
            board.setdefault(skeleton(n), set()).add(n)
    for t in ctx.targets:
        for name in agent_names(t):
            why = bad_name(name) or (f"is {len(name)} characters long, over {MAX_NAME_CHARS}"
                                     if len(name) > MAX_NAME_CHARS else "")
            twins = sorted(n for n in board.get(skeleton(name), ()) if n != name)
            if why or twins:
                yield Finding(
                    "error", "lookalike-name", ctx.where(t), f"agent {name[:60]!r}",
                    f"agent name {why}" if why else
                    f"agent {name!r} looks like {', '.join(repr(x) for x in twins[:3])} on "
                    "the board without being equal",
                    "name your agent in plain letters, exactly as elsewhere if it is the same "
                    "agent, or clearly differently",
                )


@integrity_check(
    "near-duplicate",
    title="Near-duplicate of another bundle",
    description=f"At least {NEAR_DUPLICATE:.0%} of the bundle's result files (everything but "
    "submission.toml, compared by SHA-256 whatever their names) are identical to another "
    "bundle's. All of them identical is an error (the same results under a new name), whatever "
    "the contacts say (a `contact` is text anyone can copy); 90 % or more is a warning for the "
    "reviewer.",
)
def near_duplicate(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find result files shared with another bundle of the benchmark."""
    pool = [*ctx.peers, *ctx.targets]
    for t in ctx.targets:
        mine = [sha(d) for d in data_files(t).values() if d.strip()]
        if not mine:
            continue
        for other in pool:
            if other.id == t.id or other.content_hash == t.content_hash:
                continue  # exact copies are the resubmission check's
            theirs = {sha(d) for d in data_files(other).values() if d.strip()}
            shared = sum(h in theirs for h in mine)
            share = shared / len(mine)
            own = same_submitter(t, other)
            if share >= 1.0 and len(theirs) == len(set(mine)):
                yield Finding(
                    "warning" if own else "error", "near-duplicate", ctx.where(t), "-",
                    f"every result file is identical to bundle {other.id!r}'s; only "
                    f"{MANIFEST} differs",
                    "submit results of your own run; to change the description of an entry, "
                    "edit that bundle's submission.toml",
                )
            elif share >= NEAR_DUPLICATE:
                yield Finding(
                    "warning", "near-duplicate", ctx.where(t), "-",
                    f"{shared} of {plural(len(mine), 'result file')} are identical to bundle "
                    f"{other.id!r}'s",
                    "say in the description how this run differs from that one (a maintainer "
                    "will review it); remove files that are not results of this run",
                )


def _numeric_columns(bundle: BundleInput) -> Iterator[tuple[str, str, tuple[float, ...]]]:
    """(path, column, values) of the CSV columns that look like measurements.

    A column qualifies with at least :data:`MIN_COLUMN_VALUES` numbers, all parseable, and
    at least 3 values that are not whole numbers (ids, counts, flags and 0/1 responses are
    identical across bundles by design; fractional measurements are not).
    """
    for path in sorted(bundle.files.files):
        if not path.lower().endswith(".csv"):
            continue
        header, rows = read_csv(bundle.files, path)
        for col in header:
            vals = [to_float(r.get(col)) for r in rows]
            if len(vals) < MIN_COLUMN_VALUES or any(v is None for v in vals):
                continue
            fl = tuple(float(v) for v in vals if v is not None)
            if len({v for v in fl if not v.is_integer()}) < 3:
                continue
            yield path, col, fl


def _near(a: tuple[float, ...], b: tuple[float, ...]) -> int:
    """How many fractional values of ``a`` equal ``b`` at the same position (0 if too few)."""
    informative = [(x, y) for x, y in zip(a, b, strict=True) if not x.is_integer()]
    same = sum(x == y for x, y in informative)
    overall = sum(x == y for x, y in zip(a, b, strict=True))
    ok = len(informative) >= NEAR_COLUMN_VALUES and same >= NEAR_DUPLICATE * len(informative) \
        and overall >= NEAR_DUPLICATE * len(a)
    return same if ok else 0


@integrity_check(
    "copied-column",
    title="Measurements copied from another bundle",
    description="A numeric CSV column of measurements (at least 5 values, at least 3 of them "
    "fractional) is identical, value for value and in the same order, to a column of another "
    "bundle of the benchmark — e.g. the rewards, responses or compute of another run — or "
    f"identical in {NEAR_DUPLICATE:.0%} of its positions (at least {NEAR_COLUMN_VALUES} "
    "fractional values): an edited copy. Independent runs practically never agree to every "
    "digit. An error whatever the contacts say: a `contact` is text anyone can copy, so reusing "
    "one's own measurements (e.g. a control run sharing its baseline) is for a maintainer to "
    "confirm.",
)
def copied_column(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find measurement columns equal (or nearly) to another bundle's, any file or name."""
    index: dict[tuple[float, ...], tuple[str, str, str]] = {}
    by_len: dict[int, list[tuple[str, str, str, tuple[float, ...]]]] = {}
    for peer in [*ctx.peers, *ctx.targets]:
        for path, col, vals in _numeric_columns(peer):
            index.setdefault(vals, (peer.id, path, col))
            by_len.setdefault(len(vals), []).append((peer.id, path, col, vals))
    bundles = {b.id: b for b in [*ctx.peers, *ctx.targets]}
    for t in ctx.targets:
        for path, col, vals in _numeric_columns(t):
            src = index.get(vals)
            if src is not None and src[0] != t.id:
                own = same_submitter(t, bundles[src[0]])
                yield Finding(
                    "warning" if own else "error", "copied-column", ctx.where(t, path),
                    f"column {col}",
                    f"all {len(vals)} values are identical to column {src[2]!r} of bundle "
                    f"{src[0]!r} ({src[1]})" + (", which names the same contact" if own else ""),
                    "fine if you reuse your own measurements on purpose: say so in the "
                    "description" if own else "submit the measurements of your own run; if "
                    "this is a rerun of that bundle, say so in the description",
                )
                continue
            for pid, ppath, pcol, pvals in by_len.get(len(vals), []):
                same = _near(vals, pvals) if pid != t.id else 0
                if same:
                    own = same_submitter(t, bundles[pid])
                    yield Finding(
                        "warning" if own else "error", "copied-column", ctx.where(t, path),
                        f"column {col}",
                        f"{same} of its fractional values are identical, position by "
                        f"position, to column {pcol!r} of bundle {pid!r} ({ppath})"
                        + (", which names the same contact" if own
                           else ": an edited copy of that bundle's results"),
                        "fine if you reuse your own measurements on purpose: say so in the "
                        "description" if own else "submit the measurements of your own run, "
                        "unedited",
                    )
                    break


@integrity_check(
    "dates",
    title="Dates in the future or before the benchmark existed",
    description="The submission date and every date column of the bundle's CSV files (`date`, "
    "`*_date`) must not lie in the future (error) nor before the benchmark's `created` date "
    "(warning), unless the bundle republishes earlier results and says where they come from "
    "in an [origin] section.",
)
def dates(ctx: IntegrityContext) -> Iterator[Finding]:
    """Dates that cannot be true."""
    created = ctx.created
    for t in ctx.targets:
        republished = bool(t.manifest.get("origin"))
        sub = to_date(t.manifest.get("submitted"))
        if sub is not None and created is not None and sub < created and not republished:
            yield Finding(
                "warning", "dates", ctx.where(t, MANIFEST), "submitted",
                f"{sub} is before the benchmark existed ({created})",
                "give the date your results were produced; if you republish older results, "
                "add an [origin] section saying where they were published",
            )
        for path in sorted(p for p in t.files.files if p.lower().endswith(".csv")):
            header, rows = read_csv(t.files, path)
            for col in (c for c in header if c == "date" or c.endswith("_date")):
                days = [(n, to_date(r.get(col))) for n, r in enumerate(rows, start=2)]
                future = [(n, d) for n, d in days if d is not None and d > ctx.today]
                early = [(n, d) for n, d in days if d is not None and created is not None
                         and d < created]
                if future:
                    n, d = future[0]
                    yield Finding(
                        "error", "dates", ctx.where(t, path), f"column {col}",
                        f"{plural(len(future), 'date')} in the future (line {n}: {d})",
                        "give the dates the results were actually obtained",
                    )
                if early and not republished:
                    n, d = early[0]
                    yield Finding(
                        "warning", "dates", ctx.where(t, path), f"column {col}",
                        f"{plural(len(early), 'date')} before the benchmark existed "
                        f"({created}; line {n}: {d})",
                        "correct the dates, or add an [origin] section to submission.toml "
                        "naming where these earlier results were published",
                    )


@integrity_check(
    "foreign-edit",
    title="Edits to an existing bundle",
    description="The pull request modifies or deletes files of a bundle that already existed. "
    "What is touched comes from git's paths alone: no text proves ownership (git author names "
    "and e-mails are whatever a committer types, a `contact` is text anyone can copy). Every "
    "such edit is an error that names the paths and the recorded `contact`, for the "
    "maintainer who asks that owner before merging. Rewriting the `contact` itself (taking "
    "over a bundle) is called out separately.",
)
def foreign_edit(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find changes to bundles that existed at the base, judged by git's paths only."""
    for own in ctx.ownership:
        where = f"{ctx.benchmark.files.label}/{own.bundle}"
        files = listing([f.rsplit("/", 1)[-1] for f in own.files], 4)
        whose = own.contact or "no contact recorded"
        verb = "deletes" if own.kind == "deleted" else "modifies"
        yield Finding(
            "error", "foreign-edit", where, "-",
            f"this pull request {verb} the existing bundle {own.bundle!r} ({files}), whose "
            f"recorded owner is {whose}",
            "if you are the owner, say so in the pull request from the address in `contact` "
            "and a maintainer merges after confirming; otherwise leave the bundle untouched, "
            "put your results in a new folder, or open an issue to correct the data",
        )
        if own.owner_changed:
            yield Finding(
                "error", "foreign-edit", f"{where}/submission.toml", "contact",
                f"rewrites the recorded owner of {own.bundle!r} from {own.contact!r} to "
                f"{own.contact_after!r}",
                "keep the contact; ownership changes go through the maintainers",
            )


@integrity_check(
    "benchmark-change",
    title="Changes to the benchmark itself",
    description="The pull request changes benchmark-owned files (benchmark.toml, reference/). "
    "Every entry is then rescored, so this is for maintainers. If the reference data changed "
    "but `version` did not, entries scored on the old data cannot be told apart: bump the "
    "version, and older entries are marked stale.",
)
def benchmark_change(ctx: IntegrityContext) -> Iterator[Finding]:
    """Benchmark-owned files changed by the pull request."""
    if not ctx.benchmark_changed:
        return
    where = ctx.benchmark.files.where("benchmark.toml")
    base = ctx.base_benchmark
    if base is None:
        yield Finding(
            "info", "benchmark-change", where, "-",
            f"adds a new benchmark {ctx.benchmark.id!r}",
            "a maintainer reviews its licence, origin and settings before merging",
        )
        return
    yield Finding(
        "warning", "benchmark-change", where, "-",
        f"changes the benchmark's own files ({listing(ctx.benchmark_changed, 4)}): every entry "
        "is rescored",
        "benchmark changes are made by maintainers; submit results in a separate pull request",
    )
    reference_changed = any(not p.endswith("/benchmark.toml") for p in ctx.benchmark_changed) \
        or _settings_changed(base, ctx)
    if base.version == ctx.benchmark.version and reference_changed:
        yield Finding(
            "warning", "benchmark-change", where, "version",
            f"the reference data or settings changed but the version is still {base.version}",
            "bump `version` so entries scored on the old data are marked stale",
        )
    elif base.version != ctx.benchmark.version:
        yield Finding(
            "info", "benchmark-change", where, "version",
            f"version {base.version} → {ctx.benchmark.version}: entries scored on "
            f"{base.version} become stale",
            "submitters may rerun on the new version; stale entries stay visible, marked",
        )


def _settings_changed(base: object, ctx: IntegrityContext) -> bool:
    return dict(getattr(base, "settings", {})) != dict(ctx.benchmark.settings)


@integrity_check(
    "mixed-pull-request",
    scope="pull-request",
    title="Results and code in one pull request",
    description="A pull request that adds or changes bundles also changes files outside "
    "submissions/ (code, workflows, docs). Results are checked by gmeter as it is on the base "
    "branch; code changes need a separate review.",
)
def mixed_pull_request(ctx: PullRequestContext) -> Iterator[Finding]:
    """Bundle changes mixed with changes outside ``submissions/``."""
    if ctx.bundle_changes and ctx.outside:
        yield Finding(
            "warning", "mixed-pull-request", "pull request", "-",
            f"also changes {plural(len(ctx.outside), 'file')} outside submissions/: "
            f"{listing(ctx.outside, 4)}",
            "open a separate pull request for code or documentation changes",
        )


@integrity_check(
    "releases-file",
    scope="pull-request",
    title="Edits to recorded releases",
    description="submissions/releases.toml lists immutable releases. Changing or removing a "
    "recorded release is an error; adding one is a maintainer's job (`gmeter release`).",
)
def releases_file(ctx: PullRequestContext) -> Iterator[Finding]:
    """Find changes to ``releases.toml``."""
    if ctx.releases_before == ctx.releases_after:
        return
    before, after = _releases(ctx.releases_before), _releases(ctx.releases_after)
    if before is None or after is None:
        if after is None and ctx.releases_after is not None:
            yield Finding("error", "releases-file", ctx.releases_path, "-", "does not parse",
                          "restore the file from the base branch")
        return
    changed = sorted(n for n in before if n in after and before[n] != after[n])
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    if not (changed or removed or added):
        yield Finding("error", "releases-file", ctx.releases_path, "-",
                      "is edited (the releases it records are the same)",
                      "releases.toml is written by `gmeter release` on main only: restore it "
                      "from the base branch")
    if changed or removed:
        yield Finding(
            "error", "releases-file", ctx.releases_path, "release",
            f"recorded releases are changed or removed: {listing(changed + removed)}",
            "releases are immutable: restore them from the base branch",
        )
    if added:
        yield Finding(
            "error", "releases-file", ctx.releases_path, "release",
            f"adds {plural(len(added), 'release')}: {listing(added)}",
            "releases are cut on main by a maintainer with `gmeter release`; remove them "
            "from the pull request and ask a maintainer",
        )


MAINTAINER_PATHS = ("pipeline/", "cli/", "site_templates/", "tests/", "bench/", ".github/",
                    ".ci/", "Makefile", "pyproject.toml", "setup.py", "setup.cfg",
                    "requirements", "MANIFEST.in", "gmeter.toml", "conftest.py", ".gmeter/",
                    "docs/schemas/")
"""Paths whose change alters gmeter itself or how CI runs it (prefixes of repository paths)."""
CODE_SUFFIXES = (".py", ".pth", ".pyx", ".sh", ".mk")
"""Files that are code wherever they are (a root ``sitecustomize.py`` runs in any Python)."""
TOOL_FILES = ("tox.ini", "noxfile.py", ".pre-commit-config.yaml", "Dockerfile", "GNUmakefile",
              "makefile")
"""Files other tools run from the repository root."""
GIT_CONTROL_FILES = (".gitattributes", ".gitmodules", ".lfsconfig")
"""Files that change what git checks out (conversions, filters, submodules, LFS) wherever they
are: with them, the files a clone shows are no longer the bytes git history holds."""


@integrity_check(
    "maintainer-only",
    scope="pull-request",
    title="Changes to gmeter, CI or recorded releases",
    description="The verdict on a pull request comes from the base branch's gmeter, never the "
    "pull request's own code. A pull request that changes gmeter's code, the Makefile, the "
    "workflows, a frozen release file (`submissions/releases/`), another file of the "
    "submissions folder itself, or a file that changes what git checks out (`.gitattributes`, "
    "`.gitmodules`, `.lfsconfig`) is an error: a maintainer reviews such changes by hand "
    "(`releases.toml` has its own check).",
)
def maintainer_only(ctx: PullRequestContext) -> Iterator[Finding]:
    """Find changes to gmeter's code, CI, the releases file and frozen release files."""
    code = sorted(p for p in ctx.outside if p.startswith(MAINTAINER_PATHS)
                  or p.endswith(CODE_SUFFIXES) or p in TOOL_FILES
                  or p.rsplit("/", 1)[-1] in GIT_CONTROL_FILES)
    if code:
        yield Finding(
            "error", "maintainer-only", "pull request", "-",
            f"changes gmeter's code or CI ({plural(len(code), 'file')}: {listing(code, 6)}); "
            "the check ran the base branch's gmeter, not this code",
            "ask a maintainer to review it; a submission changes only submissions/",
        )
    frozen = sorted(path for _, path in ctx.root_files
                    if path.rsplit("/", 2)[-2:-1] == [RELEASES_DIR])
    own = sorted(path for _, path in ctx.root_files if path not in frozen
                 and path != ctx.releases_path)
    if own:  # releases.toml has its own check (releases-file)
        yield Finding(
            "error", "maintainer-only", listing(own, 3), "-",
            "changes the submissions folder's own files (they belong to no bundle)",
            "a submission adds or changes files in its own bundle folder "
            "(submissions/<benchmark>/<bundle>/) only; ask a maintainer for anything else",
        )
    if frozen:
        yield Finding(
            "error", "maintainer-only", listing(frozen, 3), "-",
            "changes a frozen release file: published numbers never change",
            "restore the files from the base branch; errata are added by a maintainer",
        )


def _releases(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return {}
    from pipeline.limits import parse_toml

    parsed, _ = parse_toml("releases.toml", data)
    if parsed is None:
        return None
    out = {}
    for entry in parsed.get("release", []):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            out[entry["name"]] = repr(sorted(entry.items(), key=lambda kv: kv[0]))
    return out


def _counts(values: list[str]) -> Counter[str]:
    return Counter(values)
