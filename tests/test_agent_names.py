"""`gmeter validate` holds agent names to the rules of system names (issue 20, item 6)."""

from __future__ import annotations

import shutil

import pytest

from pipeline.validate import collect
from tests.conftest import GOOD

HOSTILE = {
    "cyrillic": "\u0410lpha",          # Cyrillic А: looks like the system name "Alpha"
    "fullwidth": "\uff21\uff11",        # Ａ１: not NFKC, and a look-alike of A1
    "zero-width": "A\u200b1",
    "bidi": "A\u202e1",
    "control": "A\x071",
    "separator": "a-1",                 # same skeleton as A1, another spelling
    "long": "B" * 201,
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_agent_name_is_an_error_naming_the_bundle(tmp_path, kind):
    subs = tmp_path / "submissions"
    shutil.copytree(GOOD, subs)
    resp = subs / "gen-mini" / "alpha" / "responses.csv"
    name = HOSTILE[kind].replace('"', "")
    text = resp.read_text(encoding="utf-8")
    # a second agent with the hostile name beside the honest A1
    extra = "".join(line.replace("A1,", f'"{name}",', 1) + "\n"
                    for line in text.splitlines()[1:] if line.startswith("A1,"))
    resp.write_text(text + extra, encoding="utf-8")
    errors = [p for p in collect([subs]).problems if p.severity == "error"
              and p.field.startswith("agent")]
    assert errors and all("gen-mini/alpha" in p.file for p in errors), kind


def test_honest_agent_names_pass(tmp_path):
    subs = tmp_path / "submissions"
    shutil.copytree(GOOD, subs)
    assert not [p for p in collect([subs]).problems if p.field.startswith("agent")]
