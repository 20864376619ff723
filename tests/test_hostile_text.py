"""The hostile-text corpus: one bundle whose every free-text field carries a payload per output.

Text a submitter chooses (system name, organisation, version, agent names, description,
contact, licence, origin notes, paper, URLs, file names quoted by findings) is
:class:`pipeline.untrusted.UntrustedText`: each output escapes it once, its own way. The bundle
below is valid — each payload passes validation, as a real attacker's would — and goes through
``validate``, ``check`` (text, Markdown report, JSON), ``ingest``, ``score``, ``build`` and
``query``. Then every artefact is searched for a payload that still works in the output that
holds it:

* terminal and CI log: no control, bidi or zero-width character; rich markup printed as typed;
* the Markdown report (PR comment, job summary): outside code spans no link, image, HTML,
  ``@mention`` or autolinked address, and every table row keeps its column count;
* HTML, SVG and XML: no element or attribute the payload created (``onerror``, ``<script>``,
  ``javascript:`` links), JSON inside ``<script>`` never closes the element;
* every CSV (``public/**``, raw downloads included, and ``gmeter query --format csv``): no
  text cell a spreadsheet evaluates;
* JSON, TOML, BibTeX, ``CITATION.cff``: still parse, fields not broken out of.

The URL rules (http/https only, bounded, no credentials) are tested on every URL field.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app
from pipeline.untrusted import FORMULA_START
from tests.conftest import GOOD

HTML = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(2)</script>"
MD = "[clk](https://evil.example/x) ![i](https://evil.example/i.png) @octocat www.evil.example"
RICH = "[bold red]PWNED[/bold red][link=https://evil.example]l[/link]"
BIB = "}, note = {bibpwned"
TOML = '" \n[release]\nname = "tomlpwned'
FORMULA = '=HYPERLINK("https://evil.example","x")'
MARKERS = ("evil.example", "octocat", "onerror", "alert(", "PWNED", "HYPERLINK", "bibpwned",
           "tomlpwned")
"""Words only a payload contains: where one shows, the payload's escaping is checked."""

# One payload per output, each field a mix; agent names start with a formula character
# (the CSV payload needs the first character of the cell).
AGENTS = [FORMULA, "@octocat " + HTML, "-2+3 " + RICH, "+x " + MD + " |a|b|",
          "'" + SCRIPT]
SYSTEM = f"{FORMULA} {HTML} {RICH} @octocat {BIB}"


