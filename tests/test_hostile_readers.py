"""Every reader of a benchmark or bundle file goes through the bounded parsers.

The class: a TOML or JSON file a submitter (or a pull request) wrote, read by any command —
``validate``/``score`` through the track (the AIQ log ``aiq.toml``), or the lab commands that
read a manifest from disk (``gmeter aiq run --benchmark``, ``gmeter aiq verify``, the
similarity commands, the g-index programs) — is bounded in size and nesting, refuses NaN,
huge integers, control characters and links, and fails with one message naming the file and
the field: never a ``RecursionError``, a ``MemoryError`` or a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.errors import GmeterError, UsageError
from pipeline.inputs import FileSet
from pipeline.limits import MAX_MANIFEST_BYTES, MAX_NESTING

ROOT = Path(__file__).resolve().parents[1]

# Each payload: (name, bytes of a TOML file, the field its refusal names).
HOSTILE_TOML: list[tuple[str, bytes, str]] = [
    ("deep", b"x = " + b"[" * (MAX_NESTING + 50) + b"]" * (MAX_NESTING + 50) + b"\n",
     "syntax"),
    ("deeper-than-the-parser", b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "syntax"),
    ("huge", b'track = "aiq"\n# ' + b"a" * (MAX_MANIFEST_BYTES + 10) + b"\n", "size"),
    ("nan", b'track = "aiq"\nx = nan\n', "x"),
    ("inf", b'track = "aiq"\nx = -inf\n', "x"),
    ("big-int", b'track = "aiq"\nx = ' + str(2**70).encode() + b"\n", "x"),
    ("control", b'track = "aiq"\nx = "a\\u001b[2Jb"\n', "x"),
    ("bidi", 'track = "aiq"\nx = "a\u202eb"\n'.encode(), "x"),
    ("not-utf8", b'track = "aiq"\nx = "\xff\xfe"\n', "encoding"),
    ("syntax", b"track = = \n", "line 1"),
]


def _readers() -> dict[str, Callable[[Path], object]]:
    """Every on-disk manifest reader outside ``validate``, keyed by what calls it."""
    from pipeline.lab.aiq.benchmark import load_benchmark
    from pipeline.lab.similarity.bundle import check_benchmark_file
    from pipeline.lab.similarity.experiment import settings_from_manifest
    from pipeline.limits import read_toml_file

    return {
        "limits.read_toml_file": read_toml_file,
        "aiq run --benchmark": lambda p: load_benchmark(p.parent),
        "similarity bundle check": lambda p: check_benchmark_file(p, ["t"]),
        "similarity settings": settings_from_manifest,
    }


@pytest.mark.parametrize("reader", sorted(_readers()))
@pytest.mark.parametrize(("case", "data", "field"), HOSTILE_TOML,
                         ids=[c[0] for c in HOSTILE_TOML])
def test_disk_readers_bound_every_toml(tmp_path: Path, reader: str, case: str, data: bytes,
                                       field: str) -> None:
    path = tmp_path / "bench" / "benchmark.toml"
    path.parent.mkdir()
    path.write_bytes(data)
    with pytest.raises(GmeterError) as info:
        _readers()[reader](path)
    msg = str(info.value)
    assert "benchmark.toml" in msg and field in msg, msg
    assert "Traceback" not in msg and len(msg) < 2000


@pytest.mark.parametrize("reader", sorted(_readers()))
def test_disk_readers_refuse_links_and_missing_files(tmp_path: Path, reader: str) -> None:
    outside = tmp_path / "secret.toml"
    outside.write_text('track = "aiq"\n', encoding="utf-8")
    (tmp_path / "bench").mkdir()
    link = tmp_path / "bench" / "benchmark.toml"
    link.symlink_to(outside)
    with pytest.raises(GmeterError, match="not a regular file"):
        _readers()[reader](link)
    link.unlink()
    with pytest.raises(GmeterError, match="missing"):
        _readers()[reader](link)


def test_similarity_readers_stay_usage_errors(tmp_path: Path) -> None:
    """The similarity commands' exit code for a bad --benchmark file is unchanged (usage)."""
    from pipeline.lab.similarity.experiment import settings_from_manifest

    path = tmp_path / "s.toml"
    path.write_bytes(HOSTILE_TOML[0][1])
    with pytest.raises(UsageError):
        settings_from_manifest(path)


@pytest.mark.parametrize(("case", "data", "field"), HOSTILE_TOML,
                         ids=[c[0] for c in HOSTILE_TOML])
