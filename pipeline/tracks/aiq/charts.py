"""How the site shows the AIQ track: its charts, notes, methodology and paper.

The drawers turn the chart data of :func:`pipeline.tracks.aiq.track.score` into typed chart
requests (:mod:`pipeline.tracks.presentation`); the site draws them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pipeline.tracks.presentation import (
    ChartRequest,
    Citation,
    LineChart,
    Presentation,
    as_records,
    is_number,
)

_PLAIN = re.compile(r"[\w .()λ-]+")
_EL = re.compile(r",\s*EL\s*[\d,_ ]+$")


def series_name(series: str, agent: str) -> str:
    """A legend name a reader can read: the series id, unless it is a module path.

    A Gymnasium agent's id is its entry point (``gym:package.module:make_agent``); its
    display name (without the ", EL 1000" an entry carries per episode length) names it.
    """
    if _PLAIN.fullmatch(series) or not agent:
        return series
    return _EL.sub("", agent).strip() or series


def draw_episode_lengths(data: Any) -> list[ChartRequest]:
    """Each agent's AIQ with its interval at each episode length (the paper's Fig. 1).

    The paper's values get a chart of their own beside the measured one (same axes): eleven
    series in one chart would share colours.
    """
    rows = as_records(data) or []
    measured = [r for r in rows if r.get("source") != "paper"]
    paper = [r for r in rows if r.get("source") == "paper"]
    charts = _episode_length_chart(measured, "AIQ vs episode length",
                                   "Each agent's AIQ with its 95 % interval at each episode "
                                   "length (Legg & Veness, Fig. 1)")  # fmt: skip
    if charts:  # the paper's curves only beside measured ones
        charts += _episode_length_chart(paper, "The paper's AIQ vs episode length",
                                        "Legg & Veness's published AIQ of each agent at each "
                                        "episode length (their Fig. 1)", "-paper")  # fmt: skip
    return charts


def _episode_length_chart(
    rows: list[Any], title: str, what: str, suffix: str = ""
) -> list[ChartRequest]:
    recs = []
    for r in rows:
        el: Any = r.get("episode_length")
        v = r.get("aiq")
        if not (is_number(el) and is_number(v) and el > 0):
            continue
        p = {
            "x": el,
            "y": v,
            "label": str(r.get("agent", "")),
            "series": series_name(
                str(r.get("series", r.get("agent", ""))), str(r.get("agent", ""))
            ),
        }
        if is_number(r.get("ci_low")) and is_number(r.get("ci_high")):
            p["low"], p["high"] = r["ci_low"], r["ci_high"]
        recs.append(p)
    if not recs:
        return []
    return [
        LineChart(
            title,
            recs,
            x=("episode length", "cycles, log scale"),
            y=("AIQ", "reward per cycle"),
            log_x=True,
            what=what,
            suffix=suffix,
        )
    ]


def draw_depth_search(data: Any) -> list[ChartRequest]:
    """MC-AIXI's AIQ with its interval against context depth, per number of simulations."""
    rows = as_records(data) or []
    recs = []
    for r in rows:
        depth: Any = r.get("depth")
        v = r.get("aiq")
        if not (is_number(depth) and is_number(v) and depth > 0):
            continue
        p = {"x": depth, "y": v, "label": str(r.get("agent", "")),
             "series": str(r.get("series", ""))}  # fmt: skip
        if is_number(r.get("ci_low")) and is_number(r.get("ci_high")):
            p["low"], p["high"] = r["ci_low"], r["ci_high"]
        recs.append(p)
    if not recs:
        return []
    title = data.get("title") if isinstance(data, Mapping) else None
    return [
        LineChart(
            "MC-AIXI: AIQ vs context depth and search",
            recs,
            x=("context depth", "bits of history, log scale"),
            y=("AIQ", "reward per cycle"),
            log_x=True,
            what=str(title or "MC-AIXI's AIQ with its 95 % interval against context depth, "
                     "one line per number of simulations (Legg & Veness, Fig. 2)"),
        )
    ]


