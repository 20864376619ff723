"""Incremental builds: the previous build's state says which files can be taken over unchanged.

A build is a pure function of the store, the code and a few settings, and so is every file it
writes. The state of the last build of an output folder (kept in the store's folder, never
published) records for every file its SHA-256 and size, for every rendered file the *input
key* it was made from, and for every HTML page its links and element ids. The next build

* does nothing at all when the whole-build key (store fingerprint, code, settings) is the
  one of the site in place and the files are as that build left them;
* otherwise computes every page's input (cheap) and renders only the pages whose key
  changed; the others, the unchanged data exports and raw files are hard links to the
  previous site's files (a copy where links are impossible);
* rebuilds the search index only when a page changed, checks links from the recorded links
  of unchanged pages, and writes the manifest from the recorded digests.

The result is byte-identical to a full build from the same store (tested): a key covers
everything its file is made from, and a file whose key is unknown is always made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

STATE_VERSION = 1
_ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the code and templates the site is made with (``pipeline/``, templates).

    Part of every key: after any change to them (a release of gmeter or a local edit) every
    page is made again.
    """
    h = hashlib.sha256()
    for folder in ("pipeline", "site_templates"):
        base = _ROOT / folder
        for path in sorted(base.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
    from importlib.metadata import PackageNotFoundError, version

    for package in ("duckdb", "jinja2", "vl-convert-python", "pagefind"):  # their output too
        try:
            h.update(f"{package} {version(package)}\n".encode())
        except PackageNotFoundError:
            h.update(f"{package} -\n".encode())
    return h.hexdigest()


def key_of(*parts: Any) -> str:
    """The input key of a file made from ``parts`` (pickled; unpicklable parts give ``""``).

    ``""`` never equals a recorded key, so such a file is always made again.
    """
    try:
        data = pickle.dumps(parts, protocol=5)
    except Exception:  # a context holding something pickle cannot write: no reuse
        return ""
    return hashlib.sha256(data).hexdigest()


@dataclass
class BuildState:
    """What one build left in its output folder (see the module docstring)."""

    key: str = ""
    files: dict[str, list[Any]] = field(default_factory=dict)  # rel → [sha256, size, mtime_ns]
    keys: dict[str, str] = field(default_factory=dict)  # rel → input key
    links: dict[str, list[Any]] = field(default_factory=dict)  # html rel → [links, ids]
    report: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> BuildState | None:
        """Read a state file; ``None`` if missing or unreadable (then nothing is reused)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("version") != STATE_VERSION:
                return None
            return cls(str(raw["key"]), dict(raw["files"]), dict(raw["keys"]),
                       dict(raw["links"]), dict(raw["report"]))  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, path: Path) -> None:
        """Write the state atomically; a failure only costs the next build its reuse."""
        data = {"version": STATE_VERSION, "key": self.key, "files": self.files,
                "keys": self.keys, "links": self.links, "report": self.report}  # fmt: skip
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass

    def intact(self, root: Path) -> bool:
        """Whether every recorded file is in ``root`` as this build left it (size, mtime)."""
        try:
            for rel, (_digest, size, mtime) in self.files.items():
                st = os.stat(root / rel)
                if st.st_size != size or st.st_mtime_ns != mtime:
                    return False
        except (OSError, ValueError, TypeError):
            return False
        return True


def state_path(folder: Path, out: Path) -> Path:
    """Where the state of the builds into ``out`` is kept: ``folder`` (the store's) /builds."""
    digest = hashlib.sha256(str(Path(out).resolve()).encode()).hexdigest()[:20]
    return folder / "builds" / f"{digest}.json"


class Ledger:
    """Writes the new site into ``tmp``, taking unchanged files over from ``out``.

    Every file of the new site goes through it (or is added with :meth:`adopt`), so it knows
    each file's digest for the manifest and each key for the next build.
    """

    def __init__(self, tmp: Path, out: Path, old: BuildState | None) -> None:
        self.tmp = tmp
        self.out = out
        self.old = old if old is not None and old.intact(out) else None
        self.new = BuildState()
        self.made: set[str] = set()
        self.reused = 0
        self.written = 0
        self.rendered_html = 0

    # -------------------------------------------------------------- reuse
    def can_reuse(self, rel: str, key: str) -> bool:
        """Whether ``rel`` was made from ``key`` by the previous build (and is still there)."""
        return bool(key) and self.old is not None and self.old.keys.get(rel) == key \
            and rel in self.old.files

    def reuse(self, rel: str, key: str) -> bool:
        """Take ``rel`` over from the previous site if its key is unchanged; say whether."""
        return self.can_reuse(rel, key) and self._take(rel, key)

    def _take(self, rel: str, key: str) -> bool:
        """Link (or copy) the previous site's ``rel`` into the new one."""
        assert self.old is not None
        target = self.tmp / rel
        self._folder(rel)
        try:
            os.link(self.out / rel, target)
        except OSError:
            try:
                shutil.copy2(self.out / rel, target)
            except OSError:
                return False
        digest, size, _ = self.old.files[rel]
        self.new.files[rel] = [digest, size, os.stat(target).st_mtime_ns]
        self.new.keys[rel] = key
        if rel in self.old.links:
            self.new.links[rel] = self.old.links[rel]
        self.reused += 1
        return True

    # -------------------------------------------------------------- writing
    def write(self, rel: str, data: bytes | str, key: str = "") -> int:
        """Write ``rel`` (recording its digest and, when given, its key); return the bytes."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self._folder(rel)
        target = self.tmp / rel
        with open(target, "wb") as f:
            f.write(raw)
        self.new.files[rel] = [hashlib.sha256(raw).hexdigest(), len(raw),
                               os.stat(target).st_mtime_ns]  # fmt: skip
        if key:
            self.new.keys[rel] = key
        self.written += 1
        if rel.endswith(".html"):
            self.rendered_html += 1
        return len(raw)

    def text(self, rel: str, text: str) -> int:
        """Write a file whose content is known: taken over when its bytes are unchanged."""
        raw = text.encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        old = self.old.files.get(rel) if self.old is not None else None
        if old is not None and old[0] == digest and self._take(rel, digest):
            return len(raw)
        return self.write(rel, raw, digest)

    def page(self, rel: str, key: str, produce: Callable[[], str]) -> int:
        """A file made by ``produce`` unless its key is unchanged; return its size.

        A page made again whose bytes equal the previous ones is still taken over (its key is
        conservative: a context may change in a part the page does not show).
        """
        if self.reuse(rel, key):
            return int(self.new.files[rel][1])
        raw = produce().encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        old = self.old.files.get(rel) if self.old is not None else None
        if old is not None and old[0] == digest and self._take(rel, key):
            return len(raw)
        return self.write(rel, raw, key)

    def adopt(self, rels: Iterable[str], key: str = "") -> None:
        """Record files another writer put under ``tmp`` (exports, assets, the index)."""
        for rel in rels:
            if rel in self.new.files:
                continue
            path = self.tmp / rel
            h = hashlib.sha256()
            with path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            st = path.stat()
            self.new.files[rel] = [h.hexdigest(), st.st_size, st.st_mtime_ns]
            if key:
                self.new.keys[rel] = key

    def adopt_tree(self, prefix: str = "") -> None:
        """Record every file under ``tmp/prefix`` not recorded yet."""
        base = self.tmp / prefix if prefix else self.tmp
        rels = []
        for dirpath, _dirs, names in os.walk(base):
            for name in names:
                rels.append((Path(dirpath) / name).relative_to(self.tmp).as_posix())
        self.adopt(sorted(rels))

    def reuse_tree(self, prefix: str, key: str) -> bool:
        """Take every file of the previous site under ``prefix`` over, if made from ``key``."""
        if not key or self.old is None or self.old.keys.get(prefix) != key:
            return False
        rels = sorted(r for r in self.old.files if r.startswith(prefix))
        if rels and all(self._take(rel, key) for rel in rels):
            self.new.keys[prefix] = key
            return True
        # Half taken over: clear it, so the writer that makes the tree again never writes
        # through a link into the previous site (still in place until the swap).
        shutil.rmtree(self.tmp / prefix, ignore_errors=True)
        for rel in rels:
            self.new.files.pop(rel, None)
            self.new.keys.pop(rel, None)
            self.new.links.pop(rel, None)
        return False

    def _folder(self, rel: str) -> None:
        folder = os.path.dirname(rel)
        if folder not in self.made:
            (self.tmp / folder).mkdir(parents=True, exist_ok=True)
            self.made.add(folder)

    # -------------------------------------------------------------- results
    def manifest(self, exclude: str) -> dict[str, Any]:
        """The SHA-256 manifest of every recorded file but ``exclude`` (sorted by path)."""
        files = [{"path": rel, "sha256": v[0], "size": v[1]}
                 for rel, v in sorted(self.new.files.items()) if rel != exclude]  # fmt: skip
        return {"algorithm": "sha256", "files": files}

    def known_links(self) -> Mapping[str, list[Any]]:
        """Links and ids of the HTML pages taken over (not parsed again)."""
        return self.new.links
