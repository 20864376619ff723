"""Rendering with Jinja: the only module that imports jinja2.

The environment autoescapes everything (HTML and the Atom feed alike) and uses
``StrictUndefined``, so a template that names a field its context lacks fails the build instead
of printing nothing. Templates receive one typed context (``page``) from :mod:`pipeline.site.pages`;
chart specs reach the page only through the ``tojson`` filter, which escapes ``<``, ``>``, ``&``
and ``'``, so data such as ``</script>`` in a system name stays inert text.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATE_PACKAGE = "pipeline.site"
"""The package whose ``templates/`` folder holds the site's templates (wheel package data)."""

CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'"
)
"""The Content-Security-Policy of every page: nothing outside the site is requested or run.

``style-src 'unsafe-inline'`` is there because Vega sets style attributes on the SVG it draws;
scripts stay ``'self'`` only (vega-embed runs with its CSP-safe expression interpreter);
``'wasm-unsafe-eval'`` lets the site's own search library (Pagefind) compile its WebAssembly,
which evaluates no JavaScript."""


def _scrub(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Deterministic compact JSON (sorted keys, no NaN: non-finite numbers become ``null``)."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except ValueError:  # a NaN or an infinity somewhere: scrub (rare, slower)
        return json.dumps(
            _scrub(value),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )


def _tojson(value: Any) -> Any:
    """Jinja's ``tojson`` with our deterministic dumper (HTML-safe escaping is Jinja's)."""
    from markupsafe import Markup

    text = (
        dumps(value)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("'", "\\u0027")
    )
    return Markup(text)


_overrides: list[str | None] = [None]
"""The maintainer's override folder of the build in progress (see :func:`use_overrides`)."""


def use_overrides(folder: str | None) -> None:
    """Read templates from ``folder`` first, then from the package (``None``: package only).

    ``folder`` is a repository's ``site_templates/``: a file there with the name of a package
    template (``base.html``, ``submit_guide.md``, ``static/site.css`` …) replaces it for that
    repository's site. :func:`pipeline.site.build.build_site` sets it for one build.
    """
    _overrides[0] = folder


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates, kept in the chart cache (``jinja/``).

    Each build's process compiled every template again (0.2 s). Jinja checks a kept template
    against its source's checksum (and its own and Python's version), so an edited template
    compiles anew; a cache that cannot be read or written only costs the compilation.
    """

    def _file(self, bucket: jinja2.bccache.Bucket) -> Path:
        from pipeline.site.assets import cache_dir

        return cache_dir() / "jinja" / f"{bucket.key}.cache"

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            with open(self._file(bucket), "rb") as f:
                bucket.load_bytecode(f)
        except (OSError, ValueError, EOFError, TypeError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        path = self._file(bucket)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                bucket.write_bytecode(f)
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)


def _loader(template_dir: str | None) -> jinja2.BaseLoader:
    package = jinja2.PackageLoader(TEMPLATE_PACKAGE, "templates")
    if template_dir is None:
        return package
    return jinja2.ChoiceLoader([jinja2.FileSystemLoader(template_dir), package])


@lru_cache(maxsize=4)
def environment(template_dir: str | None = None) -> jinja2.Environment:
    """Return the one Jinja environment (autoescape on, strict undefined, compact whitespace).

    The templates are read through :mod:`importlib.resources` (Jinja's ``PackageLoader``), so an
    installed wheel builds a site without a source checkout; a file of the same name in
    ``template_dir`` (a repository's ``site_templates/``) takes precedence.
    """
    env = jinja2.Environment(
        loader=_loader(template_dir),
        bytecode_cache=_CompiledTemplates(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["tojson"] = _tojson
    env.globals["csp"] = CSP
    return env


@lru_cache(maxsize=4)
def text_environment(template_dir: str | None = None) -> jinja2.Environment:
    """A Jinja environment for Markdown templates (no HTML escaping: Markdown is escaped later).

    Its output must only ever go through :func:`pipeline.site.markdown.to_html`, which renders
    with raw HTML disabled.
    """
    return jinja2.Environment(
        loader=_loader(template_dir),
        bytecode_cache=_CompiledTemplates(),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_markdown(template: str, **context: Any) -> str:
    """Render a Markdown template (``submit_guide.md``) to Markdown text."""
    return text_environment(_overrides[0]).get_template(template).render(**context)


def render(template: str, page: Any, **extra: Any) -> str:
    """Render ``template`` with the context ``page`` (and site-wide ``extra`` values)."""
    return environment(_overrides[0]).get_template(template).render(page=page, **extra)
