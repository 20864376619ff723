"""``make check-submission``: the verdict comes from the base branch's gmeter (issue 20, item 8).

A scratch repository holds gmeter's own code (pipeline/, cli/, .ci/, the Makefile) and a small
benchmark on ``main``. The pull request copies a bundle (a resubmission: an error) and patches
the checker to find nothing, the check script to print "passed" and, where it can matter, the
Makefile too. The check must still fail, with the base's findings: the pull request's tree is
read as data only.

The fast tests stand in for the base environment's ``pip install`` with the base commit's own
source tree (``git archive``, as the script does) run by this interpreter; the slow one lets
the script install it for real.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest
from check_fixtures import SYS_A, bundle, commit, generality_repo, git, write

ROOT = Path(__file__).resolve().parents[1]
CODE = ("pipeline", "cli", ".ci", "Makefile", "pyproject.toml", "README.md")
TELL = "THE PULL REQUEST'S CODE RAN"

PATCHED_REGISTRY = f'''
import sys
print({TELL!r}, file=sys.stderr)
def all_checks():
    return []
def run_benchmark_checks(ctx):
    return []
def run_pull_request_checks(ctx):
    return []
'''


def _needs_make() -> None:
    if shutil.which("make") is None or shutil.which("git") is None:
        pytest.skip("make and git are needed")


def _code_repo(tmp_path: Path) -> tuple[Path, str]:
    """``main`` = gmeter's code + toy-aref; the work tree on branch ``pr`` at ``main``."""
    root = generality_repo(tmp_path / "repo")
    git(root, "checkout", "-q", "main")
    for name in CODE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(src, root / name)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "gmeter")
    git(root, "checkout", "-q", "-B", "pr")
    return root, git(root, "rev-parse", "main").strip()


def _hostile_pull_request(root: Path, *, makefile: bool) -> None:
    """A resubmission, with the checker, the check script (and the Makefile) made to pass."""
    copy = bundle("toy-aref", "sys-a-again", SYS_A, system="System A",
                  contact="A Owner <a@example.org>")
    files = {**copy,
             "pipeline/check/registry.py": PATCHED_REGISTRY,
             ".ci/check-submission": f"#!/bin/sh\necho {TELL} >&2; echo passed; exit 0\n"}
    if makefile:
        files["Makefile"] = f"check-submission:\n\t@echo {TELL} >&2; echo passed\n"
    write(root, files)
    commit(root, "faster checks")


def _seed_base_env(cache: Path, root: Path, commit_sha: str) -> None:
    """What the script's install leaves in its cache, without pip: the base's source tree."""
    env = cache / commit_sha
    src = env / "src"
    src.mkdir(parents=True)
    data = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", commit_sha],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(src, filter="data")
    exe = env / "venv" / "bin" / "gmeter"
    exe.parent.mkdir(parents=True)
    prog = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'gmeter'; "
            "from cli.app import main; main()")
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{prog}" "{src}" "$@"\n',
                   encoding="utf-8")
    exe.chmod(0o755)
    (env / ".installed").touch()


def _make(*args: str, cwd: Path, cache: Path, timeout: int = 600,
          real: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GMETER_"))}
    env.update(GMETER_BASE_CACHE=str(cache), PYTHON=sys.executable,
               GMETER_CACHE_DIR=str(cache / "charts"))
    if not real:
        env["GMETER_BASE_EXTRAS"] = ""  # the seeded environment is named by the commit alone
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _assert_base_verdict(done: subprocess.CompletedProcess[str], report: Path) -> None:
    out = done.stdout + done.stderr
    assert done.returncode != 0, out  # a failed check fails make
    assert TELL not in out and "passed\n" not in done.stdout, out
    text = report.read_text(encoding="utf-8")
    assert "resubmission" in text and "maintainer-only" in text, text
    assert "pipeline/check/registry.py" in text  # named as a change for a maintainer


def test_the_pull_requests_own_make_target_runs_the_bases_script_and_gmeter(tmp_path):
    _needs_make()
    root, base = _code_repo(tmp_path)
    _hostile_pull_request(root, makefile=False)
    cache = tmp_path / "cache"
    _seed_base_env(cache, root, base)
    report = tmp_path / "report.md"
    done = _make("check-submission", "BASE=main", f"REPORT={report}", cwd=root, cache=cache)
    _assert_base_verdict(done, report)


def test_ci_runs_the_base_checkouts_make_on_the_pull_request_as_data(tmp_path):
    _needs_make()
    root, base = _code_repo(tmp_path)
    _hostile_pull_request(root, makefile=True)  # the pull request's Makefile never runs in CI
    checkout = tmp_path / "base"
    git(root, "worktree", "add", "-q", "--detach", str(checkout), base)
    cache = tmp_path / "cache"
    _seed_base_env(cache, root, base)
    report = tmp_path / "report.md"
    done = _make("-C", str(checkout), "check-submission", f"BASE={base}", f"TREE={root}",
                 f"REPORT={report}", cwd=tmp_path, cache=cache)
    _assert_base_verdict(done, report)


def test_an_honest_pull_request_passes_the_same_way(tmp_path):
    _needs_make()
    root, base = _code_repo(tmp_path)
    write(root, bundle("toy-aref", "new-sys", {"delta": {"i1": 15.5, "i2": 22.5, "i3": 33.25,
                                                         "i4": 41.5, "i5": 20.5, "i6": 3.5}},
                       system="New", contact="n <n@example.org>"))
    commit(root, "add new-sys")
    cache = tmp_path / "cache"
    _seed_base_env(cache, root, base)
    report = tmp_path / "report.md"
    done = _make("check-submission", "BASE=main", f"REPORT={report}", cwd=root, cache=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "new-sys" in report.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a virtual environment with numba, gymnasium and scikit-learn
def test_the_base_gmeter_is_installed_for_real_and_judges(tmp_path):
    """The script's own install (a virtual environment from the base commit's archive)."""
    _needs_make()
    root, _ = _code_repo(tmp_path)
    _hostile_pull_request(root, makefile=False)
    report = tmp_path / "report.md"
    done = _make("check-submission", "BASE=main", f"REPORT={report}", cwd=root,
                 cache=tmp_path / "cache", timeout=1800, real=True)
    assert list((tmp_path / "cache").glob("*-aiq-similarity/.installed"))  # every track
    _assert_base_verdict(done, report)
