"""How the site shows the test-similarity track: its charts, notes, methodology and paper.

The drawers turn the chart data of :func:`pipeline.tracks.similarity.track.score` into typed
chart requests (:mod:`pipeline.tracks.presentation`); the site draws them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pipeline.tracks.presentation import (
    ChartRequest,
    Citation,
    HeatmapChart,
    LineChart,
    Presentation,
    Records,
    ScatterChart,
    as_records,
    is_number,
)

GROUP_LIMIT = 4
"""Most runs (bundle · configuration) drawn as heatmaps, maps or sweeps of one chart name."""


def _pt(label: str, x: Any, y: Any) -> dict[str, Any]:
    return {"label": label, "x": x, "y": y}


def _key_suffix(i: int) -> str:
    """The first chart of a name keeps the name's key; the next ones are ``-2``, ``-3``…"""
    return f"-{i + 1}" if i else ""


def _groups(rows: Records) -> dict[str, Records]:
    """Rows by run (bundle · configuration), each bundle's main run first.

    Only the first :data:`GROUP_LIMIT` are drawn, so every bundle gets one before any bundle
    gets a second: its run at the paper's p = 0.5 when it has several (a sweep's other
    runs are drawn by the sweep chart).
    """
    out: dict[str, Records] = defaultdict(list)
    bundle_of: dict[str, str] = {}
    for r in rows:
        label = " · ".join(str(r[k]) for k in ("bundle", "config") if r.get(k))
        out[label].append(r)
        bundle_of[label] = str(r.get("bundle") or "")
    firsts: dict[str, str] = {}
    for label in sorted(out, key=lambda k: ("p=0.5" not in k, k)):
        firsts.setdefault(bundle_of[label], label)
    first = set(firsts.values())
    order = sorted(out, key=lambda k: (k not in first, k))
    return {k: out[k] for k in order}


def draw_sweep(data: Any) -> list[ChartRequest]:
    """S against the merge proportion p, a line per pair, a chart per agent (Figs. 2–3)."""
    rows = data.get("sweep") if isinstance(data, Mapping) else data
    by_agent: dict[str, Records] = defaultdict(list)
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, Mapping) and is_number(r.get("p")) and is_number(r.get("similarity")):
            label = " · ".join(str(r[k]) for k in ("bundle", "agent") if r.get(k))
            by_agent[label].append(
                {"x": r["p"], "y": r["similarity"], "series": str(r.get("pair", ""))}
            )
    out: list[ChartRequest] = []
    for i, label in enumerate(sorted(by_agent)[:GROUP_LIMIT]):
        recs = sorted(by_agent[label], key=lambda p: (p["series"], p["x"]))
        out.append(
            LineChart(
                "Similarity against the proportion p" + (f" — {label}" if label else ""),
                recs,
                x=("proportion p of test A in the merge", "0–1"),
                y=("similarity S", "−1–1"),
                what="S of each pair at each merge proportion p (Pereyda & Holder 2020, "
                "Figs. 2–3); a line per pair",
                suffix=_key_suffix(i),
            )
        )
    return out


def draw_published(data: Any) -> list[ChartRequest]:
    """The paper's own similarity matrix, on the same colour scale as the measured ones."""
    rows = as_records(data) or []
    r_l: list[str] = []
    c_l: list[str] = []
    cells: dict[tuple[str, str], Any] = {}
    for r in rows:
        a, b = str(r.get("row")), str(r.get("col"))
        r_l += [a] if a not in r_l else []
        c_l += [b] if b not in c_l else []
        v = r.get("similarity")
        cells[(a, b)] = v if is_number(v) else None
    if not cells:
        return []
    return [
        HeatmapChart(
            "Published similarity S(A, B) (Pereyda & Holder 2020)",
            r_l,
            c_l,
            [[cells.get((a, b)) for b in c_l] for a in r_l],
            value=("similarity S", "−1–1"),
            domain=(-1.0, 1.0),
            axes=("test A", "test B"),
        )
    ]


