"""Chart specs checked once: the same dict as Altair's checked ``to_dict()``, checked once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.site import checked_specs
from pipeline.site.checked_specs import checked_dict, spec_key


class Chart:
    """A stand-in for an Altair chart: counts the checked writes; refuses when told to."""

    def __init__(self, spec: dict[str, Any], valid: bool = True) -> None:
        self.spec, self.valid, self.checks = spec, valid, 0

    def to_dict(self, validate: bool = True) -> dict[str, Any]:
        if validate:
            self.checks += 1
            if not self.valid:
                raise ValueError("the schema refuses this spec")
        return dict(self.spec)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GMETER_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_a_spec_is_checked_once_then_taken_as_checked(cache: Path) -> None:
    spec = {"mark": "point", "encoding": {"x": {"field": "a", "type": "quantitative"}}}
    first, again = Chart(spec), Chart(spec)
    assert checked_dict(first) == spec and first.checks == 1
    assert checked_dict(again) == spec and again.checks == 0
    other = Chart({**spec, "mark": "line"})
    assert checked_dict(other) == other.spec and other.checks == 1  # another spec: checked


def test_a_refused_spec_raises_every_time_and_is_not_recorded(cache: Path) -> None:
    bad = Chart({"mark": "nothing"}, valid=False)
    for _ in range(2):
        with pytest.raises(ValueError, match="refuses"):
            checked_dict(bad)
    assert bad.checks == 2
    assert not list((cache / checked_specs.FOLDER).rglob("*.ok"))


def test_the_key_holds_the_spec_and_the_altair_version(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = {"b": 1, "a": [1, 2]}
    assert spec_key(spec) == spec_key({"a": [1, 2], "b": 1})  # key order does not matter
    assert spec_key(spec) != spec_key({**spec, "b": 2})
    before = spec_key(spec)
    monkeypatch.setattr(checked_specs, "_altair", lambda: "0.0.0")
    assert spec_key(spec) != before  # a new Altair (a new schema) checks again


def test_real_altair_charts_give_the_checked_dict(cache: Path) -> None:
    alt = pytest.importorskip("altair")
    chart = alt.Chart(alt.Data(name="values")).mark_line().encode(
        x=alt.X("x:Q", title="x"), y="y:Q", tooltip=[alt.Tooltip("y:Q", format=".3g")]
    )
    expected = chart.to_dict()
    assert checked_dict(chart) == expected
    assert checked_dict(chart) == expected  # the second time from the record


def _templates() -> list[tuple[Any, tuple[Any, ...]]]:
    """Every kept template function of the site's charts, with argument sets a build uses."""
    from pipeline.site import charts

    return [
        (charts._interval_template, ("score",)),
        (charts._line_template, ("x", "y", True, True, False, True, True, False, True)),
        (charts._line_template, ("day", "y", False, False, True, False, True, False, False,
                                 False, 7, (0.0, 1.0))),
        (charts._scatter_template, ("x", "y", "", True, True, True, False, True, 0, None)),
        (charts._bar_template, ("agent", "score")),
    ]


def test_kept_templates_equal_the_ones_made_and_survive_a_broken_cache(cache: Path) -> None:
    """A template read back from the cache is the dict Altair makes; a corrupt file is remade."""
    import json

    cases = _templates()
    made = [fn.__wrapped__(*args) for fn, args in cases]  # Altair, no cache
    for (fn, args), fresh in zip(cases, made, strict=True):
        fn.cache_clear()
        assert fn(*args) == fresh  # made, stored
        fn.cache_clear()
        read = fn(*args)  # from the file
        assert read == fresh and json.dumps(read) == json.dumps(fresh)
    files = sorted((cache / checked_specs.TEMPLATES).rglob("*.json"))
    assert len(files) == len({(fn.__qualname__, args) for fn, args in cases})
    for f in files:
        f.write_text("{ not json", encoding="utf-8")
    for (fn, args), fresh in zip(cases, made, strict=True):
        fn.cache_clear()
        assert fn(*args) == fresh


def test_a_kept_template_is_keyed_by_its_arguments_altair_and_the_code(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.site import incremental

    calls: list[tuple[Any, ...]] = []

    def make(*args: Any) -> dict[str, Any]:
        calls.append(args)
        return {"mark": "point", "title": list(args)}

    kept = checked_specs.kept_template(make)
    assert kept("a", 1) == {"mark": "point", "title": ["a", 1]}
    kept.cache_clear()
    kept("a", 1)
    assert len(calls) == 1  # read back
    kept("a", 2)
    assert len(calls) == 2  # other arguments: made
    kept.cache_clear()
    monkeypatch.setattr(checked_specs, "_altair", lambda: "0.0.0")
    kept("a", 1)
    assert len(calls) == 3  # another Altair: made again
    kept.cache_clear()
    monkeypatch.setattr(incremental, "code_digest", lambda: "other code")
    kept("a", 1)
    assert len(calls) == 4  # other code: made again


def test_each_code_keeps_its_own_folder_and_old_ones_go(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import time

    from pipeline.site import assets, incremental

    root = cache / "svg-final"
    old, recent = root / ("0" * 16), root / ("1" * 16)
    for folder in (old, recent):
        (folder / "ab").mkdir(parents=True)
        (folder / "ab" / "x.svg").write_text("<svg/>")
    stale = time.time() - assets.CODE_KEPT_SECONDS - 60
    os.utime(old, (stale, stale))
    monkeypatch.setattr(incremental, "code_digest", lambda: "f" * 64)
    here = assets.code_cache_dir("svg-final")
    assert here == root / ("f" * 16) and here.is_dir()
    assert not old.exists()  # another code's folder, unused for a week
    assert (recent / "ab" / "x.svg").is_file()  # another code's, in use lately: kept
