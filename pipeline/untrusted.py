"""Text that came from a bundle, and how each output escapes it.

Every string a submitter chose (system and agent names, descriptions, file names, notes
quoting them) is *untrusted* (:class:`UntrustedText`): it is escaped once, by the output that
writes it, with that output's one escape, all of them here (the site's HTML/SVG escape is
Jinja's autoescape, the same ``markupsafe`` escape as :meth:`UntrustedText.html`; TOML is the
one writer :mod:`pipeline.toml_writer`). URLs a bundle gives are checked by
:func:`url_problem` when the manifest is read and linked only through :func:`safe_url`.

CSV: a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a
formula to a spreadsheet (OWASP "CSV injection"); :func:`csv_cell` prefixes it with ``'``,
which spreadsheets show as text. A cell that already starts with ``'`` gets one more, so
:func:`csv_uncell` undoes the escape exactly (gmeter's own files round-trip).
"""

from __future__ import annotations

import csv
import io
import numbers
import re
from typing import Any

_UNSAFE = {0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A),
           0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF}
"""DEL, C1 controls (``\\x9b`` is a CSI), bidi embeddings/overrides/isolates, zero widths."""


class UntrustedText(str):
    """Text that came from a bundle (or a file a submitter wrote), with one escape per output.

    It is a ``str`` (every reader keeps working). Each output escapes it exactly once, with
    the method for that output; the output modules call the same functions, so there is one
    escape per output in the code base:

    ============  ==========================================  ===============================
    output        method / function                           what it neutralises
    ============  ==========================================  ===============================
    terminal, CI  :meth:`terminal` (:func:`terminal`; the     control, bidi, zero-width chars;
    log           CLI consoles apply it to every string)      rich markup (consoles: no markup)
    Markdown      :meth:`markdown` (:func:`markdown`;         links, images, HTML, mentions,
    (PR comment)  ``pipeline.check.report.md``)               autolinks, emoji, table breaks
    CSV           :meth:`csv` (:func:`csv_cell`,              formula cells (``=``, ``+``,
                  :func:`neutralise_csv` for raw downloads)   ``-``, ``@`` …)
    HTML, SVG     :meth:`html` (``markupsafe.escape``; Jinja  tags, attributes, entities
                  autoescape does the same in templates)
    BibTeX        :meth:`bibtex` (:func:`bibtex`)             braces, backslash, ``%``, ``#``
    TOML          :meth:`toml` (``pipeline.toml_writer``)     quotes, newlines, controls
    JSON          ``json.dumps`` (escapes by construction)    —
    URL           :meth:`url` (:func:`safe_url`)              every scheme but http(s)
    ============  ==========================================  ===============================
    """

    __slots__ = ()

    def terminal(self) -> str:
        """For a terminal or CI log."""
        return terminal(self)

    def markdown(self) -> str:
        """For a Markdown line or table cell (one inline code span)."""
        return markdown(self)

    def csv(self) -> str:
        """For a CSV text cell."""
        return csv_cell(self)

    def html(self) -> str:
        """For HTML or SVG text and attribute values."""
        from markupsafe import escape

        return str(escape(str(self)))

    def bibtex(self) -> str:
        """For a braced BibTeX field."""
        return bibtex(self)

    def toml(self) -> str:
        """As a TOML basic string (quoted)."""
        from pipeline.toml_writer import toml_string

        return toml_string(str(self))

    def url(self) -> str | None:
        """The address when it may be linked, else ``None``."""
        return safe_url(self)


def terminal(text: str) -> str:
    r"""``text`` with terminal control characters escaped (``\x1b``, ``\u202e``).

    C0 controls other than newline and tab, DEL, C1 controls, bidirectional embeddings,
    overrides and isolates and zero-width characters are written as escapes, so a value from
    the store or a bundle cannot move the cursor, recolour, hide or reorder a terminal or CI
    log.
    """
    if all(" " <= ch < "\x7f" or ch in "\n\t" for ch in text):
        return str(text)
    out = []
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\n\t") or o in _UNSAFE or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)

FORMULA_START = frozenset("=+-@\t\r\n'＝＋－＠")
"""First characters a spreadsheet may evaluate (full-width forms included), plus ``'``."""


def csv_cell(value: Any) -> str:
    """``value`` as a CSV text cell a spreadsheet never evaluates (reversible)."""
    text = "" if value is None else str(value)
    return "'" + text if text and text[0] in FORMULA_START else text


def csv_uncell(text: str) -> str:
    """Undo :func:`csv_cell`."""
    if len(text) >= 2 and text[0] == "'" and text[1] in FORMULA_START:
        return text[1:]
    return text