def draw_heatmap(data: Any) -> list[ChartRequest]:
    """S(A, B) of every pair, a heatmap per run."""
    rows = as_records(data) or []
    out: list[ChartRequest] = []
    for i, (label, group) in enumerate(list(_groups(rows).items())[:GROUP_LIMIT]):
        r_l: list[str] = []
        c_l: list[str] = []
        cells: dict[tuple[str, str], Any] = {}
        for r in group:
            a, b = str(r.get("row")), str(r.get("col"))
            r_l += [a] if a not in r_l else []
            c_l += [b] if b not in c_l else []
            cells[(a, b)] = r.get("similarity", r.get("value"))
        out.append(
            HeatmapChart(
                "Similarity S(A, B)" + (f" — {label}" if label else ""),
                r_l,
                c_l,
                [[cells.get((a, b)) for b in c_l] for a in r_l],
                value=("similarity S", "−1–1"),
                domain=(-1.0, 1.0),
                axes=("test A", "test B"),
                suffix=_key_suffix(i),
            )
        )
    return out


def draw_map(data: Any) -> list[ChartRequest]:
    """The tests placed by classical MDS of 1 − S, a map per run."""
    rows = as_records(data) or []
    out: list[ChartRequest] = []
    for i, (label, group) in enumerate(list(_groups(rows).items())[:GROUP_LIMIT]):
        recs = [
            _pt(str(r.get("test", "")), r.get("x"), r.get("y"))
            for r in group
            if is_number(r.get("x")) and is_number(r.get("y"))
        ]
        if not recs:
            continue
        out.append(
            ScatterChart(
                "Map of the tests (classical MDS of 1 − S)" + (f" — {label}" if label else ""),
                recs,
                x=("MDS dimension 1", "dissimilarity units"),
                y=("MDS dimension 2", "dissimilarity units"),
                labels=True,
                equal=True,  # MDS distances are the message: one unit the same both ways
                what="tests close together behave alike for the baseline agent",
                suffix=_key_suffix(i),
            )
        )
    return out


def interval_note(level: str, manifest: Mapping[str, Any]) -> str:
    """Intervals over independent seeds."""
    del manifest  # the level is all this note needs
    return f"Intervals: {level} intervals over independent seeds (S lies in [−1, 1])."


REPRODUCTION_ROWS: tuple[tuple[str, str, str], ...] = (
    ("Tables 2–3: ordering of the image pairs", "not testable offline",
     "the data sets need downloads and the networks are not public; the published values are "
     "shown on pereyda-holder-2020 and eq. 3 returns them exactly"),
    ("Fig. 2: sampling stays sufficient, stitching violates sufficiency",
     "reproduced for stitching",
     "mlp-fig2-widths: stitching (AB against AA and BB) is insufficient in all 12 cells, as no "
     "agent can score AB above max(p, 1 − p); sampling is sufficient in 5 of 12 (not for the "
     "digits variants, nor at width 8)"),
    ("Fig. 3: V_AB between fixed V_A and V_B lines across p", "not reproduced",
     "with whole-test V_A and V_B (similarity-classification, mlp-fig3-whole) V_AB lies below "
     "both at every p: the merge gives each small test fewer elements than it has alone"),
    ("network size does not largely affect S", "consistent where testable",
     "mlp-fig2-widths: the sufficient cells agree across widths 16–64 within wide intervals; "
     "at width 8 no pair is sufficient, so S is not measured there"),
    ("passive CartPole is the hardest test and dissimilar", "reproduced with pixels only",
     "as states (cartpole-passive) it is easy, V ≈ 0.87, its label a linear rule in two inputs; "
     "as one image (cartpole-pixels, no velocities) it is hardest, V ≈ 0.49 (chance), with S "
     "near 0 to the others"),
    ("Gym: FrozenLake 4×4/8×8 among the most similar pairs", "reproduced",
     "similarity-gym (20 seeds): S = 0.955 [0.68, 1.00], sufficient, the highest on the board; "
     "the merged score sits at the 8×8's"),
    ("Gym: CartPole-v0/v1 among the most similar pairs", "not reproduced",
     "gap unresolved at 20 seeds (one seed reverses which version is easier): no value"),
    ("Gym: toy-text apart from classic control", "consistent where testable",
     "the one measured cross-group pair (CartPole-v0 – FrozenLake 8×8) has S = 0.00 "
     "[−0.23, 0.24] against 0.955 within FrozenLake; the other cross pairs are unresolved"),
    ("Gym: stitching violates sufficiency", "not run on the board",
     "gmeter similarity run --experiment gym --merge stitching runs it; a 20-seed Gym "
     "stitching board did not fit the compute"),
)  # fmt: skip
"""The paper's findings against the committed boards (docs/similarity.md has the details)."""


