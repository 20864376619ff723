"""Integrity checks of generality response matrices (``responses.csv``: agent, item, value)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pipeline.inputs import BundleInput
from pipeline.tracks.review import (
    Finding,
    IntegrityContext,
    integrity_check,
    listing,
    read_csv,
    same_submitter,
    to_float,
)

RESPONSES = "responses.csv"
MIN_ITEMS = 3
"""Agents compared on fewer items than this are never flagged (too little evidence)."""
MIN_DISTINCT = 5
"""Responses with fewer distinct values (binary, graded) are equal by chance too often."""
MAGNITUDE = 1000.0
"""A raw score this many times larger than every published score on the item is implausible."""

Matrix = dict[str, dict[str, float]]


def responses(bundle: BundleInput) -> Matrix:
    """Agent → item → value of a bundle (rows that do not parse are skipped)."""
    _, rows = read_csv(bundle.files, RESPONSES)
    out: Matrix = {}
    for r in rows:
        v = to_float(r.get("value"))
        agent, item = r.get("agent", ""), r.get("item", "")
        if v is not None and agent and item:
            out.setdefault(agent, {})[item] = v
    return out


def _population(bundles: Sequence[BundleInput]) -> dict[str, tuple[str, dict[str, float]]]:
    """Agent → (bundle id, its responses) over ``bundles`` (first bundle wins)."""
    out: dict[str, tuple[str, dict[str, float]]] = {}
    for b in bundles:
        for agent, row in responses(b).items():
            out.setdefault(agent, (b.id, row))
    return out


@integrity_check(
    "duplicate-agent",
    track="generality",
    title="Duplicated or copied agents",
    description="An agent name already on the benchmark (in another bundle) is an error: each "
    "agent is one leaderboard entry. An agent whose varied responses (at least 5 distinct "
    "values; binary ones coincide by chance) equal another bundle's agent on every shared "
    "item, or on 90 % of at least 10 items (an edited copy), is an error, whatever the "
    "contacts say (a `contact` is text anyone can copy). Identical agents inside one bundle "
    "are a warning.",
)
def duplicate_agent(ctx: IntegrityContext) -> Iterator[Finding]:
    """Find agent names and response vectors seen twice."""
    peers = _population(ctx.peers)
    owners = {b.id: b for b in ctx.peers}
    for t in ctx.targets:
        mine = responses(t)
        where = ctx.where(t, RESPONSES)
        for agent in sorted(set(mine) & set(peers)):
            yield Finding(
                "error", "duplicate-agent", where, f"agent {agent}",
                f"agent {agent!r} is already on the benchmark in bundle {peers[agent][0]!r}",
                "give this run its own agent name (e.g. with a version), or update that "
                "bundle instead of adding a new one",
            )
        groups: dict[tuple[tuple[str, float], ...], list[str]] = {}
        for a in sorted(mine):
            if _varied(mine[a]):
                groups.setdefault(tuple(sorted(mine[a].items())), []).append(a)
        for names in groups.values():
            if len(names) > 1:
                yield Finding(
                    "warning", "duplicate-agent", where, f"agent {names[1]}",
                    f"agents {listing(names)} give identical responses on every item",
                    "remove duplicates, or check that the right results were exported",
                )
        for a in sorted(mine):
            for other, (bid, row) in sorted(peers.items()):
                if other == a:
                    continue
                same = _same(mine[a], row)
                near = 0 if same else _near_copy(mine[a], row)
                if not same and not near:
                    continue
                own = same_submitter(t, owners[bid])
                how = "every shared item" if same else f"{near} of {len(mine[a])} items"
                yield Finding(
                    "warning" if own else "error", "duplicate-agent", where, f"agent {a}",
                    f"responses of {a!r} equal those of {other!r} (bundle {bid!r}) on {how}"
                    + ("" if same else ": an edited copy"),
                    "fine if you reuse your own results on purpose: say so in the description"
                    if own else "submit the responses of your own system, unedited",
                )
                break


def _varied(x: dict[str, float]) -> bool:
    """Enough distinct values for equality to be evidence (binary responses coincide)."""
    return len(x) >= MIN_ITEMS and len(set(x.values())) >= MIN_DISTINCT


def _near_copy(x: dict[str, float], y: dict[str, float]) -> int:
    """Count the items where ``x`` equals ``y``, if it is a near copy (else 0).

    A near copy: equal on at least 90 % of at least 10 shared items whose values are varied
    (at least 5 distinct; binary or graded responses agree by chance).
    """
    common = set(x) & set(y)
    if len(common) < 10 or len({x[i] for i in common}) < MIN_DISTINCT:
        return 0
    same = sum(x[i] == y[i] for i in common)
    return same if same >= 0.9 * len(common) else 0


def _same(x: dict[str, float], y: dict[str, float]) -> bool:
    common = set(x) & set(y)
    return len(common) >= MIN_ITEMS and _varied({i: x[i] for i in common}) and all(
        x[i] == y[i] for i in common)


@integrity_check(
    "impossible-responses",
    track="generality",
    title="Impossible responses",
    description="Responses that no real run can give: in a crosstable (transform opp) the "
    "scores of A against B and B against A must add up to 1; with raw scores (aref, rnk) a "
    f"value more than {MAGNITUDE:g}× every published score on that item is implausible "
    "(a unit or scaling mistake). Values outside the track's range are validation errors.",
)
def impossible_responses(ctx: IntegrityContext) -> Iterator[Finding]:
    """Crosstable asymmetries and absurd magnitudes."""
    transform = str(ctx.benchmark.settings.get("transform", "intrinsic"))
    peers = _population(ctx.peers)
    for t in ctx.targets:
        mine = responses(t)
        where = ctx.where(t, RESPONSES)
        if transform == "opp":
            bad = sorted(
                f"{a} vs {b}" for a, row in mine.items() for b, v in row.items()
                if a < b and b in mine and a in mine[b] and abs(v + mine[b][a] - 1.0) > 1e-9
            )
            if bad:
                yield Finding(
                    "error", "impossible-responses", where, "value",
                    f"scores of a pair do not add up to 1 ({listing(bad)})",
                    "in a crosstable the score of A against B is 1 minus B's against A: "
                    "correct the rows",
                )
        if transform in ("aref", "rnk"):
            best: dict[str, float] = {}
            for _, row in peers.values():
                for item, v in row.items():
                    best[item] = max(best.get(item, 0.0), abs(v))
            for agent, row in sorted(mine.items()):
                odd = sorted(i for i, v in row.items()
                             if best.get(i, 0.0) > 0 and abs(v) > MAGNITUDE * best[i])
                if odd:
                    yield Finding(
                        "warning", "impossible-responses", where, f"agent {agent}",
                        f"scores over {MAGNITUDE:g}× the best published on "
                        f"{listing(odd)}",
                        "check the units and scaling of the scores (e.g. a missing decimal "
                        "point); a reviewer will check the source",
                    )


@integrity_check(
    "beats-reference",
    track="generality",
    title="Better than the reference on every item (review)",
    description="An agent that beats the reference agent (ARef benchmarks) — or, elsewhere, "
    "every published agent — on every item, when no published agent ever did. Not rejected: "
    "flagged so a reviewer looks at the source of a possible breakthrough.",
)
def beats_reference(ctx: IntegrityContext) -> Iterator[Finding]:
    """Agents strictly above the reference on every item."""
    settings = ctx.benchmark.settings
    peers = _population(ctx.peers)
    ref_name = settings.get("reference_agent") if settings.get("transform") == "aref" else None
    every = _population([*ctx.peers, *ctx.targets])
    if ref_name:
        if ref_name not in every:
            return
        ref = every[ref_name][1]
        ever = any(_beats(row, ref) for a, (_, row) in peers.items() if a != ref_name)
        what = f"the reference agent {ref_name!r}"
    else:
        ref = {}
        for _, row in peers.values():
            for item, v in row.items():
                ref[item] = max(ref.get(item, v), v)
        ever = False
        what = "every published agent"
    if ever:
        return
    for t in ctx.targets:
        for agent, row in sorted(responses(t).items()):
            if agent != ref_name and _beats(row, ref):
                yield Finding(
                    "warning", "beats-reference", ctx.where(t, RESPONSES), f"agent {agent}",
                    f"{agent!r} beats {what} on every one of its {len(row)} items, which no "
                    "published agent has done",
                    "nothing to fix if it is real: link the paper or logs in the description "
                    "so a reviewer can confirm the result",
                )


def _beats(row: dict[str, float], ref: dict[str, float]) -> bool:
    common = set(row) & set(ref)
    return len(common) >= MIN_ITEMS and common == set(row) and all(
        row[i] > ref[i] for i in common)
