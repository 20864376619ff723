"""Markdown to safe HTML for the site (board descriptions, origin notes, the submit page).

markdown-it-py (already installed with rich) parses CommonMark plus tables with raw HTML
**disabled**, so a bundle's or benchmark's text can never inject markup: ``<script>`` stays
text. Links are kept only when they are absolute ``http(s)``/``mailto`` URLs (no
``javascript:``); a relative link (``docs/submitting.md`` in the repository) becomes its text in
``<code>``-free plain form, because the page it names is not part of the site. Bare URLs are
linked (linkify).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_SCHEMES = ("http://", "https://", "mailto:")


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    return md


def _github_slug(text: str) -> str:
    """The anchor GitHub gives a heading (lowercase, punctuation dropped, spaces → ``-``)."""
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def _heading_ids(tokens: list[Any]) -> set[str]:
    """Give every heading GitHub's anchor (so a document's own ``#…`` links keep working)."""
    ids: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and i + 1 < len(tokens):
            base = _github_slug(tokens[i + 1].content)
            slug, k = base, 1
            while slug in ids:
                slug, k = f"{base}-{k}", k + 1
            ids.add(slug)
            tok.attrSet("id", slug)
    return ids


def _neutralise(tokens: list[Any], ids: set[str]) -> None:
    """Turn links the site cannot serve into plain spans (in place, nested tokens too)."""
    for tok in tokens:
        if tok.children:
            stack: list[bool] = []
            for child in tok.children:
                if child.type == "link_open":
                    target = str(child.attrGet("href") or "")
                    ok = target.startswith(_SCHEMES) or (
                        target.startswith("#") and target[1:] in ids
                    )
                    stack.append(ok)
                    if not ok:
                        child.tag, child.attrs = "span", {}
                    elif not target.startswith("#"):
                        child.attrSet("rel", "nofollow noopener noreferrer")
                elif child.type == "link_close":
                    ok = stack.pop() if stack else True
                    if not ok:
                        child.tag = "span"


_URL = re.compile(r"(?<![(\[<\"'])\bhttps?://[^\s<>()\"']+[^\s<>()\"'.,;:!?]")


_DOI = re.compile(r"(?<![\w/.\[])doi:\s?(10\.\d{4,9}/[^\s<>\"'\[\]`]+?)(?=[.,;:)]*(?:\s|$))", re.I)
"""A DOI cited as ``doi:10.xxxx/suffix`` (the suffix may hold ``:`` or ``()``; a trailing
full stop, comma or bracket is the sentence's)."""


def _doi_link(m: re.Match[str]) -> str:
    return f"[{m.group(0)}](<https://doi.org/{m.group(1)}>)"


def _autolink(text: str) -> str:
    """Link bare URLs and ``doi:`` citations (not inside code spans) for CommonMark."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(
        p if p.startswith("`") else _URL.sub(lambda m: f"<{m.group(0)}>", _DOI.sub(_doi_link, p))
        for p in parts
    )


def to_html(text: str, *, shift_headings: int = 0) -> str:
    """Render Markdown ``text`` as safe HTML (headings moved down by ``shift_headings``)."""
    md = _parser()
    tokens = md.parse(_autolink(text or ""))
    _neutralise(tokens, _heading_ids(tokens))
    if shift_headings:
        for tok in tokens:
            if tok.type in ("heading_open", "heading_close"):
                level = min(6, int(tok.tag[1]) + shift_headings)
                tok.tag = f"h{level}"
    html: str = md.renderer.render(tokens, md.options, {})
    return html


def to_inline_html(text: str) -> str:
    """Render one paragraph of Markdown without the surrounding ``<p>``."""
    html = to_html(text).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of a description, as plain text (Markdown marks removed)."""
    plain = re.sub(r"[*_`#>]+", "", (text or "").strip())
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
    plain = " ".join(plain.split())
    out = plain
    for m in re.finditer(r"[.!?](?=\s+[A-Z0-9(]|$)", plain):
        head = plain[: m.end()]
        # not inside parentheses ("(… 2020, eq. 3)") and not an abbreviation ("eq.", "e.g.")
        if head.count("(") == head.count(")") and not re.search(
            r"\b(eq|e\.g|i\.e|al|vs|cf|Fig|Tab)\.$", head
        ):
            out = head
            break
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"
