"""Integrity checks of similarity runs (``runs.csv``: one row per seed of a pair and merge)."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.tracks.review import Finding, IntegrityContext, integrity_check, listing, read_csv

RUNS = "runs.csv"
CELL = ("test_a", "test_b", "p", "merge", "agent")
VALUES = ("v_a", "v_b", "v_ab")


@integrity_check(
    "repeated-runs",
    track="similarity",
    title="Seeds that repeat the same numbers",
    description="Several rows of one pair, merge and agent (different seeds) with exactly the "
    "same v_a, v_b and v_ab. Independent seeds practically never agree to every digit; copied "
    "rows make the interval over seeds look narrower than it is.",
)
def repeated_runs(ctx: IntegrityContext) -> Iterator[Finding]:
    """Identical value triples within one configuration."""
    for t in ctx.targets:
        header, rows = read_csv(t.files, RUNS)
        if not set(VALUES) <= set(header):
            continue
        seen: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
        for r in rows:
            cell = tuple(r.get(c, "") for c in CELL)
            vals = tuple(r.get(v, "") for v in VALUES)
            seen.setdefault(cell, {}).setdefault(vals, 0)
            seen[cell][vals] += 1
        repeated = sorted(
            f"{c[0]}–{c[1]}" for c, counts in seen.items() if any(n > 1 for n in counts.values())
        )
        if repeated:
            yield Finding(
                "warning",
                "repeated-runs",
                ctx.where(t, RUNS),
                "v_a, v_b, v_ab",
                f"different seeds give identical values for {listing(sorted(set(repeated)))}",
                "keep one row per distinct run: copying a seed's row does not add evidence",
            )
