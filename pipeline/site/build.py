"""The ``build`` use case: the read-only store → page models → specs → HTML → ``--out``.

Phases (mkdocs-style): read everything from the store once (:func:`read_snapshot`), export
the data files, compute every page model, render and write everything into a temporary
directory next to ``out``, check every internal link, write the SHA-256 manifest, then swap
the new site into place. Any failure before the swap leaves the previous site untouched.

Deterministic: iteration is sorted, JSON keys are sorted and the only timestamp is
``SOURCE_DATE_EPOCH`` (or, without it, the newest release/submission date in the store), so
the same store gives byte-identical output.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.errors import BuildError
from pipeline.site.config import DEFAULT, SiteConfig
from pipeline.store.rows import Snapshot

MARKER = ".gmeter-site"
"""A file at the root of every built site: ``build`` only ever replaces a folder that has it
(or is empty), so ``--out ~`` cannot delete a home directory."""
KEEP = ("README.md", "CNAME", ".gitkeep")
"""Files of an existing ``--out`` folder carried into the new site (``public/README.md`` is
committed in the repository; ``CNAME`` configures a GitHub Pages domain)."""
_REPLACEABLE = {MARKER, ".nojekyll", *KEEP}

ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BuildReport:
    """What a build wrote."""

    out: Path
    pages: int
    files: int
    bytes: int
    versions: tuple[str, ...]
    benchmarks: int
    seconds: float


def site_date(snap_dates: list[dt.date]) -> dt.date:
    """``SOURCE_DATE_EPOCH`` as a UTC date, else the newest date in the store, else 1970-01-01."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return dt.datetime.fromtimestamp(int(epoch), dt.UTC).date()
        except (ValueError, OverflowError, OSError) as exc:
            raise BuildError(
                f"SOURCE_DATE_EPOCH={epoch!r} is not a Unix time",
                hint="unset it or give seconds since 1970",
            ) from exc
    return max(snap_dates, default=dt.date(1970, 1, 1))


def read_snapshot(store: Any) -> Snapshot:
    """Read everything the site shows from an open store (see :mod:`pipeline.store.snapshot`)."""
    from pipeline.store.snapshot import read_snapshot as read

    return read(store, site_date=site_date, generator=f"gmeter {__version__}")


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise BuildError(f"{out} exists and is not a folder", hint="pass another --out")
    if out.is_dir():
        names = {p.name for p in out.iterdir()}
        if names and MARKER not in names and not names <= _REPLACEABLE:
            raise BuildError(
                f"refusing to replace {out}: it is not empty and was not built by gmeter",
                hint=f"pass an empty or new folder as --out (a gmeter site has {MARKER})",
            )


def _sweep_stale(out: Path) -> None:
    """Remove work folders left by builds that were killed (``kill -9`` skips ``finally``).

    Each build's folder carries its process id (``.public.build-<pid>-…``); a folder whose
    process is gone is removed, one of a build still running (a concurrent build) is kept.
    """
    import re

    pattern = re.compile(rf"^\.{re.escape(out.name)}\.(build|old)-(\d+)-")
    for p in out.parent.iterdir():
        m = pattern.match(p.name)
        if not m or not p.is_dir() or p.is_symlink():
            continue
        pid = int(m.group(2))
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
            continue
        except OSError:
            continue  # another user's process: leave its folder
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                zombie = b") Z " in fh.read()
        except OSError:
            zombie = False
        if zombie:
            shutil.rmtree(p, ignore_errors=True)


