"""Citations and per-board downloads: BibTeX and ``CITATION.cff``, one CSV per board.

BibTeX per board, per release and for the four papers; the site's ``CITATION.cff``.

Plain text builders (pure functions of the :class:`~pipeline.site.model.Site`); the build
writes what they return.
"""

from __future__ import annotations

import csv
import io
import re

from pipeline.site.model import Site, VersionData, safe_segment
from pipeline.site.standings import Standing
from pipeline.store.rows import BenchmarkRow

PAPERS: dict[str, str] = {
    "gindex": """@article{venkatasubramanian2021gindex,
  author  = {Venkatasubramanian, Shubhang and Mantena, Rohan and
             Kaznatcheev, Artem and Tsao, Jeffrey},
  title   = {Towards a Measure of General Machine Intelligence},
  journal = {arXiv preprint},
  eprint  = {2109.12075},
  archivePrefix = {arXiv},
  year    = {2021},
  doi     = {10.48550/arXiv.2109.12075},
  url     = {https://arxiv.org/abs/2109.12075}
}""",
    "aiq": """@inproceedings{legg2013aiq,
  author    = {Legg, Shane and Veness, Joel},
  title     = {An Approximation of the Universal Intelligence Measure},
  booktitle = {Algorithmic Probability and Friends.
               Bayesian Prediction and Artificial Intelligence},
  series    = {Lecture Notes in Computer Science},
  volume    = {7070},
  pages     = {236--249},
  publisher = {Springer},
  year      = {2013},
  doi       = {10.1007/978-3-642-44958-1_18}
}""",
    "generality": """@article{hernandezorallo2021generality,
  author  = {Hern{\\'a}ndez-Orallo, Jos{\\'e} and Loe, Bao Sheng and Cheke, Lucy and
             Mart{\\'i}nez-Plumed, Fernando and {\\'O} h{\\'E}igeartaigh, Se{\\'a}n},
  title   = {General intelligence disentangled via a generality metric
             for natural and artificial intelligence},
  journal = {Scientific Reports},
  volume  = {11},
  pages   = {22822},
  year    = {2021},
  doi     = {10.1038/s41598-021-01997-7}
}""",
    "similarity": """@inproceedings{pereyda2020similarity,
  author    = {Pereyda, Christopher and Holder, Lawrence},
  title     = {Measuring the Relative Similarity and Difficulty
               Between {AI} Benchmark Problems},
  booktitle = {AAAI Workshop on Evaluating Evaluation of AI Systems (Meta-Eval 2020)},
  year      = {2020}
}""",
}
"""The four papers gmeter implements, as BibTeX (DOIs where the paper has one)."""

PAPER_KEYS = {
    "gindex": "venkatasubramanian2021gindex",
    "aiq": "legg2013aiq",
    "generality": "hernandezorallo2021generality",
    "similarity": "pereyda2020similarity",
}

DOIS = {
    "gindex": "10.48550/arXiv.2109.12075",
    "aiq": "10.1007/978-3-642-44958-1_18",
    "generality": "10.1038/s41598-021-01997-7",
}


def _bib_text(text: str) -> str:
    """Escape a value for a BibTeX field (braces balanced, specials escaped)."""
    text = " ".join(str(text).split())
    text = re.sub(r"([&%$#_])", r"\\\1", text.replace("\\", "/"))
    return text.replace("{", "(").replace("}", ")")


def _key(*parts: str) -> str:
    return "gmeter-" + "-".join(re.sub(r"[^A-Za-z0-9]+", "-", p).strip("-") for p in parts if p)


def board_bib(site: Site, vd: VersionData, bm: BenchmarkRow) -> str:
    """BibTeX for one board in one version (``@misc``), followed by its paper's entry."""
    version = vd.version
    year = version.date.year
    note = (
        f"gmeter leaderboard, {version.label}; benchmark version {bm.version or '—'}"
        f" ({bm.content_hash[:12]})"
        if bm.content_hash
        else f"gmeter leaderboard, {version.label}"
    )
    path = f"{vd.prefix}benchmarks/{safe_segment(bm.id)}/"
    entry = (
        f"@misc{{{_key(bm.id, version.name)},\n"
        f"  title        = {{{{{_bib_text(bm.title)}}}}},\n"
        f"  author       = {{{{gmeter contributors}}}},\n"
        f"  year         = {{{year}}},\n"
        f"  howpublished = {{gmeter leaderboard, page {_bib_text(path)}}},\n"
        f"  note         = {{{_bib_text(note)}}}\n"
        "}\n"
    )
    paper = PAPERS.get(bm.track)
    return entry + ("\n" + paper + "\n" if paper else "")


