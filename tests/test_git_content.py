"""Git content no clone can rebuild is refused: gitlinks, links git tracks, Git LFS pointers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.validate import collect
from tests.conftest import GOOD

LFS = (b"version https://git-lfs.github.com/spec/v1\n"
       b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
       b"size 12345\n")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(GOOD, repo / "submissions")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "good")
    return repo


def _errors(path: Path) -> list[str]:
    return [f"{p.file} {p.message}" for p in collect([path]).problems if p.severity == "error"]


def test_the_honest_repository_is_clean(tmp_path):
    assert _errors(_repo(tmp_path) / "submissions") == []


@pytest.mark.parametrize("where", ["gen-mini/alpha/sub", "gen-mini/alpha/deep/er/mod",
                                   "gen-mini/reference/vendor"])
def test_a_gitlink_anywhere_in_a_bundle_or_benchmark_is_refused(tmp_path, where):
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "submissions" / where).mkdir(parents=True)  # how a checkout shows a submodule
    _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},submissions/{where}")
    _git(repo, "commit", "-q", "-m", "submodule")
    errs = _errors(repo / "submissions")
    assert any(where.split("/", 1)[1] in e and "gitlink" in e for e in errs), errs


def test_a_link_git_tracks_is_refused_even_checked_out_as_a_file(tmp_path):
    repo = _repo(tmp_path)
    target = repo / "submissions" / "gen-mini" / "alpha" / "extra.csv"
    target.write_text("../../../../etc/passwd")  # core.symlinks=false checks a link out so
    blob = _git(repo, "hash-object", "-w", str(target)).strip()
    _git(repo, "update-index", "--add", "--cacheinfo",
         f"120000,{blob},submissions/gen-mini/alpha/extra.csv")
    errs = _errors(repo / "submissions")
    assert any("extra.csv" in e and "symbolic link" in e for e in errs), errs


@pytest.mark.parametrize("name", ["responses.csv", "extra.json", "blob.bin",
                                  "../reference/items.csv"])
@pytest.mark.parametrize("spec", [b"git-lfs", b"hawser"])
def test_an_lfs_pointer_is_refused_whatever_its_name(tmp_path, name, spec):
    subs = tmp_path / "submissions"
    shutil.copytree(GOOD, subs)  # outside git too: the pointer itself is the problem
    (subs / "gen-mini" / "alpha" / name).write_bytes(LFS.replace(b"git-lfs", spec))
    errs = _errors(subs)
    assert any("LFS pointer" in e for e in errs), errs


def test_a_real_symlink_is_refused(tmp_path):
    subs = tmp_path / "submissions"
    shutil.copytree(GOOD, subs)
    (subs / "gen-mini" / "alpha" / "link.csv").symlink_to(subs / "gen-mini" / "reference" /
                                                          "items.csv")
    assert any("symbolic link" in e for e in _errors(subs))


# A conversion git applies on checkout makes the bytes a clone reads differ from the blob
# history holds: the content hash of what was checked can then never be recovered from git.
CONVERSIONS = {
    "eol": ("*.csv text eol=crlf\n", b""),
    "ident": ("*.csv ident\n", b"# $Id$\n"),
    "encoding": ("*.csv working-tree-encoding=UTF-16LE\n", b""),
}


@pytest.mark.parametrize("how", sorted(CONVERSIONS))
@pytest.mark.parametrize("where", ["", "submissions/", "submissions/gen-mini/alpha/"])
def test_a_file_git_rewrites_on_checkout_is_refused(tmp_path, how, where):
    rule, head = CONVERSIONS[how]
    repo = _repo(tmp_path)
    target = repo / "submissions" / "gen-mini" / "alpha" / "responses.csv"
    if head:
        target.write_bytes(head + target.read_bytes())
        _git(repo, "commit", "-q", "-am", "data")
    (repo / where / ".gitattributes").write_text(rule)
    _git(repo, "add", f"{where}.gitattributes")
    _git(repo, "commit", "-q", "-m", "attributes")
    target.unlink()
    _git(repo, "checkout", "--", ".")  # what every clone shows
    errs = _errors(repo / "submissions")
    assert any("responses.csv" in e and "rewritten by git on checkout" in e for e in errs), errs


def test_plain_line_ends_under_text_auto_and_uncommitted_edits_are_fine(tmp_path):
    repo = _repo(tmp_path)
    (repo / ".gitattributes").write_text("* text=auto\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "text=auto")
    assert _errors(repo / "submissions") == []
    target = repo / "submissions" / "gen-mini" / "alpha" / "responses.csv"
    target.write_bytes(target.read_bytes().replace(b"\n", b"\r\n"))  # an edit, not yet committed
    assert not [e for e in _errors(repo / "submissions") if "rewritten" in e]