def _swap(tmp: Path, out: Path) -> None:
    """Move the finished site into place (two renames on one file system)."""
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=out.parent))
        old.rmdir()
        os.replace(out, old)
        try:
            os.replace(tmp, out)
        except OSError:
            os.replace(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def base_url(value: str | None = None) -> str:
    """The site's absolute base path: ``value``, else ``$GMETER_BASE_URL``, else ``/``.

    On GitHub Actions without either, a project site (``GITHUB_REPOSITORY=owner/repo``) is
    served under ``/repo/``, a user site (``owner.github.io``) under ``/``. Only the 404 page
    needs it (it is served at any depth); every other link is relative.
    """
    raw = (value if value is not None else os.environ.get("GMETER_BASE_URL", "")).strip()
    if not raw and os.environ.get("GITHUB_ACTIONS") == "true":
        owner, _, repo = os.environ.get("GITHUB_REPOSITORY", "").partition("/")
        if repo and repo.lower() != f"{owner.lower()}.github.io":
            raw = f"/{repo}/"
    if not raw:
        return "/"
    from urllib.parse import urlsplit

    path = urlsplit(raw).path if "://" in raw else raw
    if any(c in path for c in "\"'<> \n\t"):
        raise BuildError(f"base URL {raw!r} is not a plain path", hint="e.g. /my-repo/")
    return "/" + path.strip("/") + "/" if path.strip("/") else "/"


def sitemap(paths: list[str], root: str) -> str:
    """``sitemap.xml`` of the given page paths under ``root`` (sitemaps.org 0.9)."""
    from xml.sax.saxutils import escape

    urls = []
    for p in sorted(set(paths)):
        loc = root + (p[: -len("index.html")] if p.endswith("index.html") else p)
        urls.append(f"<url><loc>{escape(loc)}</loc></url>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + "\n".join(urls)
        + "\n</urlset>\n"
    )


def build_site(
    db_path: Path,
    out: Path,
    *,
    progress: ProgressFn | None = None,
    base: str | None = None,
    search: bool = True,
    incremental: bool = True,
    config: SiteConfig = DEFAULT,
    overrides: Path | None = None,
) -> BuildReport:
    """Build the whole site from the store at ``db_path`` into ``out`` (atomically).

    ``base`` is the site's absolute base path (see :func:`base_url`); ``search`` builds the
    Pagefind index (``pagefind/``). With ``incremental`` (the default) the previous build of
    ``out`` is used (:mod:`pipeline.site.incremental`): nothing is done when nothing changed,
    and unchanged files are taken over; the result is the same either way. ``config`` is the
    repository's ``gmeter.toml`` (its URL gives the base path when neither ``base`` nor
    ``$GMETER_BASE_URL`` does); ``overrides`` is the repository's ``site_templates/`` folder,
    whose files replace the package templates and static assets of the same name.

    Raises
    ------
    BuildError
        On a broken internal link, an unusable ``--out`` or a failed phase; ``out`` is then
        left exactly as it was.
    StoreError
        When the store is missing or not a gmeter store.
    """
    from pipeline.site.assets import store_cache_dir, using_cache
    from pipeline.site.incremental import BuildState, state_path

    started = time.perf_counter()
    if base is None and not os.environ.get("GMETER_BASE_URL", "").strip() and config.url:
        base = config.base_path
    base_path = base_url(base)
    out = Path(out).resolve()
    _check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale(out)
    cache = store_cache_dir(Path(db_path))
    states = state_path(Path(db_path).resolve().parent, out)
    old = BuildState.load(states) if incremental and (out / MARKER).is_file() else None
    kept_files = {name: (out / name).read_bytes() for name in KEEP
                  if (out / name).is_file() and not (out / name).is_symlink()}  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-{os.getpid()}-", dir=out.parent))
    pending: list[Any] = []  # exports left running in threads (see exports.export_data)
    try:
        with using_cache(cache):
            return _build(db_path, out, tmp, old, states, kept_files, base_path, search,
                          incremental, progress, started, config, overrides, pending)
    finally:
        for work in pending:  # a failed build: none may still write into tmp or the cache
            work.join()
        # the override folder is this build's only (render is loaded only when pages change)
        loaded = sys.modules.get("pipeline.site.render")
        if loaded is not None:
            loaded.use_overrides(None)
        # Whatever failed, the half-built folder goes and the previous site stays.
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _overrides_digest(folder: Path | None) -> str:
    """SHA-256 of a repository's ``site_templates/`` (names and bytes; ``""`` without one)."""
    if folder is None:
        return ""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _spec_text(render: Any, spec: Any) -> str:
    """The text of an extra file: given, or its Vega-Lite spec as JSON."""
    return str(spec.text) if spec.spec is None else render.dumps(spec.spec) + "\n"


class _PageWriter:
    """Writes streamed pages and their extra files into the ledger, sizing downloads as they come.

    Neither a page's model nor an extra file's text outlives its writing (a large site holds
    hundreds of megabytes of chart drawings). ``offer`` takes the pages of one pass in order,
    with the extra files made since the previous page; what is offered while not ``ready`` (a
    chart of it still to draw, blank for now) waits for the next pass, which :meth:`restart`
    begins: pages and files are written from the first one not written, in the same order.
    """

    def __init__(self, ledger: Any, render: Any, assemble: Any, code: str,
                 extra: dict[str, Any], sizes: dict[str, int], progress: ProgressFn | None,
                 expected: int) -> None:  # fmt: skip
        self.ledger, self.render, self.assemble = ledger, render, assemble
        self.code, self.extra, self.progress = code, extra, progress
        self.base = dict(sizes)
        self.expected = expected  # the previous build's page count (the progress total)
        self.written = 0  # pages written, counted from the site's first page
        self.files_written = 0  # extra files written, counted in the order they are made
        self.total = 0  # their bytes
        self.paths: set[str] = set()  # the extra files written (in any pass)
        self.restart()

    def restart(self) -> None:
        """Begin a pass over the pages from the first (those written stay written)."""
        self.count = 0
        self.listed: list[str] = []
        self.sizes = dict(self.base)
        self.made = 0  # extra files made in this pass

    def see(self, specs: list[Any], *, write: bool) -> None:
        """Size (and with ``write``, write) the extra files in ``specs``, then empty it."""
        for spec in specs:
            text = _spec_text(self.render, spec)
            self.sizes[spec.path] = len(text.encode("utf-8"))
            if write and self.made >= self.files_written:
                if spec.path in self.paths:  # made twice: the last one counts, as in a dict
                    (self.ledger.tmp / spec.path).unlink()  # never write through a taken link
                self.total += self.ledger.text(spec.path, text)
                self.paths.add(spec.path)
                self.files_written = self.made + 1
            self.made += 1
        specs.clear()  # only ever appended to: what is seen is let go

    def offer(self, page: Any, specs: list[Any], *, ready: bool) -> None:
        """Write ``page`` (the next of this pass) unless written before or not ``ready``."""
        from pipeline.site.incremental import key_of

        index = self.count
        self.count += 1
        writing = ready and index == self.written
        self.see(specs, write=writing or index < self.written)
        # release copies point to the current pages (canonical): only current pages are listed
        if not page.path.startswith("releases/") and page.path != "404.html":
            self.listed.append(page.path)
        if not writing:
            return  # written in an earlier pass, or waiting (with every later page) for the next
        (page,) = self.assemble.with_sizes([page], self.sizes)
        key = key_of(self.code, page.template, page.context, self.extra)

        def make(p: Any = page) -> str:
            return self.render.render(p.template, p.context, **self.extra)

        self.total += self.ledger.page(page.path, key, make)
        self.written += 1
        if self.progress and self.written % 50 == 0:
            self.progress("rendering pages", self.written, max(self.expected, self.written))


def _build(
    db_path: Path,
    out: Path,
    tmp: Path,
    old: Any,
    states: Path,
    kept_files: dict[str, bytes],
    base_path: str,
    search: bool,
    incremental: bool,
    progress: ProgressFn | None,
    started: float,
    config: SiteConfig = DEFAULT,
    overrides: Path | None = None,
    pending: list[Any] | None = None,
) -> BuildReport:
    """The phases of :func:`build_site` inside its temporary folder and chart cache.

    ``pending`` collects the exports left running in threads; each is waited for before the
    files are listed for the manifest.
    """
    pending = [] if pending is None else pending
    from pipeline.site.incremental import Ledger, code_digest, key_of
    from pipeline.site.model import site_url
    from pipeline.store import open_store

    with open_store(Path(db_path), read_only=True) as store:
        absolute = site_url(base_path, config.url)
        # gmeter.toml and the repository's own templates are inputs of every page too
        own = _overrides_digest(overrides)
        whole = key_of(code_digest(), sorted(store.fingerprints().items()), base_path,
                       absolute, search, os.environ.get("SOURCE_DATE_EPOCH", "").strip(),
                       sorted(kept_files.items()), config, own)  # fmt: skip
        if old is not None and old.key == whole and old.intact(out):
            # Nothing the site is made from changed, and the site is as it was left.
            r = old.report
            return BuildReport(out, int(r["pages"]), int(r["files"]), int(r["bytes"]),
                               tuple(r["versions"]), int(r["benchmarks"]),
                               time.perf_counter() - started)  # fmt: skip
        # Something changed: only now the modules that make pages (altair, jinja2) load.
        from pipeline.site import assemble as site_pages
        from pipeline.site import exports, linkcheck, render, svgrender
        from pipeline.site import model as site_model
        from pipeline.site.assets import write_assets

        render.use_overrides(str(overrides) if overrides is not None else None)
        ledger = Ledger(tmp, out, old)
        snapshot = read_snapshot(store)
        site = site_model.analyse(snapshot, config)
        exports.export_data(store, tmp / "data", ledger, pending)
        exports.write_raw_files(store, site, tmp, ledger)
        # Files every board links, made before the pages stream: their sizes are known first.
        api = {rel: render.dumps(doc) + "\n"
               for rel, doc in sorted(exports.api_documents(site).items())}  # fmt: skip
        sizes = {rel: len(text.encode("utf-8")) for rel, text in api.items()}
        sizes.update((s.path, len(_spec_text(render, s).encode("utf-8")))
                     for s in site_pages.site_wide_files(site, base_path))  # fmt: skip
        # DuckDB writes other bytes (and sizes) each time: its files' sizes would make pages
        # differ between builds of one store, so they are left unsaid
        sizes.update((rel, n) for rel, n in exports.file_sizes(tmp, "data").items()
                     if not rel.endswith(".duckdb"))  # fmt: skip
        code = key_of(code_digest(), own)
        extra = {
            "generator": snapshot.generator,
            "built": snapshot.site_date.isoformat(),
            "site_url": absolute or base_path,
            "site": config,
        }
        expected = int(old.report.get("pages", 0)) if old is not None else 0
        pages = _PageWriter(ledger, render, site_pages, code, extra, sizes,
                            progress, expected)  # fmt: skip
        specs: list[Any] = []
        with svgrender.batched() as batch:
            # pages are written as they come until a chart is deferred (a cold chart cache);
            # from then on this pass only lists the charts to draw
            for page in site_pages.iter_pages(site, specs, base_path):
                pages.offer(page, specs, ready=not batch.deferred)
        if batch.deferred:  # many new charts: drawn on all cores, then the rest of the pages
            svgrender.draw_all(batch)
            specs = []
            pages.restart()
            for page in site_pages.iter_pages(site, specs, base_path):
                pages.offer(page, specs, ready=True)
        pages.see(specs, write=True)  # the files made after the last page
        if progress:
            progress("rendering pages", pages.written, pages.written)
        total = pages.total
        n_pages = pages.count
        listed = pages.listed
    # Pagefind reads the pages only: it indexes (in its own process) while the rest is written
    # and the links are checked; it writes only under pagefind/, which no page links
    indexing = None
    if search:
        from pipeline.site.search import start_index

        pages_key = key_of(sorted((rel, v[0]) for rel, v in ledger.new.files.items()
                                  if rel.endswith(".html")))  # fmt: skip
        if not ledger.reuse_tree("pagefind/", pages_key):
            frozen = {vd.prefix.split("/")[0] for vd in site.versions if vd.prefix}
            indexing = start_index(tmp, skip=sorted(frozen))
    try:
        for rel, text in api.items():
            total += ledger.text(rel, text)
        total += ledger.text("feed.xml", render.render("feed.xml", exports.feed(site), **extra))
        total += ledger.text("sitemap.xml", sitemap(listed, absolute or base_path))
        write_assets(tmp, overrides)
        ledger.adopt_tree("assets")
        for name, data in kept_files.items():
            ledger.write(name, data)
        ledger.text(".nojekyll", "")
        ledger.text(MARKER, "This folder is a site built by gmeter; `gmeter build` replaces it.\n")
        for work in pending:  # the compacted DuckDB copy, made while the pages were
            work.wait()
        # the manifest, written after the index, is linked from every page
        broken = linkcheck.check_site(tmp, base=base_path, known=ledger.known_links(),
                                      parsed_out=ledger.new.links,
                                      later=("data/manifest.json",))  # fmt: skip
        if indexing is not None:
            indexing.wait()
            ledger.adopt_tree("pagefind")
            ledger.new.keys["pagefind/"] = pages_key
    finally:
        if indexing is not None:
            indexing.stop()
    ledger.adopt_tree()  # anything another writer left
    listing = ledger.manifest(exclude="data/manifest.json")
    ledger.text("data/manifest.json", render.dumps(listing) + "\n")
    if broken:
        shown = "\n".join(f"  {b}" for b in broken[:20])
        more = f"\n  … and {len(broken) - 20} more" if len(broken) > 20 else ""
        raise BuildError(
            f"{len(broken)} broken internal link(s):\n{shown}{more}",
            hint="the previous site was left in place",
        )
    n_files = len(listing["files"]) + 1
    n_bytes = sum(int(f["size"]) for f in listing["files"])
    versions = tuple(v.version.name for v in site.versions)
    n_benchmarks = len(site.latest.benchmarks) if site.latest else 0
    _swap(tmp, out)
    ledger.new.key = whole
    ledger.new.report = {"pages": n_pages, "files": n_files, "bytes": n_bytes,
                         "versions": list(versions), "benchmarks": n_benchmarks}
    if incremental:
        ledger.new.save(states)
    return BuildReport(out, n_pages, n_files, n_bytes, versions, n_benchmarks,
                       time.perf_counter() - started)