def release_bib(site: Site, vd: VersionData) -> str:
    """BibTeX for a release of the whole site, then every paper its boards use."""
    v = vd.version
    ids = ", ".join(bm.id for bm in vd.benchmarks)
    entry = (
        f"@misc{{{_key('release', v.name)},\n"
        f"  title        = {{{{gmeter leaderboards, {_bib_text(v.label)}}}}},\n"
        f"  author       = {{{{gmeter contributors}}}},\n"
        f"  year         = {{{v.date.year}}},\n"
        f"  howpublished = {{gmeter release {_bib_text(v.name)}, page {_bib_text(vd.prefix)}}},\n"
        f"  note         = {{boards: {_bib_text(ids)}}}\n"
        "}\n"
    )
    tracks = sorted({bm.track for bm in vd.benchmarks})
    return entry + "".join("\n" + PAPERS[t] + "\n" for t in tracks if t in PAPERS)


def papers_bib() -> str:
    """The four papers as one BibTeX file."""
    return "\n\n".join(PAPERS[t] for t in sorted(PAPERS)) + "\n"


def citation_cff(site: Site) -> str:
    """``CITATION.cff`` (Citation File Format 1.2.0) for the site, with the papers it uses."""
    latest = site.latest
    date = site.snapshot.site_date.isoformat()
    version = latest.version.name if latest else "current"
    lines = [
        "cff-version: 1.2.0",
        'message: "If you use these leaderboards, please cite them as below, and the paper of '
        'each measure you use."',
        'title: "gmeter leaderboards of general machine intelligence"',
        "type: dataset",
        "authors:",
        '  - name: "gmeter contributors"',
        f'version: "{version}"',
        f"date-released: {date}",
        "license: MIT",
        "references:",
    ]
    titles = {
        "gindex": ("Towards a Measure of General Machine Intelligence", "article", 2021),
        "aiq": ("An Approximation of the Universal Intelligence Measure", "conference-paper", 2013),
        "generality": (
            "General intelligence disentangled via a generality metric for natural and "
            "artificial intelligence",
            "article",
            2021,
        ),
        "similarity": (
            "Measuring the Relative Similarity and Difficulty Between AI Benchmark Problems",
            "conference-paper",
            2020,
        ),
    }
    authors = {
        "gindex": ["Venkatasubramanian", "Mantena", "Kaznatcheev", "Tsao"],
        "aiq": ["Legg", "Veness"],
        "generality": ["Hernández-Orallo", "Loe", "Cheke", "Martínez-Plumed", "Ó hÉigeartaigh"],
        "similarity": ["Pereyda", "Holder"],
    }
    for t in sorted(titles):
        title, kind, year = titles[t]
        lines += [f"  - type: {kind}", f'    title: "{title}"', f"    year: {year}", "    authors:"]
        lines += [f'      - family-names: "{a}"' for a in authors[t]]
        if t in DOIS:
            lines.append(f'    doi: "{DOIS[t]}"')
    return "\n".join(lines) + "\n"


def board_csv(site: Site, bm: BenchmarkRow, st: Standing) -> str:
    """One board as CSV: a row per entry, a value/low/high column triple per metric."""
    metrics = sorted({m for e in st.entries for m in e.metrics})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["rank", "group", "system", "agent", "bundle", "verified", "content_hash"]
    for m in metrics:
        head += [m, f"{m}_low", f"{m}_high"]
    w.writerow(head)

    def num(v: float | None) -> str:
        return "" if v is None else repr(float(v))

    for e in st.entries:
        row = [
            "" if e.rank is None else str(e.rank),
            "" if e.group is None else str(e.group),
            _csv_text(site.system_name(bm.id, e.bundle, e.content_hash)),
            _csv_text(e.agent),
            e.bundle,
            "true" if e.primary.verified else "false",
            e.content_hash,
        ]
        for m in metrics:
            r = e.metrics.get(m)
            row += [num(r.value), num(r.ci_low), num(r.ci_high)] if r else ["", "", ""]
        w.writerow(row)
    for (bundle, agent), ms in st.others:
        some = next(iter(ms.values()))
        row = [
            "",
            "",
            _csv_text(site.system_name(bm.id, bundle, some.content_hash)),
            _csv_text(agent),
            bundle,
            "true" if some.verified else "false",
            some.content_hash,
        ]
        for m in metrics:
            r = ms.get(m)
            row += [num(r.value), num(r.ci_low), num(r.ci_high)] if r else ["", "", ""]
        w.writerow(row)
    return buf.getvalue()


def _csv_text(text: str) -> str:
    """Neutralise spreadsheet formulas (a cell starting with = + - @ is read as text)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
