"""What the pipeline reads from a benchmark folder or a bundle: files in memory, typed inputs.

The ground floor of :mod:`pipeline`: :mod:`pipeline.bundles` makes these types, the tracks
(:mod:`pipeline.tracks.base`) and the use cases consume them, so they sit below both and import
nothing of :mod:`pipeline` but :mod:`pipeline.limits` (bounded JSON). A track sees a bundle only
through them: everything is already in memory, nothing of it is executed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FileSet:
    """The files of a benchmark folder or a bundle, read into memory.

    Attributes
    ----------
    label : str
        Where the files came from, as shown in messages (``submissions/ale-ranks/deepmind``).
    files : Mapping[str, bytes]
        Relative POSIX path → content. Nested bundles are not included in a benchmark's set.
    """

    label: str
    files: Mapping[str, bytes]

    def where(self, path: str) -> str:
        """The display path of ``path`` (label + relative path)."""
        return f"{self.label}/{path}" if self.label else path

    def has(self, path: str) -> bool:
        """Whether ``path`` is in the set."""
        return path in self.files

    def under(self, prefix: str) -> list[str]:
        """Sorted paths below the folder ``prefix`` (no trailing slash needed)."""
        pre = prefix.rstrip("/") + "/"
        return sorted(p for p in self.files if p.startswith(pre))

    def text(self, path: str) -> str:
        """The file decoded as UTF-8 (validation has already rejected other encodings)."""
        return self.files[path].decode("utf-8")

    def json(self, path: str) -> Any:
        """The file parsed as JSON (validation has already rejected JSON that does not parse).

        Bounded like validation (:func:`pipeline.limits.loads_bounded`): a file too deep to
        parse raises ``ValueError``, never ``RecursionError``.
        """
        from pipeline.limits import loads_bounded

        return loads_bounded(self.text(path))

    def csv_rows(self, path: str) -> list[dict[str, str]]:
        """The rows of a CSV file with a header line, as dicts of strings."""
        return list(csv.DictReader(io.StringIO(self.text(path), newline="")))


@dataclass(frozen=True)
class BenchmarkInput:
    """A benchmark as the tracks see it.

    Attributes
    ----------
    id, track, version : str
        From ``benchmark.toml``.
    manifest : Mapping[str, Any]
        The whole parsed ``benchmark.toml``.
    settings : Mapping[str, Any]
        The track section (``[gindex]`` etc.) after validation by the track's settings model,
        defaults filled in.
    files : FileSet
        ``benchmark.toml`` and everything under the benchmark folder that is not a bundle
        (``reference/...``).
    content_hash : str
        SHA-256 over ``files`` (see :func:`pipeline.bundles.content_hash`).
    """

    id: str
    track: str
    version: str
    manifest: Mapping[str, Any]
    settings: Mapping[str, Any]
    files: FileSet
    content_hash: str = ""


@dataclass(frozen=True)
class BundleInput:
    """One submission bundle as the tracks see it.

    Attributes
    ----------
    id : str
        The bundle's folder name, unique within its benchmark.
    benchmark : str
        The benchmark id.
    manifest : Mapping[str, Any]
        The whole parsed ``submission.toml``.
    settings : Mapping[str, Any]
        Its track section (``[gindex]`` …) after validation, defaults filled in.
    files : FileSet
        Every file of the bundle, ``submission.toml`` included.
    content_hash : str
        SHA-256 over ``files``.
    """

    id: str
    benchmark: str
    manifest: Mapping[str, Any]
    settings: Mapping[str, Any]
    files: FileSet
    content_hash: str = ""

    @property
    def system(self) -> str:
        """The system's display name from ``[system].name``."""
        return str(self.manifest.get("system", {}).get("name", self.id))
