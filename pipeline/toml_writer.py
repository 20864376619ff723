r"""The one TOML writer: every bundle, log and release file gmeter writes goes through here.

Why not ``tomli-w``: the files gmeter writes are read by people first (``submission.toml``
with its comments and hand-ordered sections, the append-only ``releases.toml``), so callers
assemble the lines and only the *values* are formatted here — one way everywhere:

* strings are TOML basic strings; ``"``, ``\\`` and every control character (C0, DEL) are
  escaped, so a hostile note can never break the file or smuggle a new key;
* floats are written with ``repr`` (the shortest text that reads back as the same double),
  with ``.0`` added to integral values and TOML's ``inf``/``-inf``/``nan`` for non-finite ones;
* dates as ISO dates, lists inline.

``tomllib.loads`` of what this module writes returns the values it was given (a property
test holds it to that).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def toml_string(s: str) -> str:
    """Return ``s`` as a TOML basic string (quotes included), every control character escaped."""
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_float(v: float) -> str:
    """Return a float as TOML: ``repr`` (round-trips exactly); ``inf``/``-inf``/``nan``."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(float(v))
    return text if any(ch in text for ch in ".e") else text + ".0"


def toml_value(v: Any) -> str:
    """Return one TOML value: bool, int, float, str, date or a list of those.

    Raises
    ------
    TypeError
        For any other type (a mapping is a table: use :func:`toml_table`).
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return toml_float(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def toml_key(k: str) -> str:
    """Return a key: bare when it is made of ``A-Za-z0-9_-`` only, quoted otherwise."""
    bare = k and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in k)
    return k if bare else toml_string(k)


def toml_table(name: str, values: Mapping[str, Any]) -> str:
    """Return ``[name]`` followed by one ``key = value`` line per item (in the given order)."""
    lines = [f"[{name}]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def toml_multiline(text: str) -> str:
    """Return ``text`` as a multi-line basic string (a readable block, e.g. a board's notes)."""
    body = []
    for ch in text:
        if ch == "\\":
            body.append("\\\\")
        elif ch == '"':
            body.append('\\"')
        elif ch in "\n\t":
            body.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            body.append(f"\\u{ord(ch):04x}")
        else:
            body.append(ch)
    return '"""\n' + "".join(body) + '"""'
