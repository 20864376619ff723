"""Rendering a :class:`pipeline.check.run.CheckReport`.

Markdown for a PR comment, plain text for a terminal, JSON for machines. Pure string building;
everything a submitter typed (system and agent names, messages quoting their files) is escaped
so it cannot break the Markdown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pipeline.check.model import BenchmarkCheck, CheckReport, Entry, NewEntry
from pipeline.errors import Problem
from pipeline.ranking import fmt_num
from pipeline.tracks.review import Finding
from pipeline.untrusted import markdown, terminal

MARKER = "<!-- gmeter-check -->"
"""First line of the Markdown report; the CI workflow updates the comment that carries it."""
MAX_ROWS = 30
"""Longest list of other entries' changes shown before summarising."""
_ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def md(text: object) -> str:
    """Untrusted text (names, files, messages quoting them): :func:`pipeline.untrusted.markdown`."""
    return markdown(str(text))


def own(text: object) -> str:
    """Text gmeter wrote itself (labels, counts) for Markdown: specials escaped, one line."""
    s = " ".join(terminal(str(text)).split())
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#~!@])", r"\\\1", s)


def md_fix(text: object) -> str:
    """Advice gmeter wrote, for a table cell: its `code` spans kept, the rest :func:`own`."""
    s = " ".join(terminal(str(text)).split())
    if s.count("`") % 2:
        return own(s)
    parts = s.split("`")
    return "".join(md(p) if k % 2 else own(p) for k, p in enumerate(parts))


def code(text: object) -> str:
    r"""Text as an inline code span, safe in a table cell (GFM honours ``\|`` even here)."""
    return md(text)


# Scores read the same in a PR report as on the site: one formatter.
num = fmt_num


def interval(lo: float | None, hi: float | None) -> str:
    """``[lo, hi]`` or ``—``."""
    return "—" if lo is None or hi is None else f"[{num(lo)}, {num(hi)}]"


def _label(metric: str, track: str | None) -> str:
    from pipeline.tracks import metric_info

    return metric_info(metric, track or "").label


def _who(e: Entry) -> str:
    return e.agent if e.agent == e.bundle else f"{e.agent} ({e.bundle})"


def _headline(r: CheckReport) -> str:
    if r.errors:
        return f"❌ failed: {r.errors} error{'s' * (r.errors != 1)}, {r.warnings} " \
               f"warning{'s' * (r.warnings != 1)}"
    if r.warnings:
        return f"⚠️ passed with {r.warnings} warning{'s' * (r.warnings != 1)}"
    return "✅ passed"


def to_markdown(r: CheckReport) -> str:
    """Render the report as GitHub-flavoured Markdown, fit for a pull-request comment."""
    out = [MARKER, f"## gmeter check — {_headline(r)}", ""]
    if r.mode == "git":
        out.append(f"Compared with {code(r.base)} (merge base `{r.merge_base[:12]}`). ")
    out.append("Every score below was recomputed from the raw bundle files by "
               f"{own(r.code_version)} (seed {r.seed}) in a scratch store; `gmeter score` "
               "gives the same numbers for the same files.")
    out.append("")
    if r.benchmarks:
        out += ["| benchmark | track | bundles under review | entries | result |",
                "|---|---|---|---|---|"]
        for b in r.benchmarks:
            track = f"{b.track}{' (populational)' if b.populational else ''}" if b.track else "?"
            under = ", ".join(md(t) for t in b.targets) or "—"
            if b.deleted:
                under += f"; deleted: {', '.join(md(d) for d in b.deleted)}"
            res = (f"❌ {b.error_count}" if b.error_count else
                   f"⚠️ {b.warning_count}" if b.warning_count else "✅")
            out.append(f"| {md(b.id)} | {track} | {under} | {b.entries_before} → "
                       f"{b.entries_after} | {res} |")
        out.append("")
    for note in r.notes:
        out.append(f"_{md(note)}_")
    if r.findings:
        out += ["### The pull request", "", *_findings_md(r.findings), ""]
    for b in r.benchmarks:
        out += _benchmark_md(b)
    out += ["---", "How to reproduce: " + code(f"gmeter check --base {r.base or 'main'}")
            + " in your clone (or `make check-submission BASE=...`). What each check means and "
            "how to fix it: docs/submitting.md."]
    return "\n".join(out).rstrip() + "\n"


