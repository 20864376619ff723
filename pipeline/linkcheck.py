"""The internal link checker run at the end of every build.

Every ``href``/``src`` in every HTML file of the built site is resolved against the file's own
location. A link is broken when it points inside the site to a file that does not exist (a
directory link needs its ``index.html``) or to a ``#fragment`` that no element of the target
page carries. Resource links (``src``, stylesheets, icons, scripts) must stay inside the site:
an external one is reported too, because the site must work offline and request nothing from
elsewhere. Outbound ``<a href="https://…">`` links (a system's web site) are allowed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

_RESOURCE_ATTRS = {("script", "src"), ("img", "src"), ("link", "href"), ("iframe", "src"),
                   ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"),
                   ("object", "data")}


@dataclass(frozen=True, order=True)
class BrokenLink:
    """One broken link: the page it is on, the link and why."""

    page: str
    link: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.link} ({self.reason})"


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str, bool]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and (name == "id" or tag == "a"):
                self.ids.add(value)
            if name in ("href", "src", "data") and tag != "base":
                rel = dict(attrs).get("rel") or ""
                resource = (tag, name) in _RESOURCE_ATTRS and not (
                    tag == "link" and rel == "alternate"
                )
                self.links.append((name, value, resource))


def _parse(path: Path) -> _Collector:
    c = _Collector()
    c.feed(path.read_text(encoding="utf-8"))
    c.close()
    return c


def check_site(root: Path) -> list[BrokenLink]:
    """Check every HTML page under ``root``; return the broken links, sorted."""
    root = Path(root)
    pages = sorted(p for p in root.rglob("*.html") if p.is_file())
    parsed: dict[str, _Collector] = {}

    def page(rel: str) -> _Collector | None:
        if rel not in parsed:
            f = root / rel
            if not f.is_file():
                return None
            parsed[rel] = _parse(f)
        return parsed[rel]

    broken: list[BrokenLink] = []
    for path in pages:
        rel_page = path.relative_to(root).as_posix()
        here = page(rel_page)
        assert here is not None
        base = posixpath.dirname(rel_page)
        for _attr, link, resource in here.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                if resource or parts.scheme not in ("http", "https", "mailto"):
                    broken.append(BrokenLink(rel_page, link, "external resource or scheme"))
                continue
            if link.startswith("/"):
                broken.append(BrokenLink(rel_page, link, "absolute path (use a relative link)"))
                continue
            target = posixpath.normpath(posixpath.join(base, unquote(parts.path))) if parts.path else rel_page
            if target.startswith("../") or target == "..":
                broken.append(BrokenLink(rel_page, link, "points outside the site"))
                continue
            if target == ".":
                target = ""
            candidate = root / target
            if parts.path.endswith("/") or (parts.path and candidate.is_dir()) or target == "":
                target = posixpath.join(target, "index.html") if target else "index.html"
                candidate = root / target
            if not candidate.is_file():
                broken.append(BrokenLink(rel_page, link, "missing file"))
                continue
            if parts.fragment and target.endswith(".html"):
                dest = page(target)
                if dest is None or parts.fragment not in dest.ids:
                    broken.append(BrokenLink(rel_page, link, "missing #fragment"))
    return sorted(set(broken))