def test_aiq_log_is_read_by_the_bounded_parser(case: str, data: bytes, field: str) -> None:
    """``aiq.toml`` (read by validate, score and the replay) is a manifest like any other."""
    from pipeline.tracks.aiq.settings import LOG, read_log

    log, problems = read_log(FileSet("submissions/b/x", {LOG: data}))
    assert log == {} and problems
    assert all(p.file == f"submissions/b/x/{LOG}" for p in problems)
    assert any(field in p.field or field in p.message for p in problems), problems


def test_aiq_log_keeps_64_bit_seeds() -> None:
    """A run seed may be a 64-bit integer (the benchmark's seeds are); still bounded."""
    from pipeline.tracks.aiq.settings import LOG, read_log

    log, problems = read_log(FileSet("b", {LOG: f"seed = {2**64 - 1}\n".encode()}))
    assert problems == [] and log["seed"] == 2**64 - 1


@pytest.mark.parametrize("data", [b"[" * 100_000, b'{"a": NaN}', b"\xff", b"[1e999]"])
def test_gindex_program_reader_is_bounded(tmp_path: Path, data: bytes) -> None:
    from pipeline.lab.gindex.files import read_json

    p = tmp_path / "prog.json"
    p.write_bytes(data)
    with pytest.raises(GmeterError) as info:
        read_json(p)
    assert "prog.json" in str(info.value)
    p.unlink()
    p.symlink_to(tmp_path)
    with pytest.raises(GmeterError, match="not a regular file"):
        read_json(p)


def test_no_reader_parses_toml_or_opens_bundle_files_unbounded() -> None:
    """The audit as a test: TOML is parsed only in ``pipeline/limits.py`` (every other module
    calls :func:`~pipeline.limits.parse_toml` or :func:`~pipeline.limits.read_toml_file`)."""
    offenders = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")) + sorted((ROOT / "cli").rglob("*.py")):
        if path.name == "limits.py" and path.parent.name == "pipeline":
            continue
        text = path.read_text(encoding="utf-8")
        code = re.sub(r'"""[\s\S]*?"""', "", text)  # docstrings may name the parser
        if re.search(r"\btomllib\.loads?\(|\bimport tomllib\b|\bfrom tomllib\b", code):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def _lab_file_readers() -> dict[str, Callable[[Path], object]]:
    """The lab commands that read one data file a user points at (often a bundle's)."""
    from pipeline.lab.generality.matrix import read_matrix
    from pipeline.lab.gindex.files import read_json
    from pipeline.lab.similarity.show import analyse_runs_file

    return {"generality/fa/irt FILE": read_matrix, "gindex programs": read_json,
            "similarity show FILE": lambda p: analyse_runs_file(p)}


@pytest.mark.parametrize("reader", sorted(_lab_file_readers()))
def test_lab_file_readers_refuse_links_and_name_the_file(tmp_path: Path, reader: str) -> None:
    target = tmp_path / "elsewhere.csv"
    target.write_text("agent,item,value\na,i,1\n", encoding="utf-8")
    link = tmp_path / "data.csv"
    link.symlink_to(target)
    with pytest.raises(GmeterError) as info:
        _lab_file_readers()[reader](link)
    assert "data.csv" in str(info.value) and "regular file" in str(info.value)


def test_a_sealed_set_is_sized_before_it_is_read(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """read_sealed counts bytes from the file system first: an oversized set is never loaded."""
    from pipeline import bundles

    folder = tmp_path / "maya" / "d1"
    folder.mkdir(parents=True)
    for k in range(4):
        (folder / f"t{k}.json").write_bytes(b"{}" * 4)  # 8 bytes each
    (folder / "link.json").symlink_to(folder / "t0.json")
    opened: list[str] = []
    real_open = Path.open

    def spy(self: Path, *a: object, **kw: object) -> object:
        opened.append(self.name)
        return real_open(self, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", spy)
    assert sorted(bundles.read_sealed(tmp_path, "maya")) == [f"d1/t{k}.json" for k in range(4)]
    assert "link.json" not in opened
    opened.clear()
    monkeypatch.setattr(bundles, "MAX_SEALED_BYTES", 20)
    why = bundles.read_sealed(tmp_path, "maya")
    assert isinstance(why, str) and "more than 20 bytes" in why
    assert opened == ["t0.json", "t1.json"]  # the third file is refused before it is opened