def _benchmark_md(b: BenchmarkCheck) -> list[str]:
    title = f" — {md(b.title)}" if b.title else ""
    out = [f"### {md(b.id)}{title}" + (f" (v{own(b.version)})" if b.version else ""), ""]
    for n in b.notes:
        out.append(f"- {md(n)}")
    if b.notes:
        out.append("")
    if b.new_entries:
        label = _label(b.primary_metric, b.track)
        better = "higher" if b.direction != "lower" else "lower"
        out += [f"**New and changed entries** (ranked by {own(label)}, {better} is better; tie "
                "group 1 = interval overlaps the leader's)", "",
                f"| entry | {own(label)} | interval | rank | tie group | status | bundle hash |",
                "|---|---|---|---|---|---|---|"]
        for ne in b.new_entries:
            e = ne.entry
            status = "verified" if e.verified else "reported"
            out.append(f"| {md(_who(e))} | {num(e.value)} | {interval(e.ci_low, e.ci_high)} | "
                       f"{e.rank or '—'} of {ne.of} | {e.group or '—'} | {status} | "
                       f"`{e.content_hash[:12]}` |")
        out.append("")
        for ne in b.new_entries:
            out += _entry_notes(ne, b)
        out.append("")
    if b.unscored:
        out += [f"- ❌ not scored: {', '.join(md(u) for u in b.unscored)} — fix the errors "
                "below and push again", ""]
    if b.others or b.removed:
        why = ("populational benchmark: every difficulty is recomputed from the whole "
               "population" if b.populational else "ranks shift around the new entries")
        out += [f"**What it changes for others** ({why})", "",
                "| entry | change | rank |", "|---|---|---|"]
        for c in b.others[:MAX_ROWS]:
            moved = "; ".join(f"{own(_label(m, b.track))} {num(x)} → {num(y)}"
                              for m, x, y in c.metric_changes) or "—"
            who = c.agent if c.agent == c.bundle else f"{c.agent} ({c.bundle})"
            out.append(f"| {md(who)} | {moved} | {c.rank_before or '—'} → "
                       f"{c.rank_after or '—'} |")
        if len(b.others) > MAX_ROWS:
            out.append(f"| … | {len(b.others) - MAX_ROWS} more (see `--format json`) | |")
        for e in b.removed:
            out.append(f"| {md(_who(e))} | removed | {e.rank or '—'} → — |")
        out.append("")
    if b.problems:
        out += ["**Validation**", "", "| | file | field | problem | what to do |",
                "|---|---|---|---|---|"]
        out += [_problem_row(p) for p in b.problems]
        out.append("")
    if b.findings:
        out += ["**Integrity**", "", *_findings_md(b.findings), ""]
    if b.stale:
        out += [f"**Stale entries** (they belong to another version than v{own(b.version)})", ""]
        out += [f"- {md(s.bundle)}: submitted under v{own(s.version)} (commit `{s.commit[:12]}`)"
                if s.why == "submitted" else
                f"- {md(s.bundle)}: the published score was computed on v{own(s.version)}; "
                "`gmeter score` recomputes it after the merge" for s in b.stale]
        out.append("")
    return out


