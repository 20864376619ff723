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

_UNSAFE = {0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A),
           0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF}
"""DEL, C1 controls (``\\x9b`` is a CSI), bidi embeddings/overrides/isolates, zero widths."""


class UntrustedText(str):
    """Text that came from a bundle (or a file a submitter wrote).

    It is a ``str`` (every reader keeps working); each output escapes it exactly once, with
    the escape of that output: :func:`terminal`, :func:`csv_cell`, the Markdown escape of
    :mod:`pipeline.check.report`, Jinja's HTML/SVG autoescape, :func:`toml_string`.
    """

    __slots__ = ()


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
    if value is None or isinstance(value, bool | int | float):
        return value
    return csv_cell(value)
