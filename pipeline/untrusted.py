"""Text that came from a bundle, and how each output escapes it.

Every string a submitter chose (system and agent names, descriptions, file names, notes
quoting them) is *untrusted*: it is escaped once, by the output that writes it. This module
holds the escapes that several outputs share; the site's HTML/SVG escaping is Jinja's
autoescape and the TOML/BibTeX/CFF writers escape in their own modules.

CSV: a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a
formula to a spreadsheet (OWASP "CSV injection"); :func:`csv_cell` prefixes it with ``'``,
which spreadsheets show as text. A cell that already starts with ``'`` gets one more, so
:func:`csv_uncell` undoes the escape exactly (gmeter's own files round-trip).
"""

from __future__ import annotations

from typing import Any

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
    if value is None or isinstance(value, bool | int | float):
        return value
    return csv_cell(value)
