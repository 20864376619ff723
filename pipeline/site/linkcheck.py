"""The internal link checker run at the end of every build.

Every ``href``/``src`` in every HTML file of the built site is resolved against the file's own
location. A link is broken when it points inside the site to a file that does not exist (a
directory link needs its ``index.html``) or to a ``#fragment`` that no element of the target
page carries. Resource links (``src``, stylesheets, icons) must stay inside the site: an
external one is reported too, because the site must work offline and request nothing from
elsewhere. Outbound ``<a href="https://…">`` links (a system's web site) are allowed.

The pages are gmeter's own output (autoescaped, attributes double-quoted, JSON data islands
with ``<`` escaped), so attributes are read with regular expressions, many times faster than
:mod:`html.parser` on a site of thousands of pages.
"""

from __future__ import annotations

import html
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

_JSON_SCRIPT = re.compile(r'<script type="application/json"[^>]*>.*?</script>', re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_LINK = re.compile(r'\s(href|src|data)="([^"]*)"')
_ID = re.compile(r'\s(?:id|name)="([^"]*)"')
_RESOURCE_TAG = re.compile(
    r"<(script|img|link|iframe|source|video|audio|embed|object|image|use)\b([^>]*)>", re.I
)
_ATTR = re.compile(r'\s(href|src|data|rel)="([^"]*)"')


@dataclass(frozen=True, order=True)
class BrokenLink:
    """One broken link: the page it is on, the link and why."""

    page: str
    link: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.link} ({self.reason})"


@dataclass(frozen=True)
class _Parsed:
    links: tuple[tuple[str, bool], ...]
    ids: frozenset[str]


def parse_links(text: str) -> tuple[list[tuple[str, bool]], set[str]]:
    """Return the (link, is_resource) pairs and the element ids of an HTML page gmeter wrote.

    Attributes must be double-quoted (Jinja templates write them so); JSON data islands and
    comments are skipped.
    """
    text = _COMMENT.sub("", _JSON_SCRIPT.sub("", text))
    resources: set[str] = set()
    for m in _RESOURCE_TAG.finditer(text):
        attrs = {a.group(1): html.unescape(a.group(2)) for a in _ATTR.finditer(m.group(2))}
        if m.group(1).lower() == "link" and attrs.get("rel") == "alternate":
            continue
        resources.update(v for k, v in attrs.items() if k != "rel")
    links = []
    for m in _LINK.finditer(text):
        value = html.unescape(m.group(2))
        links.append((value, value in resources))
    ids = {html.unescape(m.group(1)) for m in _ID.finditer(text)}
    return links, ids


def check_site(
    root: Path,
    *,
    base: str = "/",
    known: Mapping[str, Sequence[Any]] | None = None,
    parsed_out: dict[str, list[Any]] | None = None,
    later: Sequence[str] = (),
) -> list[BrokenLink]:
    """Check every HTML page under ``root``; return the broken links, sorted.

    Pages link relatively, except ``404.html``: a server shows it at any depth, so it links
    from the site's absolute ``base`` path, and its links are checked below that base.

    ``known`` gives the ``[links, ids]`` of pages already parsed (an incremental build's
    pages taken over unchanged): they are checked against the new site without being read.
    ``parsed_out`` receives the ``[links, ids]`` of every page, for the next build.
    ``later`` names files (not pages) the build writes after the check, which links may name.
    """
    root = Path(root)
    files: set[str] = set()
    dirs: set[str] = {""}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        dirs.update(posixpath.join(rel, d) if rel else d for d in dirnames)
        files.update(posixpath.join(rel, f) if rel else f for f in filenames)
    for rel in later:
        files.add(rel)
        parent = posixpath.dirname(rel)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    parsed: dict[str, _Parsed] = {}

    def page(rel: str) -> _Parsed:
        if rel not in parsed:
            if known is not None and rel in known:
                links, ids = known[rel]
                parsed[rel] = _Parsed(tuple((str(a), bool(b)) for a, b in links),
                                      frozenset(str(i) for i in ids))  # fmt: skip
            else:
                found, found_ids = parse_links((root / rel).read_text(encoding="utf-8"))
                parsed[rel] = _Parsed(tuple(found), frozenset(found_ids))
        return parsed[rel]

    broken: list[BrokenLink] = []
    for rel_page in sorted(f for f in files if f.endswith(".html")):
        base_dir = posixpath.dirname(rel_page)
        for link, resource in page(rel_page).links:
            if rel_page == "404.html" and link.startswith(base) and not link.startswith("//"):
                link = link[len(base) :] or "./"
            reason = _check(link, resource, base_dir, rel_page, files, dirs, page)
            if reason:
                broken.append(BrokenLink(rel_page, link, reason))
    if parsed_out is not None:
        for rel, p in parsed.items():
            parsed_out[rel] = [[list(x) for x in p.links], sorted(p.ids)]
    return sorted(set(broken))


def _check(
    link: str,
    resource: bool,
    base: str,
    rel_page: str,
    files: set[str],
    dirs: set[str],
    page: object,
) -> str:
    parts = urlsplit(link)
    if parts.scheme == "data":
        return ""  # inline data (an empty favicon): no request leaves the page
    if parts.scheme or link.startswith("//"):
        if resource or parts.scheme not in ("http", "https", "mailto"):
            return "external resource or scheme"
        return ""
    if link.startswith("/"):
        return "absolute path (use a relative link)"
    if not parts.path:
        target = rel_page
    else:
        target = posixpath.normpath(posixpath.join(base, unquote(parts.path)))
        if target == "..":
            return "points outside the site"
        if target.startswith("../"):
            return "points outside the site"
        target = "" if target == "." else target
        if parts.path.endswith("/") or target in dirs:
            target = posixpath.join(target, "index.html") if target else "index.html"
    if target not in files:
        return "missing file"
    if parts.fragment and target.endswith(".html"):
        assert callable(page)
        if parts.fragment not in page(target).ids:
            return "missing #fragment"
    return ""
