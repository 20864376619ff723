"""Bounds every input must respect, checked *before* the expensive or recursive work.

A bundle comes from a stranger: one file must never stop the pipeline or exhaust the machine.
Every reader of the pipeline (manifests, JSON, CSV, gzip, folders) checks these limits first
and turns a violation into a :class:`~pipeline.errors.Problem` naming the file and field:

* nesting of TOML and JSON at most :data:`MAX_NESTING` levels, measured by a scan that never
  recurses (the parsers themselves recurse and would raise ``RecursionError``); TOML is read
  only through :func:`parse_toml`, manifests at most :data:`MAX_MANIFEST_BYTES`;
* folders at most :data:`MAX_FOLDER_DEPTH` levels and paths at most :data:`MAX_PATH_BYTES`;
* integers at most :data:`MAX_INT` in magnitude (exact in a double, a DuckDB BIGINT and JSON);
  floats finite;
* no control characters in any string or cell (:func:`bad_text`), stricter rules for names
  shown on the site (:func:`bad_name`): NFKC form, no invisible format characters;
* gzip files: one complete member, CRC verified, at most :data:`MAX_GUNZIP_BYTES` inflated;
* at most :data:`MAX_PROBLEMS_PER_FILE` problems reported per file, then a count of the rest.

Look-alike names are compared by their *skeleton* (Unicode TR 39 §4, :func:`skeleton`).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
import unicodedata
import zlib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.errors import GmeterError as _GmeterError
from pipeline.errors import Problem

MAX_NESTING = 32
"""Deepest nesting of arrays/tables (TOML) or arrays/objects (JSON)."""
MAX_FOLDER_DEPTH = 12
"""Deepest folder level inside a benchmark or bundle folder."""
MAX_PATH_BYTES = 240
"""Longest relative path of a file inside a benchmark or bundle (UTF-8 bytes)."""
MAX_INT = 2**53
"""Largest integer magnitude accepted in a manifest (exactly representable as a double)."""
MAX_CELL_INT = 2**64 - 1
"""Largest integer magnitude in a CSV cell (a 64-bit seed; a DuckDB UBIGINT)."""
MAX_GUNZIP_BYTES = 256 * 1024 * 1024
"""Most bytes one ``.gz`` file may inflate to."""
MAX_PROBLEMS_PER_FILE = 20
"""Problems listed per file; the rest are counted in one more problem."""
MAX_CSV_COLUMNS = 10_000
"""Most columns in a CSV header."""
MAX_NAME_CHARS = 200
"""Longest display name."""
MAX_MANIFEST_BYTES = 1024 * 1024
"""Largest manifest (``benchmark.toml``, ``submission.toml``, ``releases.toml``: 1 MiB)."""

# Characters refused in every string and cell: C0 controls but tab, newline and carriage
# return; DEL; C1 controls (U+009B is a terminal CSI); zero-width and bidirectional
# formatting (Trojan-source reordering); the BOM inside text; non-characters U+FFFE/U+FFFF
# (not allowed in XML, e.g. the Atom feed).
_BAD = frozenset(
    [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0),
     *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065),
     *range(0x2066, 0x206A), 0xFEFF, 0xFFFE, 0xFFFF]
)
_SAFE_ASCII = re.compile(r"[\t\n\r\x20-\x7e]*\Z")


def bad_text(s: str) -> str:
    """Why ``s`` may not appear in any string or cell (``""`` when it may)."""
    if _SAFE_ASCII.match(s):
        return ""
    for ch in s:
        o = ord(ch)
        if o in _BAD or 0xD800 <= o <= 0xDFFF:
            return f"contains the control or invisible character U+{o:04X}"
    return ""


def printable(s: str) -> str:
    r"""``s`` with every character :func:`bad_text` refuses written as ``\uXXXX``.

    For echoing hostile keys and names in messages without handing a terminal its escapes.
    """
    if _SAFE_ASCII.match(s) and "\n" not in s and "\r" not in s:
        return s
    return "".join(f"\\u{ord(ch):04x}" if ord(ch) in _BAD or ch in "\r\n" or
                   0xD800 <= ord(ch) <= 0xDFFF else ch for ch in s)


def bad_name(s: str) -> str:
    """Why ``s`` may not be a display name (``""`` when it may).

    Stricter than :func:`bad_text`: no tab or line break, no format character at all
    (category Cf: zero-width joiners, directional marks), and the text must be in Unicode
    NFKC form, so full-width or compatibility look-alikes of ASCII are written as ASCII.
    """
    why = bad_text(s)
    if why:
        return why
    for ch in s:
        if ch in "\t\n\r" or unicodedata.category(ch) == "Cf":
            return f"contains the control or invisible character U+{ord(ch):04X}"
    norm = unicodedata.normalize("NFKC", s)
    if norm != s:
        return f"is not in Unicode NFKC form (write {norm!r})"
    return ""


# --------------------------------------------------------------------------- skeletons


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Character → prototype of its confusable class (single characters only).

    Built from the ``confusable-homoglyphs`` package's copy of Unicode's confusables data:
    every pair it lists is joined into one class (union–find) whose prototype is its
    smallest ASCII member, else its smallest character. Without the package, only the
    NFKC and case folding of :func:`skeleton` apply.
    """
    try:
        import json
        from importlib import resources

        text = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text(
            encoding="utf-8")
        data = json.loads(text)
    except Exception:  # the package is missing or its data unreadable
        return {}
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        parent.setdefault(c, c)
        root = c
        while parent[root] != root:
            root = parent[root]
        while parent[c] != root:
            parent[c], c = root, parent[c]
        return root

    def better(a: str, b: str) -> bool:
        return (not a.isascii(), a) < (not b.isascii(), b)

    for ch, glyphs in data.items():
        if len(ch) != 1:
            continue
        for g in glyphs:
            other = g.get("c", "") if isinstance(g, dict) else ""
            if len(other) != 1:
                continue
            ra, rb = find(ch), find(other)
            if ra != rb:
                if better(ra, rb):
                    parent[rb] = ra
                else:
                    parent[ra] = rb
    return {c: find(c) for c in parent if find(c) != c}


