"""Redirect pages at the addresses system pages had before their slugs became stable.

Until gmeter 0.1 a system page lived at ``systems/<slugify(name)>/`` (a hash suffix only when
two names of the same version slugged alike); since then it lives at
``systems/<stable_slug(name)>/`` (:func:`pipeline.site.model.stable_slug`), which never moves.
Links to the former addresses — bookmarks, papers, and the frozen release trees
``releases/<name>/systems/...`` other sites link to — keep working through a small static
page at each former address (meta refresh, a canonical link, a plain link, ``noindex``).

A former address gets a redirect only when it is unambiguous: exactly one system name of that
version slugs to it, and no page of the site lives there. Everything is a function of the
names, so rebuilding gives the same bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from pipeline.site.model import VersionData, href, slugify
from pipeline.site.pages import Page, RedirectPage


def former_slugs(names: Iterable[str], current: dict[str, str]) -> dict[str, str]:
    """Former slug → the one name it now stands for (ambiguous former slugs are left out).

    ``current`` maps each name to its page slug today; a former slug that is some page's
    slug today, or that several names share, gets no redirect.
    """
    by_slug: dict[str, list[str]] = defaultdict(list)
    for n in sorted(set(names)):
        by_slug[slugify(n)].append(n)
    taken = set(current.values())
    return {
        old: group[0]
        for old, group in sorted(by_slug.items())
        if len(group) == 1 and old not in taken and current.get(group[0], old) != old
    }


def redirect_pages(
    vd: VersionData,
    prefix: str,
    existing: set[str],
    home: Callable[[str], str] | None = None,
) -> list[Page]:
    """Redirect pages for one version's tree (``prefix`` is ``""`` or ``releases/<name>/``).

    ``existing`` holds every page path already built: a former address never replaces one.
    ``home(name)`` is the tree holding the system's page (a light release copy links to the
    current one); without it, ``prefix``.
    """
    out = []
    for old, name in former_slugs(vd.slugs, vd.slugs).items():
        path = f"{prefix}systems/{old}/index.html"
        if path in existing:
            continue
        tree = home(name) if home is not None else prefix
        target = href(path, f"{tree}systems/{vd.slugs[name]}/")
        out.append(Page(path, "redirect.html", RedirectPage(f"{name} (moved)", name, target)))
    return out
