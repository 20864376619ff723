"""The site configuration, ``gmeter.toml`` at the root of a benchmark repository.

One file says whose site this is: its title and description, its public URL (the base path of
the site follows from it), the licence of its data (an SPDX identifier), its repository, its
maintainers and a contact. The site uses it everywhere: page titles and header, the Atom feed's
id and title, ``CITATION.cff`` and BibTeX, the about page and the Submit page.

A repository without ``gmeter.toml`` gets :data:`DEFAULT` (gmeter's own demo values), so a
checkout of an older repository still builds.

Example::

    [site]
    title = "Toy board"
    description = "Small agents on toy tasks."
    url = "https://example.org/toy-board/"
    licence = "CC-BY-4.0"
    repository = "https://github.com/example/toy-board"
    maintainers = ["Ada Lovelace"]
    contact = "ada@example.org"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pipeline.errors import GmeterError, Problem, ValidationFailed
from pipeline.limits import parse_toml

CONFIG_FILE = "gmeter.toml"
"""The file name of the site configuration, at the repository root."""

OVERRIDES_DIR = "site_templates"
"""A repository's own templates: a file here replaces the packaged one of the same name."""

_SPDX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+\-]*( (AND|OR|WITH) [A-Za-z0-9][A-Za-z0-9.+\-]*)*$")
_FIELDS = ("title", "description", "url", "licence", "repository", "maintainers", "contact")
_MAX_TEXT = 300


@dataclass(frozen=True)
class SiteConfig:
    """Whose site this is (see the module docstring for the file)."""

    title: str
    description: str = ""
    url: str = ""
    licence: str = ""
    repository: str = ""
    maintainers: tuple[str, ...] = ()
    contact: str = ""

    @property
    def base_path(self) -> str:
        """The site's absolute base path, from :attr:`url` (``/`` without one)."""
        path = urlsplit(self.url).path.strip("/") if self.url else ""
        return f"/{path}/" if path else "/"

    @property
    def feed_id(self) -> str:
        """An Atom id unique to this site: its URL, else a ``tag:`` URI of its title."""
        if self.url:
            return self.url.rstrip("/") + "/feed.xml"
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        return "tag:gmeter,2024:feed" if slug in ("", "gmeter") else f"tag:gmeter,2024:{slug}/feed"

    def entry_id(self, date: str, key: str, path: str) -> str:
        """An Atom entry id unique across sites: the page's URL and the date, else a ``tag:``.

        ``key`` is ``release/benchmark`` and ``path`` the board's page under the site root.
        """
        if self.url:
            return f"{self.url.rstrip('/')}/{path}#{date}"
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        scope = "" if slug in ("", "gmeter") else slug + "/"
        return f"tag:gmeter,{date}:{scope}{key}"

    @property
    def long_title(self) -> str:
        """The site's name in feeds and citations ("gmeter leaderboards" for gmeter's own)."""
        return "gmeter leaderboards" if self.title == "gmeter" else self.title

    @property
    def in_text(self) -> str:
        """The site's name inside a sentence ("the gmeter leaderboards" for gmeter's own)."""
        return "the gmeter leaderboards" if self.title == "gmeter" else self.title

    @property
    def tagline(self) -> str:
        """What follows the name in a page's default description (starts with a colon)."""
        if self.title == "gmeter":
            return (" of general machine intelligence: scores recomputed from submitted "
                    "bundles, with intervals and tie groups")
        return f": {self.description[:160]}" if self.description else ""

    @property
    def home_title(self) -> str:
        """The home page's heading."""
        return "Leaderboards of general machine intelligence" if self.title == "gmeter" \
            else self.title

    @property
    def authors(self) -> tuple[str, ...]:
        """Who to cite: the maintainers, else "<title> contributors"."""
        return self.maintainers or (f"{self.title} contributors",)

    @property
    def clone_url(self) -> str:
        """``git clone`` address of the repository (``.git`` added to a GitHub URL)."""
        repo = self.repository.rstrip("/")
        if repo and "github.com/" in repo and not repo.endswith(".git"):
            return repo + ".git"
        return repo