def csv_number_or_cell(value: Any) -> Any:
    """Numbers and booleans unchanged (a negative number is not a formula); text escaped."""
    if value is None or isinstance(value, numbers.Number):  # numpy numbers included
        return value
    return csv_cell(value)


MAX_URL_CHARS = 500
"""Longest URL a bundle may give (``system.url``, ``origin.url``, a track's ``*_url``)."""


_NOT_IN_URLS = frozenset('<>"\'`{}|\\^')
"""Characters RFC 3986 never allows unencoded: each could close an attribute or a field."""


def url_problem(url: str) -> str:
    """Why ``url`` may not be given or linked (``""`` when it may).

    Only an absolute ``http``/``https`` address with a host, at most :data:`MAX_URL_CHARS`
    characters, without spaces, control characters or credentials (``https://good@evil``
    reads as *good* but goes to *evil*). ``javascript:``, ``data:``, ``file:`` and every other
    scheme are refused.
    """
    from urllib.parse import urlsplit

    if len(url) > MAX_URL_CHARS:
        return f"is {len(url)} characters long, more than {MAX_URL_CHARS}"
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or ord(ch) in _UNSAFE
           for ch in url):
        return "contains a space or a control character"
    if any(ch in _NOT_IN_URLS for ch in url):
        return "contains a character URLs must percent-encode (<, >, quotes, braces, \\, |, ^)"
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in ("http", "https") or not url.lower().startswith(
            f"{parts.scheme.lower()}://"):
        return "is not an http:// or https:// address"
    if not parts.hostname or not port_ok:
        return "has no host"
    if "@" in parts.netloc:
        return "carries a user name or password"
    return ""


def safe_url(url: str | None) -> str | None:
    """``url`` when it may be linked (:func:`url_problem`), else ``None``."""
    text = (url or "").strip()
    return text if text and not url_problem(text) else None


_MAYBE_FORMULA = re.compile(
    "(?:^|[,;\\t\\r\\n])\"?[=+\\-@'\\t\\r\uff1d\uff0b\uff0d\uff20]".encode(), re.M)
"""A cheap scan: could some cell of this file start with a formula character?"""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def neutralise_csv(data: bytes, delimiter: str = ",") -> bytes:
    """A bundle's CSV file as published for download: no text cell a spreadsheet evaluates.

    Unchanged (same bytes) unless some text cell starts with a formula character; then every
    such cell is escaped with :func:`csv_cell` (numbers such as ``-0.5`` stay as they are) and
    the file is written again with the same delimiter and line ends. :func:`csv_uncell` on
    each cell gives the bundle's values back (the content hash is over the bundle's own
    bytes, kept in git and in the store). A file that is not UTF-8 CSV is returned unchanged.
    """
    if not _MAYBE_FORMULA.search(data):
        return data
    # A cell may be as long as the file (csv's default field limit is 128 KiB): the limit is
    # raised for this read only, as the frozen-release reader does.
    limit = csv.field_size_limit(max(len(data), 1024))
    try:
        text = data.decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except (UnicodeDecodeError, csv.Error):
        return data
    finally:
        csv.field_size_limit(limit)
    changed = False
    out_rows = []
    for row in rows:
        new = [c if not c or _is_number(c) else csv_cell(c) for c in row]
        changed = changed or new != row
        out_rows.append(new)
    if not changed:
        return data
    buf = io.StringIO(newline="")
    end = "\r\n" if "\r\n" in text else "\n"
    csv.writer(buf, delimiter=delimiter, lineterminator=end).writerows(out_rows)
    return buf.getvalue().encode("utf-8")


def markdown(text: str) -> str:
    r"""Untrusted text as one inline code span for a GitHub Markdown line or table cell.

    GitHub neither links (``[x](y)``, bare ``https://``, ``www.``), embeds (``![i](y)``),
    renders HTML, formats, expands ``:emoji:`` nor notifies (``@user``, ``#123``) inside code.
    Terminal controls are escaped first (:func:`terminal`: the report is also a CI log), the
    text is folded to one line, a backtick becomes ``'`` (a code span cannot escape one) and
    ``|`` is written ``\|`` (GFM splits table cells before it reads code spans). Empty text
    is ``—``.
    """
    s = " ".join(terminal(str(text)).split())
    if not s:
        return "—"
    return "`" + s.replace("`", "'").replace("|", "\\|") + "`"


def bibtex(text: str) -> str:
    """Untrusted text for a braced BibTeX field: one line, braces and specials neutralised."""
    out = " ".join(terminal(str(text)).split())
    out = re.sub(r"([&%$#_])", r"\\\1", out.replace("\\", "/"))
    return out.replace("{", "(").replace("}", ")")
