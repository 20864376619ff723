"""Build ``public/`` from one store with two checkouts and require byte-identical trees.

The acceptance test of refactorings that must not change what a visitor sees::

    make site-identical REF=origin/main        # or any commit, tag or branch

It builds the site from the current store (``GMETER_DB`` or ``.gmeter/gmeter.duckdb``; run
``make site`` first) twice — once with the checkout at ``REF`` (a temporary ``git worktree``),
once with the working tree — and compares every file, ``data/manifest.json`` included. Exit 0
when the trees are identical; otherwise it lists the first differing paths and exits 1.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _build(checkout: Path, store: Path, out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "cli", "--db", str(store), "-q", "build", "--out", str(out)]
    subprocess.run(cmd, cwd=checkout, env=env, check=True)


def _differences(a: Path, b: Path) -> list[str]:
    out: list[str] = []
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    out += [f"only in REF: {p}" for p in sorted(files_a - files_b)]
    out += [f"only in the working tree: {p}" for p in sorted(files_b - files_a)]
    for rel in sorted(files_a & files_b):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            out.append(f"differs: {rel}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="HEAD", help="the commit to compare with (default HEAD)")
    default_db = os.environ.get("GMETER_DB", str(ROOT / ".gmeter/gmeter.duckdb"))
    ap.add_argument("--db", default=default_db, help="the store to build from")
    args = ap.parse_args(argv)
    store = Path(args.db).resolve()
    if not store.is_file():
        print(f"no store at {store}: run `make site` first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="site-identical-") as tmp:
        work = Path(tmp)
        frozen = work / "store.duckdb"
        shutil.copy2(store, frozen)  # both builds read the very same bytes
        tree = work / "ref"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), args.ref],
                       cwd=ROOT, check=True)
        try:
            _build(tree, frozen, work / "site-ref")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                           check=False)
        _build(ROOT, frozen, work / "site-head")
        diffs = _differences(work / "site-ref", work / "site-head")
    if diffs:
        print(f"{len(diffs)} difference(s) between {args.ref} and the working tree:")
        print("\n".join(diffs[:50]))
        return 1
    print(f"identical: the site built by {args.ref} and by the working tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
