"""``gmeter similarity run --out DIR`` writes wherever the user says (issue 24, item 6).

Only a bundle placed in ``submissions/<benchmark>/`` must be named by ids.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import UsageError
from pipeline.lab.similarity.bundle import benchmark_id_of, check_out

NOT_IDS = ["My Results", "tmp.XYZ Q", "Ünïcode", "UPPER", "_lead"]


@pytest.mark.parametrize("parent", NOT_IDS)
@pytest.mark.parametrize("name", NOT_IDS)
def test_any_folder_outside_submissions_is_accepted(tmp_path: Path, parent: str, name: str) -> None:
    out = tmp_path / parent / name
    assert check_out(out, force=False) == out.resolve().parent
    assert benchmark_id_of(out.resolve().parent) == "similarity-local"


@pytest.mark.parametrize("bad", ["Bad Name", "UPPER", "_x"])
def test_inside_submissions_the_names_must_be_ids(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError, match="submissions/"):
        check_out(tmp_path / "submissions" / "bench" / bad, force=False)
    with pytest.raises(UsageError, match="must be ids"):
        check_out(tmp_path / "submissions" / bad / "bundle", force=False)
    ok = tmp_path / "submissions" / "bench" / "bundle"
    assert benchmark_id_of(check_out(ok, force=False)) == "bench"


def test_a_folder_with_files_still_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "Any Folder"
    out.mkdir()
    (out / "x").write_text("x")
    with pytest.raises(UsageError, match="already holds files"):
        check_out(out, force=False)
    check_out(out, force=True)
