"""`gmeter new`: a scaffold fails validation until filled in, then validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import UsageError
from pipeline.scaffold import scaffold
from pipeline.tracks import track_names
from pipeline.validate import collect


@pytest.mark.parametrize("track", track_names())
def test_scaffold_writes_manifests_with_todos(tmp_path, track):
    written = scaffold(tmp_path, track, f"bench-{track}/my-bundle")
    names = {p.name for p in written}
    assert {"benchmark.toml", "submission.toml"} <= names
    report = collect([tmp_path / f"bench-{track}"])
    assert report.errors  # TODO markers keep an unfilled scaffold from validating
    with pytest.raises(UsageError, match="already exists"):
        scaffold(tmp_path, track, f"bench-{track}/my-bundle")


def test_scaffold_rejects_bad_names(tmp_path):
    with pytest.raises(UsageError):
        scaffold(tmp_path, "generality", "Bad Name/x")
    with pytest.raises(UsageError):
        scaffold(tmp_path, "nope", "b/x")
    with pytest.raises(UsageError, match="which benchmark"):
        scaffold(tmp_path, "generality", "lonely")



def _fill_toml(path):
    """Replace the manifest's TODO placeholders the way a submitter would."""
    import re

    text = path.read_text().replace('"TODO: your name <you@example.org>"',
                                    '"Ada <ada@example.org>"')
    text = re.sub(r'"TODO:[^"]*"', '"Filled in"', text)
    path.write_text(re.sub(r"TODO:[^\n]*", "Filled in.", text))


def test_filled_generality_scaffold_validates(subs):
    [sub, resp] = sorted(p for p in scaffold(subs, "generality", "gen-mini/new-one")
                         if p.suffix in (".toml", ".csv"))[::-1]
    _fill_toml(sub)
    items = (subs / "gen-mini" / "reference" / "items.csv").read_text().split()[1:]
    # a generality bundle answers every item of the benchmark (issue 13: no cherry-picking)
    rows = [f"Zed,{line.split(',')[0]},{i % 2}" for i, line in enumerate(items)]
    resp.write_text("agent,item,value\n" + "\n".join(rows) + "\n")
    assert collect([subs / "gen-mini"]).errors == []


def test_filled_similarity_scaffold_validates(subs):
    written = scaffold(subs, "similarity", "sim-mini/new-one")
    for path in written:
        if path.name == "submission.toml":
            _fill_toml(path)
        if path.name == "runs.csv":
            path.write_text("test_a,test_b,p,merge,agent,v_a,v_b,v_ab,seed\n"
                            "t1,t2,0.5,sampling,q,0.8,0.4,0.6,1\n")
    assert collect([subs / "sim-mini"]).errors == []


def test_filled_gindex_scaffold_validates(tmp_path):
    import shutil

    src = Path(__file__).resolve().parents[1] / "submissions" / "maya-fbp-16"
    dest = tmp_path / "maya-fbp-16"
    shutil.copytree(src, dest, ignore=lambda d, names: [
        n for n in names if (Path(d) / n / "submission.toml").exists()])
    written = scaffold(tmp_path, "gindex", "maya-fbp-16/new-one")
    bundle = dest / "new-one"
    for path in written:
        if path.name == "submission.toml":
            _fill_toml(path)
    (bundle / "curriculum.csv").write_text("domain,num_samples\nhttp,100\n")
    (bundle / "compute.csv").write_text("tflops,seconds\n12.5,3600\n")
    (bundle / "programs" / "README.txt").unlink()
    for ref in sorted((dest / "reference" / "domains").glob("*/*.json")):
        (bundle / "programs" / ref.name).write_text("[]")  # no program generated
    ref = sorted((dest / "reference" / "domains" / "twitter").glob("*.json"))[0]
    shutil.copy(ref, bundle / "programs" / ref.name)
    assert collect([dest]).errors == []