_SEPARATORS = re.compile(r"[\s_.\-·–—]+")


def skeleton(s: str) -> str:
    """The look-alike key of a name (after Unicode TR 39 §4 "skeleton").

    NFKC, case folding, format characters removed, every character replaced by the prototype
    of its confusable class, separators (spaces, ``-``, ``_``, ``.``) dropped. Two names
    with the same skeleton look alike (``Раураl`` in Cyrillic and ``Paypal``; ``gpt‐2`` and
    ``GPT 2``).
    """
    protos = _prototypes()
    t = unicodedata.normalize("NFKC", s)
    t = "".join(protos.get(ch, ch) for ch in t if unicodedata.category(ch) != "Cf")
    t = unicodedata.normalize("NFD", t.casefold())
    t = "".join(protos.get(ch, ch) for ch in t if unicodedata.category(ch) != "Mn")
    t = "".join(protos.get(ch, ch) for ch in unicodedata.normalize("NFKC", t).casefold())
    return _SEPARATORS.sub("", t)


# --------------------------------------------------------------------------- nesting

_TOML_TOKENS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
    r"|[\[\]{}]",
    re.S,
)


def toml_nesting(text: str) -> int:
    """Deepest bracket nesting of TOML text, strings and comments skipped (no recursion)."""
    depth = deepest = 0
    for m in _TOML_TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif tok in "]}":
            depth = max(depth - 1, 0)
    return deepest


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def json_nesting(data: bytes | str) -> int:
    """Deepest ``[``/``{`` nesting of JSON text, strings skipped (no recursion)."""
    import numpy as np

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= MAX_NESTING:
        return raw.count(b"[") + raw.count(b"{")
    bare = _JSON_STRING.sub(b"", raw)
    arr = np.frombuffer(bare, dtype=np.uint8)
    step = np.zeros(arr.shape, dtype=np.int64)
    step[(arr == 0x5B) | (arr == 0x7B)] = 1
    step[(arr == 0x5D) | (arr == 0x7D)] = -1
    return int(np.cumsum(step).max(initial=0))