def _reproduction_html() -> str:
    from html import escape

    body = "".join(
        f"<tr><td>{escape(f)}</td><td>{escape(st)}</td><td>{escape(why)}</td></tr>\n"
        for f, st, why in REPRODUCTION_ROWS
    )
    return (
        "<p><strong>Reproduction of Pereyda &amp; Holder 2020</strong> (finding by finding, "
        "from the committed runs; pairs without a value are not measurements):</p>\n"
        '<table class="reproduction"><thead><tr><th>paper\'s finding</th><th>here</th>'
        f"<th>why</th></tr></thead><tbody>\n{body}</tbody></table>"
    )


REPRODUCTION = _reproduction_html()

METHODOLOGY = (
    "<p>Test similarity asks whether two tests measure the same thing: a baseline agent π is "
    "trained and evaluated on test A, on test B and on their merge AB, in which a proportion "
    "<var>p</var> of the episodes comes from A.</p>\n"
    '<div class="formula">\n'
    "<p>S(A, B, p, π) (Pereyda &amp; Holder 2020, eq. 3) compares the agent's performance on the "
    "merged test with its performances on A and B alone (A the easier test, V_A &gt; V_B): S near "
    "1 when the merged score V_AB is near the harder test's score V_B (the tests interfere: "
    "the agent cannot keep them apart), 0 when V_AB is midway between them "
    "(unrelated tests, at p = ½), −1 when V_AB reaches the easier test's score V_A. Only a "
    "sufficient agent (V_B ≤ V_AB ≤ V_A) gives a measurement; outside that band eq. 3 "
    "saturates at ±1 and "
    "the pair is marked, not measured.</p>\n"
    "<p>dissimilarity D = 1 − S; suite <strong>diversity</strong> = the mean of D over the "
    "sufficient pairs of tests (their count is shown); insufficient, unresolved and forced "
    "pairs are listed, never averaged in or ranked.</p>\n"
    "</div>\n"
    "<p>The similarity heatmap shows S for every pair; the 2-D map places the tests by classical "
    "multidimensional scaling of 1 − S, so tests close together behave alike for the baseline "
    "agent.</p>\n" + REPRODUCTION
)
"""The methodology section of a similarity board and of the about page (HTML)."""

CITATION = Citation(
    bibtex="""@inproceedings{pereyda2020similarity,
  author    = {Pereyda, Christopher and Holder, Lawrence},
  title     = {Measuring the Relative Similarity and Difficulty
               Between {AI} Benchmark Problems},
  booktitle = {AAAI Workshop on Evaluating Evaluation of AI Systems (Meta-Eval 2020)},
  year      = {2020}
}""",
    title="Measuring the Relative Similarity and Difficulty Between AI Benchmark Problems",
    kind="conference-paper",
    year=2020,
    authors=("Pereyda", "Holder"),
)

PRESENTATION = Presentation(
    charts={
        "similarity_heatmap": draw_heatmap,
        "similarity_map": draw_map,
        "similarity_published": draw_published,
        "similarity_sweep": draw_sweep,
    },
    # the flags and the suites' diversities are tables of the board, not charts
    hidden=frozenset({"similarity_flags", "similarity_suites"}),
    interval_note=interval_note,
    methodology=METHODOLOGY,
    citation=CITATION,
    agent_rows=False,  # a row is a pair of tests, not an agent
    worded_intervals=True,  # a diversity's interval is not a similarity's
)
"""How the site shows the similarity track."""
