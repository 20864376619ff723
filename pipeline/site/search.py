"""Site search: a Pagefind index built at build time (no server, no CDN).

Pagefind (the ``pagefind`` Python package ships its binary through ``pagefind-bin``) reads
the built HTML and writes a static, chunked index plus its small search library into
``pagefind/``. Only pages marked ``data-pagefind-body`` are indexed: the latest boards,
system and agent pages, the systems index, about and submit — not the frozen release copies,
which would repeat every result. The header's search box (``site.js``) loads the library on
first use; a visitor who never searches downloads none of it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import BuildError

TIMEOUT = 300


def index_site(root: Path, skip: Sequence[str] = ()) -> None:
    """Build the Pagefind index of the site under ``root`` into ``root/pagefind``.

    ``skip`` names top-level folders holding no indexed page (the frozen release copies):
    Pagefind does not read them at all, which halves its time on a site with releases and
    gives the same index (only ``data-pagefind-body`` pages are indexed either way).
    """
    start_index(root, skip).wait()


class IndexRun:
    """Pagefind indexing a site in its own process (:func:`start_index`); :meth:`wait` ends it.

    The build checks its links while Pagefind runs (a second core's worth of a build).
    """

    def __init__(self, proc: subprocess.Popen[str], root: Path) -> None:
        self.proc, self.root = proc, root

    def wait(self) -> None:
        """Wait for Pagefind (at most :data:`TIMEOUT` seconds); raise if it failed."""
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            self.proc.kill()
            self.proc.communicate()
            raise BuildError(f"the search index could not be built: {exc}") from exc
        if self.proc.returncode != 0:
            tail = (err or out or "").strip().splitlines()[-5:]
            raise BuildError(
                "the search index could not be built (pagefind exited with "
                f"{self.proc.returncode}): " + " | ".join(tail)
            )
        if not (self.root / "pagefind" / "pagefind.js").is_file():
            raise BuildError(
                "pagefind wrote no pagefind/pagefind.js", hint="check the pagefind version"
            )

    def stop(self) -> None:
        """End Pagefind if it still runs (a build that failed meanwhile)."""
        if self.proc.returncode is None:  # not waited for yet
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.communicate()


def start_index(root: Path, skip: Sequence[str] = ()) -> IndexRun:
    """Start Pagefind on the site under ``root`` (see :func:`index_site`); return the run."""
    try:
        from pagefind.service import _must_get_executable  # the binary of pagefind-bin
    except ImportError as exc:
        raise BuildError(
            "the pagefind package is not installed", hint="reinstall gmeter (make install)"
        ) from exc
    try:
        exe = str(_must_get_executable())
    except Exception as exc:  # pagefind raises its own error when no binary is installed
        raise BuildError(
            f"no Pagefind binary: {exc}", hint="pip install 'pagefind[bin]' (make install does)"
        ) from exc
    cmd = [
        exe,
        "--site",
        str(root),
        "--output-subdir",
        "pagefind",
        "--silent",
        "--force-language",
        "en",
    ]
    if skip:
        tops = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in skip)
        cmd += ["--glob", "{" + ",".join(["*.html", *(f"{t}/**/*.html" for t in tops)]) + "}"]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)  # fmt: skip
    except OSError as exc:
        raise BuildError(f"the search index could not be built: {exc}") from exc
    return IndexRun(proc, root)
