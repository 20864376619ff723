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