def _entry_notes(ne: NewEntry, b: BenchmarkCheck) -> list[str]:
    e = ne.entry
    bits = []
    others = [f"{own(_label(m, b.track))} {num(v)} {own(interval(lo, hi))}".rstrip(" —")
              for m, (v, lo, hi) in sorted(e.metrics.items()) if m != b.primary_metric]
    if others:
        bits.append("; ".join(others))
    if ne.before is not None:
        bits.append(f"was {num(ne.before.value)}, rank {ne.before.rank or '—'}")
    if ne.overtakes:
        names = [f"{md(_who(o))} ({num(o.value)})" for o in ne.overtakes[:3]]
        more = len(ne.overtakes) - len(names)
        bits.append("overtakes " + ", ".join(names) + (f" and {more} more" if more else ""))
    how = ("verified: recomputed from the raw artefacts" if e.verified
           else "reported: computed from numbers the bundle supplies")
    bits.append(f"{how}; {own(e.code_version)}")
    return [f"- **{md(_who(e))}**: {'; '.join(bits)}"]


def _problem_row(p: Problem) -> str:
    return (f"| {_ICON.get(p.severity, '')} | {code(p.file)} | {md(p.field)} | {md(p.message)} | "
            f"{md_fix(p.fix)} |")


def _findings_md(fs: Sequence[Finding]) -> list[str]:
    out = ["| | check | where | finding | how to resolve |", "|---|---|---|---|---|"]
    for f in fs:
        where = code(f.file) + (f" {md(f.field)}" if f.field and f.field != "-" else "")
        out.append(f"| {_ICON.get(f.severity, '')} | {md(f.check)} | {where} | {md(f.message)} "
                   f"| {md_fix(f.resolution)} |")
    return out


def to_text(r: CheckReport) -> str:
    """Render the report as plain text for a terminal."""
    out = [f"gmeter check: {_headline(r)}"]
    if r.mode == "git":
        out.append(f"base {r.base} (merge base {r.merge_base[:12]}); {r.code_version}, "
                   f"seed {r.seed}")
    out += [f"note: {n}" for n in r.notes]
    out += [f"{f.severity}: [{f.check}] {f.file}: {f.message} — {f.resolution}"
            for f in r.findings]
    for b in r.benchmarks:
        out.append("")
        out.append(f"{b.id} ({b.track or '?'}{', populational' if b.populational else ''}): "
                   f"{b.entries_before} → {b.entries_after} entries")
        out += [f"  note: {n}" for n in b.notes]
        for ne in b.new_entries:
            e = ne.entry
            out.append(f"  {_who(e)}: {b.primary_metric} {num(e.value)} "
                       f"{interval(e.ci_low, e.ci_high)} rank {e.rank or '-'}/{ne.of} group "
                       f"{e.group or '-'} {'verified' if e.verified else 'reported'} "
                       f"{e.content_hash[:12]}" + (f"; overtakes {len(ne.overtakes)}"
                                                   if ne.overtakes else ""))
        for u in b.unscored:
            out.append(f"  not scored: {u}")
        for c in b.others[:MAX_ROWS]:
            moved = ", ".join(f"{m} {num(x)}→{num(y)}" for m, x, y in c.metric_changes)
            out.append(f"  changes {c.agent} ({c.bundle}): rank {c.rank_before or '-'}→"
                       f"{c.rank_after or '-'} {moved}".rstrip())
        out += [f"  {p.severity}: {p}" for p in b.problems]
        out += [f"  {f.severity}: [{f.check}] {f.file}: {f.field}: {f.message} — "
                f"{f.resolution}" for f in b.findings]
        out += [f"  stale: {s.bundle} ({s.why} under v{s.version})" for s in b.stale]
    return "\n".join(out) + "\n"


def to_json(r: CheckReport) -> str:
    """Render the report as JSON (every score row included)."""
    return json.dumps(r.as_dict(), indent=1, sort_keys=True, default=str) + "\n"


def render(r: CheckReport, fmt: str) -> str:
    """``markdown``, ``text`` or ``json``."""
    return {"markdown": to_markdown, "text": to_text, "json": to_json}[fmt](r)
