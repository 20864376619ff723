"""Scratch benchmark repositories for the ``gmeter check`` tests (no shared state, no network).

Every repository is built in a pytest ``tmp_path``: ``git init``, a small ``submissions/`` tree
committed on ``main``, then a branch where the test adds or tampers with bundles.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

SUBMITTER = "submitter@example.org"
ITEMS = ("i1", "i2", "i3", "i4", "i5", "i6")

GENERALITY_BENCH = """\
id = "toy-aref"
title = "Toy ARef benchmark"
track = "generality"
version = "1.0.0"
description = "Six items; difficulty from the reference agent (ARef)."
licence = "CC0-1.0"
created = 2020-01-01

[generality]
transform = "aref"
reference_agent = "ref"
capability_range = [0.0, 1.0]
bootstrap = 20
"""

SUBMISSION = """\
submitted = {date}
contact = "{contact}"
licence = "CC-BY-4.0"
description = "Toy responses."

[system]
name = "{name}"
"""

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git(root: Path, *args: str, email: str = "maintainer@example.org") -> str:
    """Run git in ``root`` as ``email`` (hermetic: no global config)."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": email.split("@")[0],
           "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": email.split("@")[0],
           "GIT_COMMITTER_EMAIL": email}
    res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                         env=env, check=True)
    return res.stdout


def write(root: Path, files: Mapping[str, str]) -> None:
    """Write text files below ``root``."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def responses(rows: Mapping[str, Mapping[str, float]]) -> str:
    """A long ``responses.csv`` from agent → item → value."""
    lines = ["agent,item,value"]
    for agent, row in rows.items():
        lines += [f"{agent},{item},{value}" for item, value in row.items()]
    return "\n".join(lines) + "\n"


def bundle(bench: str, name: str, rows: Mapping[str, Mapping[str, float]], *,
           system: str | None = None, contact: str = "someone <someone@example.org>",
           date: str = "2023-05-01") -> dict[str, str]:
    """The files of one generality bundle."""
    return {
        f"submissions/{bench}/{name}/submission.toml": SUBMISSION.format(
            date=date, contact=contact, name=system or name),
        f"submissions/{bench}/{name}/responses.csv": responses(rows),
    }


REF = {"ref": dict(zip(ITEMS, (10.0, 20.0, 30.0, 40.0, 50.0, 60.0), strict=True))}
SYS_A = {
    "alpha": dict(zip(ITEMS, (12.5, 25.5, 20.25, 10.5, 30.5, 5.5), strict=True)),
    "beta": dict(zip(ITEMS, (5.5, 15.5, 35.25, 45.5, 10.5, 2.5), strict=True)),
}
SYS_B = {"gamma": dict(zip(ITEMS, (11.5, 2.5, 31.25, 3.5, 4.5, 1.5), strict=True))}
NEW = {"delta": dict(zip(ITEMS, (15.5, 22.5, 33.25, 41.5, 20.5, 3.5), strict=True))}


def generality_repo(root: Path) -> Path:
    """A repository with ``toy-aref`` and three bundles on ``main``; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, {"submissions/toy-aref/benchmark.toml": GENERALITY_BENCH,
                 "README.md": "toy\n"})
    write(root, bundle("toy-aref", "ref-agent", REF, system="Reference",
                       contact="Ref Owner <ref@example.org>"))
    write(root, bundle("toy-aref", "sys-a", SYS_A, system="System A",
                       contact="A Owner <a@example.org>"))
    write(root, bundle("toy-aref", "sys-b", SYS_B, system="System B",
                       contact="B Owner <b@example.org>"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "benchmark and three bundles")
    git(root, "checkout", "-q", "-b", "pr")
    git(root, "config", "user.email", SUBMITTER)
    return root


def commit(root: Path, message: str, *, email: str = "") -> None:
    """Commit everything in the work tree as ``email`` (default: the submitter)."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, email=email or SUBMITTER)
