"""gmeter.toml: parsed strictly, and its values reach the citation, the feed and the base path."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.errors import ValidationFailed
from pipeline.site.cite import citation_cff
from pipeline.site.config import DEFAULT, load_config, parse_config

GOOD = b"""
[site]
title = "Toy board"
description = "Generality of toy agents."
url = "https://example.org/toy/"
licence = "CC-BY-4.0"
repository = "https://github.com/example/toy"
maintainers = ["Ada Lovelace", "Alan Turing"]
contact = "ada@example.org"
"""


def test_a_repository_without_gmeter_toml_gets_the_default(tmp_path: Path) -> None:
    assert load_config(tmp_path) == DEFAULT


def test_every_field_is_read(tmp_path: Path) -> None:
    (tmp_path / "gmeter.toml").write_bytes(GOOD)
    cfg = load_config(tmp_path)
    assert (cfg.title, cfg.licence, cfg.maintainers) == (
        "Toy board", "CC-BY-4.0", ("Ada Lovelace", "Alan Turing"))
    assert cfg.base_path == "/toy/"
    assert cfg.clone_url == "https://github.com/example/toy.git"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('url = "javascript:alert(1)"', "site.url"),
        ('repository = "ftp://x/y"', "site.repository"),
        ('licence = "CC BY <4>"', "site.licence"),
        ('colour = "red"', "site.colour"),
        ("maintainers = \"Ada\"", "site.maintainers"),
        ('description = "' + "x" * 400 + '"', "site.description"),
    ],
)
def test_a_bad_field_is_named(line: str, field: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        parse_config(b'[site]\ntitle = "T"\n' + line.encode() + b"\n", "gmeter.toml")
    assert [p.field for p in err.value.problems] == [field]
    assert all(p.file == "gmeter.toml" and p.fix for p in err.value.problems)


def test_a_missing_title_or_table_is_refused() -> None:
    for text in (b"", b"[site]\nurl = \"https://e.org/\"\n"):
        with pytest.raises(ValidationFailed):
            parse_config(text)


def test_feed_ids_differ_between_sites() -> None:
    a = parse_config(b'[site]\ntitle = "A"\nurl = "https://a.example/board/"\n')
    b = parse_config(b'[site]\ntitle = "A"\nurl = "https://b.example/board/"\n')
    c = parse_config(b'[site]\ntitle = "C"\n')
    ids = {x.feed_id for x in (a, b, c, DEFAULT)}
    assert len(ids) == 4
    assert a.entry_id("2026-01-01", "r/x", "benchmarks/x/") != b.entry_id(
        "2026-01-01", "r/x", "benchmarks/x/")


def test_citation_carries_the_configured_authors_licence_and_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pipeline.site.model import site_url

    monkeypatch.delenv("GMETER_SITE_URL", raising=False)
    cfg = parse_config(GOOD)
    site = SimpleNamespace(config=cfg, latest=None, versions=[],
                           snapshot=SimpleNamespace(site_date=dt.date(2026, 1, 2)))
    cff = citation_cff(site, site_url(cfg.base_path, cfg.url))  # type: ignore[arg-type]
    assert "license: CC-BY-4.0" in cff
    assert '  - name: "Ada Lovelace"' in cff and '  - name: "Alan Turing"' in cff
    assert 'url: "https://example.org/toy/"' in cff
    assert 'title: "Toy board"' in cff
    assert "gmeter contributors" not in cff and "MIT" not in cff


def test_site_url_precedence_env_then_config_then_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.site.model import site_url

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY_OWNER", "Someone")
    monkeypatch.delenv("GMETER_SITE_URL", raising=False)
    assert site_url("/toy/") == "https://someone.github.io/toy/"
    assert site_url("/toy/", "https://example.org/toy") == "https://example.org/toy/"
    monkeypatch.setenv("GMETER_SITE_URL", "https://preview.example.net/x/")
    assert site_url("/toy/", "https://example.org/toy") == "https://preview.example.net/x/"


def test_site_templates_folder_overrides_package_files_by_name(tmp_path: Path) -> None:
    from pipeline.site import render
    from pipeline.site.assets import static_files
    from pipeline.site.config import template_overrides

    assert template_overrides(tmp_path) is None
    own = tmp_path / "site_templates"
    (own / "static").mkdir(parents=True)
    (own / "redirect.html").write_text("own {{ page.title }}", encoding="utf-8")
    (own / "static" / "site.css").write_text("body{}", encoding="utf-8")
    (own / "static" / "extra.css").write_text("p{}", encoding="utf-8")
    folder = template_overrides(tmp_path)
    assert folder == own
    names = {f.name: f for f in static_files(folder)}
    package = {f.name: f for f in static_files()}
    assert set(names) == set(package) | {"extra.css"}
    assert names["site.css"].read_text() == "body{}"
    assert all(names[n].read_bytes() == package[n].read_bytes() for n in package if n != "site.css")
    page = SimpleNamespace(title="T")
    render.use_overrides(str(folder))
    try:
        assert render.render("redirect.html", page) == "own T"
        # a template not overridden still comes from the package
        assert "<feed" in render.render("feed.xml", SimpleNamespace(
            title="t", id="i", updated="u", entries=[]), generator="g", site_url="/", site=DEFAULT)
    finally:
        render.use_overrides(None)
    assert not render.render("redirect.html", SimpleNamespace(
        title="T", target="x/", name="n"), site=DEFAULT).startswith("own")