def walk(value: Any, limit: int = MAX_NESTING) -> Iterator[tuple[str, Any]]:
    """Yield (dotted path, leaf) of a parsed TOML/JSON value, iteratively.

    Raises
    ------
    ValueError
        When the value nests deeper than ``limit``.
    """
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, dict | list):
            if depth >= limit:
                raise ValueError(f"nests deeper than {limit} levels at {path or 'the top'}")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            kids = []
            for k, child in items:
                p = f"{path}[{k}]" if isinstance(v, list) else (f"{path}.{k}" if path else str(k))
                kids.append((p, child, depth + 1))
            stack.extend(reversed(kids))
        else:
            yield path, v


def value_problems(file: str, value: Any, *, prefix: str = "",
                   max_int: int = MAX_INT) -> list[Problem]:
    """Every string with a control character, non-finite float or huge integer in ``value``.

    Keys are checked like strings. The walk is iterative and stops (one problem) beyond
    :data:`MAX_NESTING` levels.
    """
    out: list[Problem] = []
    try:
        for path, leaf in walk(value):
            where = printable(f"{prefix}.{path}" if prefix and path else (prefix or path or "-"))
            why = ""
            for part in re.split(r"[.\[]", path):
                why = bad_text(part)
                if why:
                    why = f"key {why}"
                    break
            if not why and isinstance(leaf, str):
                why = bad_text(leaf)
            elif not why and isinstance(leaf, bool):
                pass
            elif not why and isinstance(leaf, int) and abs(leaf) > max_int:
                limit = {MAX_INT: "2^53", MAX_CELL_INT: "2^64 - 1"}.get(max_int, f"{max_int:.3e}")
                shown = str(leaf) if leaf.bit_length() <= 96 else f"{leaf:.3e}"
                why = f"is {shown}, beyond the largest accepted integer {limit}"
            elif not why and isinstance(leaf, float) and not math.isfinite(leaf):
                why = "is NaN or infinite"
            if why:
                out.append(Problem(file, where, why, "give a finite, plain value"))
    except ValueError as exc:
        out.append(Problem(file, prefix or "-", str(exc), "flatten the data"))
    return out


# --------------------------------------------------------------------------- TOML