def draw_program_lengths(data: Any) -> list[ChartRequest]:
    """The lengths of the sampled environment programs, all drawn vs accepted (Fig. 3)."""
    rows = as_records(data) or []
    recs = [
        {"x": r["length"], "y": r["fraction"], "series": str(r.get("series", ""))}
        for r in rows
        if is_number(r.get("length")) and is_number(r.get("fraction"))
    ]
    if not recs:
        return []
    drawn = data.get("drawn") if isinstance(data, Mapping) else None
    title = "Program lengths" + (f" ({drawn:,} programs drawn)" if is_number(drawn) else "")
    return [
        LineChart(
            title,
            recs,
            x=("program length", "BF symbols"),
            y=("fraction of programs", "0–1"),
            points=False,
            what="Distribution of the lengths of the sampled environment programs",
        )
    ]


def interval_note(level: str, manifest: Mapping[str, Any]) -> str:
    """The normal interval of the benchmark's estimator (stratified unless it says otherwise)."""
    settings = manifest.get("aiq")
    method = settings.get("method") if isinstance(settings, Mapping) else None
    if method == "mc-antithetic":
        return (
            f"Intervals: {level} normal interval of the mean of the antithetic pair means "
            "(simple Monte Carlo over the programs in file order)."
        )
    if method == "mc":
        return f"Intervals: {level} normal interval of the mean of single runs."
    return (
        f"Intervals: {level} normal interval of the stratified estimate, from the variance "
        "of the antithetic pairs."
    )


METHODOLOGY = (
    "<p>AIQ approximates Legg and Hutter's universal intelligence: the expected reward of an "
    "agent over environments drawn with probability 2<sup>−K</sup> from a reference machine. "
    "Environments are programs for a BF reference machine, sampled, filtered and grouped into "
    "strata by length.</p>\n"
    "<div class=\"formula\">\n"
    "<p>AIQ = Σ<sub>i</sub> p<sub>i</sub> · V̂<sub>i</sub>, where p<sub>i</sub> is the "
    "probability of stratum <var>i</var> and V̂<sub>i</sub> the mean, over its sampled programs, "
    "of the agent's average reward per cycle (in [−100, 100]) over an episode.</p>\n"
    "<p>Each program is run twice, with rewards negated the second time (antithetic variates); "
    "samples are allocated adaptively across strata (stratified sampling); agents share the "
    "random numbers (common random numbers).</p>\n"
    "<p>Interval: the 95 % normal interval AIQ ± 1.96 σ̂ of the stratified estimate, with σ̂² = "
    "Σ<sub>i</sub> p<sub>i</sub>² s<sub>i</sub>² / n<sub>i</sub> computed from antithetic "
    "<em>pairs</em> (s<sub>i</sub>: the standard deviation of pair means in stratum "
    "<var>i</var>, n<sub>i</sub>: its number of pairs). The original code's printed interval is "
    "about √2 too narrow because it counts runs, not pairs.</p>\n"
    "</div>\n"
    "<p>Scores replayed from logged traces are <span class=\"badge ok\">verified</span>; scores "
    "from logs without traces are <span class=\"badge rep\">reported</span>.</p>"
)
"""The methodology section of a board of this track and of the about page (HTML)."""

CITATION = Citation(
    bibtex="""@inproceedings{legg2013aiq,
  author    = {Legg, Shane and Veness, Joel},
  title     = {An Approximation of the Universal Intelligence Measure},
  booktitle = {Algorithmic Probability and Friends.
               Bayesian Prediction and Artificial Intelligence},
  series    = {Lecture Notes in Computer Science},
  volume    = {7070},
  pages     = {236--249},
  publisher = {Springer},
  year      = {2013},
  doi       = {10.1007/978-3-642-44958-1_18},
  url       = {https://doi.org/10.1007/978-3-642-44958-1_18}
}""",
    title="An Approximation of the Universal Intelligence Measure",
    kind="conference-paper",
    year=2013,
    authors=("Legg", "Veness"),
    doi="10.1007/978-3-642-44958-1_18",
)

PRESENTATION = Presentation(
    charts={
        "aiq_vs_episode_length": draw_episode_lengths,
        "aiq_depth_search": draw_depth_search,
        "aiq_program_lengths": draw_program_lengths,
    },
    # AIQ per agent is the board's own score chart
    hidden=frozenset({"aiq_by_agent"}),
    interval_note=interval_note,
    methodology=METHODOLOGY,
    citation=CITATION,
)
"""How the site shows the AIQ track."""
