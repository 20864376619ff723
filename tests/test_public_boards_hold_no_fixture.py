"""No test fixture on a public board: every bundle under ``submissions/`` is a real entry.

A bundle whose agent is loaded from the test suite (``tests.…`` module or a ``tests/`` file)
would put a fixture on the published board; fixtures stay in ``tests/``.
"""

from __future__ import annotations

import re
from pathlib import Path

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
_FIXTURE = re.compile(r"(?:^|[\s\"':=])tests(?:[./])|\b\w*_fixtures\b")


def test_no_bundle_runs_an_agent_from_the_test_suite() -> None:
    offenders = []
    for toml in sorted(SUBMISSIONS.rglob("*.toml")):
        if toml.name == "benchmark.toml" or toml.parent == SUBMISSIONS:
            continue
        for n, line in enumerate(toml.read_text(encoding="utf-8").splitlines(), 1):
            key = line.split("=", 1)[0].strip()
            if key in ("agent", "code_url", "organisation") and _FIXTURE.search(
                line.split("=", 1)[-1]
            ):
                offenders.append(f"{toml.relative_to(SUBMISSIONS)}:{n}: {line.strip()}")
    assert not offenders, offenders


def test_the_check_recognises_a_fixture_agent() -> None:
    # the pattern itself: a fixture path is caught, an ordinary agent spec is not
    assert _FIXTURE.search(' "gym:tests.aiq_fixtures.q:make_agent"')
    assert _FIXTURE.search(' "tests/aiq_fixtures/q.py"')
    assert not _FIXTURE.search(' "gym:mypkg.agents:make_agent"')
    assert not _FIXTURE.search(' "https://example.org/latests/x"')