def parse_toml(file: str, data: bytes, *, max_int: int = MAX_INT,
               max_bytes: int | None = None) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Parse TOML bytes; return (mapping or None, problems).

    Bounded before parsing: at most :data:`MAX_MANIFEST_BYTES` (or ``max_bytes``) and
    :data:`MAX_NESTING` levels of brackets (the parser recurses). After parsing, every
    string, key and number is checked (:func:`value_problems`: control characters, NaN/inf,
    integers beyond ``max_int``); any such problem rejects the file. Every TOML reader of
    the pipeline (manifests, releases, a track's TOML files) goes through here.
    """
    limit = MAX_MANIFEST_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        return None, [Problem(file, "size", f"is {len(data):,} bytes, over the "
                              f"{limit // 1024} KiB limit of a manifest",
                              "keep long texts in a separate file")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Problem(file, "encoding", "is not UTF-8 text", "save the file as UTF-8")]
    depth = toml_nesting(text)
    if depth > MAX_NESTING:
        return None, [Problem(file, "syntax", f"nests {depth} levels deep, more than "
                              f"{MAX_NESTING}", "flatten the arrays and inline tables")]
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        where = f"line {found.group(1)}" if found else "syntax"
        msg = " ".join(str(exc).split())[:300]
        return None, [Problem(file, where, f"TOML does not parse ({msg})", "fix the TOML syntax")]
    except (RecursionError, MemoryError, ValueError) as exc:
        return None, [Problem(file, "syntax", f"TOML cannot be read ({type(exc).__name__})",
                              "simplify the file")]
    bad = value_problems(file, parsed, max_int=max_int)
    if bad:
        return None, bad
    return parsed, []


def read_toml_file(path: Path, *, label: str | None = None, max_bytes: int | None = None,
                   error: type[_GmeterError] | None = None) -> dict[str, Any]:
    """Read a TOML file from disk through :func:`parse_toml`; raise on any problem.

    For the command-line readers of a benchmark or bundle manifest outside ``validate``
    (``gmeter aiq run``, the lab's similarity and g-index commands): the file must be a
    regular file (no link), its size is checked before a byte is read, and every limit of
    :func:`parse_toml` applies. ``label`` is the name shown in messages (default: ``path``);
    ``error`` the exception class raised (default :class:`~pipeline.errors.GmeterError`).

    Raises
    ------
    GmeterError
        One message naming the file and the field (``size``, ``encoding``, a line, a key)
        and what to do.
    """
    fail = error or _GmeterError
    file = label or str(path)
    limit = MAX_MANIFEST_BYTES if max_bytes is None else max_bytes
    if not path.exists() and not path.is_symlink():
        raise fail(f"{file}: file is missing", hint="check the path")
    if path.is_symlink() or not path.is_file():
        raise fail(f"{file}: file type: is not a regular file",
                   hint="give the TOML file itself (links are refused)")
    try:
        size = path.stat().st_size
        if size > limit:
            raise fail(f"{file}: size: is {size:,} bytes, over the {limit // 1024} KiB limit "
                       "of a manifest", hint="keep long texts in a separate file")
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise fail(f"{file}: cannot be read ({exc.strerror or exc})",
                   hint="check the path and its permissions") from None
    parsed, problems = parse_toml(file, data, max_bytes=limit)
    if parsed is None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise fail(f"{first.file}: {first.field}: {first.message}{more}", hint=first.fix)
    return parsed


# --------------------------------------------------------------------------- JSON


def _reject_constant(name: str) -> Any:
    """``json`` hook: NaN and Infinity are not JSON and are refused."""
    raise ValueError(f"{name} is not allowed in JSON")


def _finite_float(text: str) -> float:
    """``json`` hook: a number that overflows to infinity (``1e999``) is refused."""
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text[:20]} is not a finite number")
    return v


def _checked_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json`` hook: object keys obey the same character rules as strings."""
    for key, _ in pairs:
        why = bad_text(key)
        if why:
            raise ValueError(f"the key {key[:20]!r} {why}")
    return dict(pairs)


def loads_bounded(text: str) -> Any:
    """Parse strict JSON text, bounded before parsing.

    Nesting beyond :data:`~pipeline.limits.MAX_NESTING` levels, NaN/Infinity, numbers that
    overflow a double, integers of more than 4,300 digits and strings with control
    characters are refused.

    Raises
    ------
    json.JSONDecodeError
        When the text is not JSON.
    ValueError
        For every other refusal (the message says which).
    """
    depth = json_nesting(text)
    if depth > MAX_NESTING:
        raise ValueError(f"nests {depth} levels deep, more than {MAX_NESTING}")
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                           object_pairs_hook=_checked_object)
    except RecursionError as exc:  # pragma: no cover - the nesting check comes first
        raise ValueError("nests too deep") from exc
    for path, leaf in walk(value):
        why = bad_text(leaf) if isinstance(leaf, str) else ""
        if why:
            raise ValueError(f"the string at {path or 'the top'} {why}")
    return value


# --------------------------------------------------------------------------- gzip


def gzip_problem(data: bytes, limit: int = MAX_GUNZIP_BYTES) -> str:
    """Why ``data`` is not one complete, correct gzip member (``""`` when it is).

    Inflates in bounded chunks (never more than 1 MiB held at once), so a gzip bomb costs
    time up to ``limit`` bytes, never memory. The CRC and length trailer are verified.
    """
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total = 0
    buf = data
    try:
        while not d.eof:
            chunk = d.decompress(buf, 1 << 20)
            total += len(chunk)
            if total > limit:
                return f"inflates to more than {limit // 2**20} MiB"
            buf = d.unconsumed_tail
            if not chunk and not buf and not d.eof:
                return "is truncated (the gzip stream ends early)"
    except zlib.error as exc:
        return f"is not valid gzip data ({exc})"
    if d.unused_data:
        return "holds more than one gzip member (or trailing bytes)"
    return ""


# --------------------------------------------------------------------------- problems


def cap_per_file(problems: Sequence[Problem], limit: int = MAX_PROBLEMS_PER_FILE) -> list[Problem]:
    """Keep the first ``limit`` problems of each file, then one problem counting the rest."""
    seen: dict[str, int] = {}
    out: list[Problem] = []
    for p in problems:
        n = seen.get(p.file, 0) + 1
        seen[p.file] = n
        if n <= limit:
            out.append(p)
    for file, n in sorted(seen.items()):
        if n > limit:
            out.append(Problem(file, "-", f"{n - limit} more problems in this file not shown",
                               "fix the ones listed and validate again"))
    return out