def _q(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is a JSON string


def _hostile_bundle(folder: Path) -> None:
    folder.mkdir()
    (folder / "submission.toml").write_text(
        f"submitted = 2024-02-02\n"
        f"contact = {_q(FORMULA + ' ' + MD + ' ' + HTML)}\n"
        f"licence = {_q('CC0 ' + HTML + ' ' + RICH)}\n"
        f"description = {_q(MD + ' ' + HTML + ' ' + SCRIPT + ' ' + RICH + ' | x | y |' + TOML)}\n"
        "\n[system]\n"
        f"name = {_q(SYSTEM)}\n"
        f"organisation = {_q('@SUM(1) ' + MD)}\n"
        f"version = {_q('+1 ' + HTML)}\n"
        'url = "https://evil.example/x?q=%3Cscript%3Ealert(3)%3C/script%3E"\n'
        "\n[origin]\n"
        f"paper = {_q(MD + ' ' + HTML + ' ' + BIB)}\n"
        'url = "https://evil.example/paper"\n'
        f"notes = {_q(RICH + ' ' + HTML + TOML)}\n"
        f"licence_note = {_q('-1+1 ' + HTML)}\n",
        encoding="utf-8",
    )
    rows = ["agent,item,value"]
    for k, agent in enumerate(AGENTS):
        cell = '"' + agent.replace('"', '""') + '"'
        rows += [f"{cell},i{i},{1 if i <= k + 1 else 0}" for i in range(1, 6)]
    (folder / "responses.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


@dataclass
class Run:
    """Everything the commands printed and wrote."""

    root: Path
    terminal: dict[str, str] = field(default_factory=dict)
    exit_codes: dict[str, int] = field(default_factory=dict)

    def artefacts(self, *suffixes: str) -> Iterator[Path]:
        for p in sorted(self.root.rglob("*")):
            if p.is_file() and "submissions" not in p.parts and p.suffix in suffixes:
                yield p


BAD_FILE = "notes\x1b[2J\u202e\u200bevil.txt"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("hostile-text")
    subs = root / "submissions"
    shutil.copytree(GOOD, subs)
    bundle = subs / "gen-mini" / "hostile"
    _hostile_bundle(bundle)
    db = root / "store.duckdb"
    out = Run(root)
    runner = CliRunner()

    def gmeter(name: str, *args: str) -> None:
        # wide enough that tables never wrap a payload (the check reads it whole)
        res = runner.invoke(app, ["--db", str(db), *args], env={"COLUMNS": "3000"})
        out.terminal[name] = res.output
        out.exit_codes[name] = res.exit_code
        assert "Traceback" not in res.output, res.output
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception

    # A file name with terminal escapes, a bidi override and a zero width: refused, quoted.
    (bundle / BAD_FILE).write_text("x", encoding="utf-8")
    gmeter("validate-bad-file", "validate", str(subs))
    gmeter("check-bad-file", "check", str(bundle), "--submissions", str(subs),
           "--report", str(root / "report-bad-file.md"))
    (bundle / BAD_FILE).unlink()
    gmeter("validate", "validate", str(subs))
    gmeter("validate-json", "validate", str(subs), "--format", "json")
    gmeter("check", "check", str(bundle), "--submissions", str(subs),
           "--report", str(root / "report.md"))
    gmeter("check-md", "check", str(bundle), "--submissions", str(subs), "--format", "markdown")
    gmeter("check-json", "check", str(bundle), "--submissions", str(subs), "--format", "json")
    gmeter("ingest", "ingest", str(subs))
    gmeter("score", "score")
    gmeter("build", "build", "--out", str(root / "public"))
    for fmt in ("table", "csv", "json"):
        gmeter(f"query-{fmt}", "query", "--format", fmt,
               "SELECT b.system_name, b.contact, b.organisation, b.licence, s.agent "
               "FROM bundles b JOIN scores s USING (content_hash)")
    (root / "query.csv").write_text(out.terminal["query-csv"], encoding="utf-8")
    return out


def test_the_corpus_went_all_the_way(run: Run) -> None:
    """The payloads are valid input: the bundle is ingested, scored and published."""
    assert run.exit_codes["validate"] == 0, run.terminal["validate"]
    assert run.exit_codes["validate-bad-file"] != 0
    assert run.exit_codes["check"] == 0, run.terminal["check"]
    assert run.exit_codes["build"] == 0, run.terminal["build"]
    pages = "".join(p.read_text(encoding="utf-8") for p in run.artefacts(".html"))
    assert "PWNED" in pages and "octocat" in pages  # the text is shown, escaped
    assert "PWNED" in run.terminal["check"] and "octocat" in run.terminal["query-table"]


# --------------------------------------------------------------------------- terminal
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u2069\ufeff]")


def test_terminal_shows_text_as_typed(run: Run) -> None:
    for name, text in run.terminal.items():
        assert not _CONTROL.search(text), (name, _CONTROL.findall(text))
        # rich markup is printed, never applied (the style tags stay visible)
        for m in re.finditer("PWNED", text):
            assert text[max(0, m.start() - 10):m.start()] == "[bold red]", (name, text)
    assert "\\x1b[2J" in run.terminal["validate-bad-file"]  # the name is quoted, escaped


# --------------------------------------------------------------------------- Markdown
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _cells(line: str) -> int:
    """Table cells of a GFM row (an escaped ``\\|`` does not split, even in code)."""
    return len(re.split(r"(?<!\\)\|", line.strip().strip("|")))


@pytest.mark.parametrize("report", ["report.md", "report-bad-file.md", "check-md"])
def test_markdown_report_links_renders_and_notifies_nothing(run: Run, report: str) -> None:
    path = run.root / report
    text = path.read_text(encoding="utf-8") if path.exists() else run.terminal[report]
    assert not _CONTROL.search(text)
    outside = _CODE_SPAN.sub("", text.replace("<!-- gmeter-check -->", ""))
    for marker in (*MARKERS, "<", "](", "@", "www.", "://"):
        assert marker not in outside, (marker, outside)
    header = 0
    for line in text.splitlines():
        if line.startswith("|"):
            header = header or _cells(line)
            assert _cells(line) == header, line
        else:
            header = 0


# --------------------------------------------------------------------------- HTML / SVG
class _Audit(HTMLParser):
    """Elements and attributes a payload could have created."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            value = (v or "").strip().lower()
            if k.startswith("on"):
                self.found.append(f"<{tag} {k}>")
            if k in ("href", "src", "xlink:href", "action", "formaction") and re.match(
                    r"(javascript|vbscript|data):", value) and value != "data:,":
                self.found.append(f"<{tag} {k}={value[:30]}>")
        if tag == "img" and ("src", "x") in attrs:
            self.found.append("<img src=x>")
        self._script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._script = False

    def handle_data(self, data: str) -> None:
        if self._script and any(m in data for m in ("alert(1)", "alert(2)", "alert(3)")) \
                and "<" in data:
            self.found.append("payload inside a script element")


def test_html_svg_and_xml_carry_no_payload_markup(run: Run) -> None:
    checked = 0
    for path in run.artefacts(".html", ".svg", ".xml"):
        text = path.read_text(encoding="utf-8")
        if not any(m in text for m in MARKERS):
            continue
        audit = _Audit()
        audit.feed(text)
        assert audit.found == [], (path, audit.found)
        assert not _CONTROL.search(text), path
        checked += 1
    assert checked >= 3  # the board, the agents' and the system's pages at least


# --------------------------------------------------------------------------- CSV
def test_every_published_csv_neutralises_formulas(run: Run) -> None:
    checked = 0
    for path in [*run.artefacts(".csv"), run.root / "query.csv"]:
        text = path.read_text(encoding="utf-8")
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                if cell and cell[0] in FORMULA_START and cell[0] != "'":
                    try:
                        float(cell)
                    except ValueError:
                        pytest.fail(f"{path.relative_to(run.root)}: formula cell {cell[:40]!r}")
        checked += any(m in text for m in MARKERS)
    assert checked >= 3  # raw download, public/data exports, the board CSV, the query


# --------------------------------------------------------------------------- structured
def test_json_toml_bibtex_and_cff_keep_their_structure(run: Run) -> None:
    for path in run.artefacts(".json"):
        json.loads(path.read_text(encoding="utf-8"))
    for name in ("validate-json", "check-json", "query-json"):
        json.loads(run.terminal[name])
    for path in run.artefacts(".toml"):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert "release" not in data, path  # the TOML payload did not open a table
    for path in run.artefacts(".bib", ".cff"):
        text = path.read_text(encoding="utf-8")
        assert "bibpwned" not in text and "tomlpwned" not in text, path
        if path.suffix == ".bib":
            depth = 0
            for ch in text:
                depth += {"{": 1, "}": -1}.get(ch, 0)
                assert depth >= 0, path
            assert depth == 0, path


# --------------------------------------------------------------------------- URLs
BAD_URLS = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>", "vbscript:x", "file:///etc/passwd",
            "ftp://example.org/x", "//evil.example/x", "http:evil.example", "https://",
            "https://good.example@evil.example/", "https://evil.example/\"onmouseover=x",
            "https://evil.example/<script>", "https://a b.example/", "https://x.example:99999/",
            "https://evil.example/" + "a" * 600]
URL_FIELDS = [("submission", "[system]\nurl = {url}\n"),
              ("submission", "[system]\nname = \"S\"\n\n[origin]\nurl = {url}\n"),
              ("benchmark", "[origin]\nurl = {url}\n"),
              ("submission", "[aiq]\ncode_url = {url}\n")]


def _manifest_problems(kind: str, section: str, url: str) -> list[tuple[str, str]]:
    from pipeline.manifest import load_benchmark_manifest, load_submission_manifest

    if kind == "benchmark":
        text = ('id = "b"\ntitle = "T"\ntrack = "generality"\nversion = "1.0.0"\n'
                'description = "d"\nlicence = "CC0-1.0"\ncreated = 2024-01-01\n\n'
                + section.format(url=_q(url)) + '\n[generality]\ntransform = "intrinsic"\n')
        _, _, problems = load_benchmark_manifest("b/benchmark.toml", text.encode(), "b")
    else:
        head = 'submitted = 2024-01-01\ncontact = "c"\nlicence = "CC0-1.0"\n'
        body = section.format(url=_q(url))
        if "[system]" not in body:
            body = '[system]\nname = "S"\n\n' + body
        elif "name =" not in body:
            body = body.replace("[system]\n", '[system]\nname = "S"\n')
        track = "aiq" if "[aiq]" in body else "generality"
        _, _, problems = load_submission_manifest("b/s/submission.toml",
                                                  (head + body).encode(), track)
    return [(p.field, p.message) for p in problems if p.severity == "error"]


@pytest.mark.parametrize(("kind", "section"), URL_FIELDS)
@pytest.mark.parametrize("url", BAD_URLS)
def test_every_url_field_takes_only_bounded_http_links(kind: str, section: str,
                                                       url: str) -> None:
    problems = _manifest_problems(kind, section, url)
    url_field = [f for f, _ in problems if f.split(".")[-1].endswith("url")]
    assert url_field, problems


@pytest.mark.parametrize(("kind", "section"), URL_FIELDS)
def test_a_good_url_is_accepted_everywhere(kind: str, section: str) -> None:
    problems = _manifest_problems(kind, section, "https://example.org/a_b-c?d=1&e=%20#f")
    assert not [f for f, _ in problems if f.split(".")[-1].endswith("url")], problems


def test_the_site_links_only_safe_urls() -> None:
    from pipeline.site.model import safe_url

    assert all(safe_url(u) is None for u in BAD_URLS)
    assert safe_url("https://example.org/x") == "https://example.org/x"


def test_untrusted_text_has_one_escape_per_output() -> None:
    """The type's methods are the outputs' own escapes (no second, diverging copy)."""
    from pipeline.check.report import md
    from pipeline.site.cite import _bib_text
    from pipeline.toml_writer import toml_string
    from pipeline.untrusted import UntrustedText, csv_cell, safe_url, terminal

    for raw in [SYSTEM, *AGENTS, BAD_FILE, TOML, "", "https://example.org/x"]:
        t = UntrustedText(raw)
        assert t.markdown() == md(raw) and t.bibtex() == _bib_text(raw)
        assert t.toml() == toml_string(raw) and t.csv() == csv_cell(raw)
        assert t.terminal() == terminal(raw) and t.url() == safe_url(raw)
        assert "<" not in t.html() and '"' not in t.html()
        assert tomllib.loads(f"x = {t.toml()}")["x"] == raw


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_raw_csv_downloads_are_neutralised_whatever_their_shape(delimiter: str) -> None:
    """Raw bundle CSVs: formula cells escaped even next to a cell longer than csv's default
    field limit, numbers untouched, and a file without formulas published byte for byte."""
    from pipeline.untrusted import csv_uncell, neutralise_csv

    d = delimiter
    clean = f"a{d}b\r\n1{d}-0.5\r\n".encode()
    assert neutralise_csv(clean, d) == clean
    raw = f"name{d}v\n{'x' * 200_000}{d}1\n{FORMULA}{d}-2\n-2+3{d}+4\n".replace(
        FORMULA, '"' + FORMULA.replace('"', '""') + '"').encode()
    before = csv.field_size_limit()
    out = neutralise_csv(raw, d)
    assert csv.field_size_limit() == before  # the global limit is restored
    csv.field_size_limit(len(out))
    try:
        rows = list(csv.reader(io.StringIO(out.decode()), delimiter=d))
    finally:
        csv.field_size_limit(before)
    assert rows[2] == ["'" + FORMULA, "-2"] and rows[3] == ["'-2+3", "+4"]
    assert [csv_uncell(c) for c in rows[2]] == [FORMULA, "-2"]
