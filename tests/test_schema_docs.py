"""The published JSON Schemas in docs/schemas are what `gmeter schema` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.manifest import json_schema

DOCS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


@pytest.mark.parametrize("which", ["benchmark", "submission"])
def test_published_schema_is_current(which):
    published = json.loads((DOCS / f"{which}.schema.json").read_text(encoding="utf-8"))
    assert published == json_schema(which), (
        f"docs/schemas/{which}.schema.json is stale: run "
        f"`.venv/bin/gmeter schema {which} > docs/schemas/{which}.schema.json`"
    )


def test_manifests_of_the_shipped_benchmarks_satisfy_the_schema():
    import tomllib

    import jsonschema

    root = Path(__file__).resolve().parents[1] / "submissions"
    bench_schema = json_schema("benchmark")
    sub_schema = json_schema("submission")
    for bench in sorted(root.glob("*/benchmark.toml")):
        data = tomllib.loads(bench.read_text(encoding="utf-8"))
        jsonschema.validate(json.loads(json.dumps(data, default=str)), bench_schema)
        for sub in sorted(bench.parent.glob("*/submission.toml")):
            data = tomllib.loads(sub.read_text(encoding="utf-8"))
            jsonschema.validate(json.loads(json.dumps(data, default=str)), sub_schema)