DEFAULT = SiteConfig(
    title="gmeter",
    description="",
    url="",
    licence="MIT",
    repository="",
    maintainers=("gmeter contributors",),
)
"""What a repository without ``gmeter.toml`` gets (gmeter's name, no description)."""


def _text(name: str, value: Any, problems: list[Problem], file: str) -> str:
    if not isinstance(value, str):
        problems.append(Problem(file, f"site.{name}", "is not a string", "quote the value"))
        return ""
    if len(value) > _MAX_TEXT or any(ord(c) < 32 for c in value):
        problems.append(Problem(file, f"site.{name}", f"is longer than {_MAX_TEXT} characters "
                                "or holds control characters", "shorten it to one line"))
        return ""
    return value.strip()


def _url(name: str, value: str, problems: list[Problem], file: str) -> str:
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(
        c in value for c in "\"'<> \\"
    ):
        problems.append(Problem(file, f"site.{name}", f"{value!r} is not an http(s) URL",
                                "write e.g. https://example.org/my-board/"))
        return ""
    return value


def parse_config(data: bytes, file: str = CONFIG_FILE) -> SiteConfig:
    """Parse ``gmeter.toml`` bytes into a :class:`SiteConfig`.

    Raises
    ------
    ValidationFailed
        Naming the file and every bad field (unknown keys included).
    """
    doc, problems = parse_toml(file, data)
    if doc is None:
        raise ValidationFailed(problems)
    site = doc.get("site")
    if not isinstance(site, dict):
        raise ValidationFailed([Problem(file, "site", "the [site] table is missing",
                                        "run `gmeter init` or add [site] with title = \"…\"")])
    for key in sorted(set(doc) - {"site"}):
        problems.append(Problem(file, key, "is not a known table", "keep only [site]"))
    for key in sorted(set(site) - set(_FIELDS)):
        problems.append(Problem(file, f"site.{key}", "is not a known field",
                                f"use one of {', '.join(_FIELDS)}"))
    title = _text("title", site.get("title", ""), problems, file)
    if not title:
        problems.append(Problem(file, "site.title", "is missing or empty", "give the site a title"))
    texts = {k: _text(k, site.get(k, ""), problems, file)
             for k in ("description", "url", "licence", "repository", "contact")}
    texts["url"] = _url("url", texts["url"], problems, file)
    texts["repository"] = _url("repository", texts["repository"], problems, file)
    if texts["licence"] and not _SPDX.match(texts["licence"]):
        problems.append(Problem(file, "site.licence", f"{texts['licence']!r} is not an SPDX "
                                "identifier", "e.g. CC-BY-4.0, CC0-1.0, ODbL-1.0"))
    raw = site.get("maintainers", [])
    if not isinstance(raw, list):
        problems.append(Problem(file, "site.maintainers", "is not a list", 'write ["Name"]'))
        raw = []
    maintainers = tuple(m for m in (_text("maintainers", m, problems, file) for m in raw) if m)
    if problems:
        raise ValidationFailed(problems)
    return replace(DEFAULT, title=title, maintainers=maintainers, **texts)


def load_config(root: Path) -> SiteConfig:
    """The configuration of the repository at ``root``: its ``gmeter.toml``, else :data:`DEFAULT`.

    Raises
    ------
    ValidationFailed
        When the file exists but is not a valid configuration.
    """
    path = Path(root) / CONFIG_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return DEFAULT
    except OSError as exc:
        raise GmeterError(f"cannot read {path}: {exc.strerror}", hint="check the file") from exc
    return parse_config(data, str(path))


def template_overrides(root: Path) -> Path | None:
    """The repository's ``site_templates/`` folder when it has one (else ``None``).

    The site's templates and static assets ship inside gmeter (``pipeline/site/templates/``);
    a maintainer who wants a different page layout or stylesheet copies one file into
    ``site_templates/`` under the same relative name (``base.html``, ``static/site.css``,
    ``submit_guide.md``) and edits it there, so an upgrade of gmeter changes every other file.
    """
    folder = Path(root) / OVERRIDES_DIR
    return folder if folder.is_dir() else None
