"""Static assets of the site: the Vega JavaScript bundle and the CSS/JS in ``templates/static``.

The Vega, Vega-Lite and vega-embed libraries come from vl-convert-python's bundled copy
(:func:`vl_convert.javascript_bundle`), so a build needs no network and the site requests
nothing outside itself. The bundle is wrapped in a function so that its many top-level
declarations do not leak into the page's global scope; it still sets ``window.vegaEmbed``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pipeline.errors import BuildError


def static_files(overrides: Path | None = None) -> list[Traversable]:
    """The site's own CSS, JavaScript and favicon, read as package data (sorted by name).

    A file in ``overrides/static/`` (a repository's ``site_templates/static/``) replaces the
    package file of the same name, or adds one.
    """
    folder = resources.files("pipeline.site").joinpath("templates", "static")
    files: dict[str, Traversable] = {f.name: f for f in folder.iterdir() if f.is_file()}
    own = overrides / "static" if overrides is not None else None
    if own is not None and own.is_dir():
        files.update({f.name: f for f in own.iterdir() if f.is_file()})
    return [files[name] for name in sorted(files)]


_CACHE: list[Path] = []  # the folder of the build in progress (innermost last)


def cache_dir() -> Path:
    """Where drawn charts, the Vega bundle and the compact store are cached.

    ``$GMETER_CACHE_DIR``, else the folder of the build in progress (:func:`using_cache`:
    ``cache/`` next to the store, i.e. ``.gmeter/cache`` in a repository, which CI can keep
    between runs), else the user's XDG cache.
    """
    env = os.environ.get("GMETER_CACHE_DIR")
    if env:
        return Path(env)
    if _CACHE:
        return _CACHE[-1]
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gmeter"


def store_cache_dir(db_path: Path) -> Path:
    """The cache folder of builds from the store at ``db_path``.

    ``$GMETER_CACHE_DIR``, else ``cache/`` in the store's folder.
    """
    env = os.environ.get("GMETER_CACHE_DIR")
    return Path(env) if env else Path(db_path).resolve().parent / "cache"


@contextmanager
def using_cache(folder: Path) -> Iterator[None]:
    """Within the block, :func:`cache_dir` is ``folder`` (unless ``$GMETER_CACHE_DIR``)."""
    _CACHE.append(Path(folder))
    try:
        yield
    finally:
        _CACHE.pop()


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Return the Vega + Vega-Lite + vega-embed bundle as one classic script.

    Generating it takes seconds, so it is cached per process and on disk, keyed by the
    vl-convert version (the cache is only an optimisation: any failure to use it is ignored).
    """
    try:
        import vl_convert
    except ImportError as exc:  # pragma: no cover - a dependency of gmeter
        raise BuildError(
            "vl-convert-python is not installed", hint="reinstall gmeter (make install)"
        ) from exc
    version = str(getattr(vl_convert, "__version__", "unknown"))
    key = hashlib.sha256(f"{version}|{vl_convert.__file__}".encode()).hexdigest()
    cached = cache_dir() / f"vega-{version}-{key[:12]}.js"
    try:
        text = cached.read_text(encoding="utf-8")
        if text.endswith("}).call(window);\n"):
            return text
    except OSError:
        pass
    text = _generate(vl_convert)
    cache_put(cached, text)
    return text


CODE_KEPT_SECONDS = 7 * 24 * 3600
"""Cache folders of another gmeter code (:func:`code_cache_dir`) unused this long are removed."""


def code_cache_dir(name: str) -> Path:
    """``cache_dir()/name/<code>``: files only this code makes (kept templates, final drawings).

    Each version of gmeter's code has its own folder, so one made by an older code is never
    read; folders of other codes unused for :data:`CODE_KEPT_SECONDS` are removed (a cache
    kept by CI would otherwise grow with every upgrade). A process marks its folder used once.
    """
    from pipeline.site.incremental import code_digest

    return _code_cache_dir(cache_dir(), name, code_digest()[:16])


@lru_cache(maxsize=16)
def _code_cache_dir(cache: Path, name: str, code: str) -> Path:
    root = cache / name
    here = root / code
    try:
        now = time.time()
        for old in root.iterdir() if root.is_dir() else ():
            if old.is_dir() and not old.is_symlink() and old != here \
                    and now - old.stat().st_mtime > CODE_KEPT_SECONDS:  # fmt: skip
                shutil.rmtree(old, ignore_errors=True)
        here.mkdir(parents=True, exist_ok=True)
        os.utime(here)  # in use
    except OSError:
        pass  # a read-only cache: nothing is kept, nothing fails
    return here


def cache_put(path: Path, text: str) -> None:
    """Write a cache file atomically (temporary file, then rename); a failure is ignored.

    The cache only saves time: a read-only or full cache folder must never fail a build.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _generate(m: Any) -> str:
    """Ask vl-convert for the bundle and wrap it (``m`` is the ``vl_convert`` module)."""
    versions = (
        f"vega {m.get_vega_version()}, vega-lite {m.get_vegalite_versions()[-1]}, "
        f"vega-embed {m.get_vega_embed_version()}"
    )
    body = m.javascript_bundle()
    return (
        f"/* {versions}; bundled by vl-convert-python "
        f"{getattr(m, '__version__', '')} (BSD-3-Clause). */\n"
        f"(function () {{\n{body}\n}}).call(window);\n"
    )


def write_assets(site_root: Path, overrides: Path | None = None) -> list[Path]:
    """Write ``assets/`` (vega.js, site.css, site.js, favicon) under ``site_root``.

    ``overrides`` is the repository's ``site_templates/`` (see :func:`static_files`).
    """
    out = site_root / "assets"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    vega = out / "vega.js"
    vega.write_text(vega_bundle(), encoding="utf-8")
    written.append(vega)
    for src in static_files(overrides):
        dst = out / src.name
        dst.write_bytes(src.read_bytes())
        written.append(dst)
    return written
