"""The hostile-input corpus: one attack per case, each ending in the exact problem.

Every case (see :mod:`tests.hostile`) asserts the file, field and message of the problem, that
the attacked bundle (or benchmark) is rejected, that the store is unchanged and that no file
changed outside the store. Classes: nesting (TOML, JSON, folders), control and invisible
characters (every string, key, cell and name), numbers outside their domain (NaN, ±inf, huge
integers, the g-index's ρ and compute), file names and ids, gzip members, flows (cycles,
size), look-alike names, and benchmark-level attacks.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from pipeline.store import open_store
from tests.hostile import GEN, GIX, SIM, Hostile, append, build_base, edit, matches, run_case

ALPHA = f"{GEN}/alpha"
BETA = f"{SIM}/beta"
REP = f"{GIX}/g-rep"
VER = f"{GIX}/g-ver"


def sub(r: Path) -> Path:
    return r / GEN / "alpha" / "submission.toml"


def resp(r: Path) -> Path:
    return r / GEN / "alpha" / "responses.csv"


def runs(r: Path) -> Path:
    return r / SIM / "beta" / "runs.csv"


def gsub(r: Path, b: str = "g-rep") -> Path:
    return r / GIX / b / "submission.toml"


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def copy_alpha(r: Path, name: str, system: str | None = None) -> None:
    shutil.copytree(r / GEN / "alpha", r / GEN / name)
    if system is not None:
        edit(r / GEN / name / "submission.toml", 'name = "Alpha"', f'name = "{system}"')


def deep_dirs(r: Path, depth: int, name: str = "d") -> None:
    p = r / GEN / "alpha"
    for _ in range(depth):
        p = p / name
    p.mkdir(parents=True)
    (p / "x.txt").write_text("x")


def first_program(r: Path) -> Path:
    return sorted((r / GIX / "g-ver" / "programs").glob("*.json"))[0]


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def bad_crc() -> bytes:
    d = gz(b"hello\n" * 100)
    return d[:-8] + bytes([d[-8] ^ 0xFF]) + d[-7:]


CYCLE = ('[{"id": "a", "type": "inject", "wires": [["b"]]},'
         ' {"id": "b", "type": "debug", "wires": [["a"]]}]')
BIG_FLOW = "[" + ",".join(f'{{"id": "n{i}", "type": "t", "wires": []}}' for i in range(2001)) + "]"

C = Hostile
CASES: list[Hostile] = [
    # ------------------------------------------------------------------ TOML nesting and size
    C("toml arrays 500 deep", lambda r: append(sub(r), "x = " + "[" * 500 + "]" * 500 + "\n"),
      "alpha/submission.toml", "syntax", "nests 500 levels deep", ALPHA),
    C("toml inline tables 200 deep",
      lambda r: append(sub(r), "x = " + "{a = " * 200 + "1" + "}" * 200 + "\n"),
      "alpha/submission.toml", "syntax", "nests 200 levels deep", ALPHA),
    C("toml dotted key 100 deep", lambda r: append(sub(r), ".".join(["k"] * 100) + " = 1\n"),
      "alpha/submission.toml", "-", "nests deeper than 32", ALPHA),
    C("toml header 60 deep", lambda r: append(sub(r), "[" + ".".join(["h"] * 60) + "]\nz = 1\n"),
      "alpha/submission.toml", "-", "nests deeper than 32", ALPHA),
    C("toml mixed nesting 40", lambda r: append(sub(r), "x = " + "[{a = " * 20 + "1" + "}]" * 20
                                                + "\n"),
      "alpha/submission.toml", "syntax", "nests 40 levels deep", ALPHA),
    C("manifest over 1 MiB", lambda r: append(sub(r), "# " + "x" * (1024 * 1024) + "\n"),
      "alpha/submission.toml", "size", "over the 1024 KiB limit", ALPHA),
    C("benchmark.toml 300 deep",
      lambda r: append(r / SIM / "benchmark.toml", "y = " + "[" * 300 + "]" * 300 + "\n"),
      "sim-mini/benchmark.toml", "syntax", "nests 300 levels deep", SIM),
    # ------------------------------------------------------------------ control characters
    C("NUL in system name", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\u0000pha"'),
      "alpha/submission.toml", "system.name", "U+0000", ALPHA),
    C("ESC in description",
      lambda r: edit(sub(r), 'description = "Two', 'description = "\\u001b[2JTwo'),
      "alpha/submission.toml", "description", "U+001B", ALPHA),
    C("BEL in contact", lambda r: edit(sub(r), 'contact = "Test', 'contact = "\\u0007Test'),
      "alpha/submission.toml", "contact", "U+0007", ALPHA),
    C("C1 CSI in organisation",
      lambda r: edit(sub(r), 'organisation = "Test Lab"', 'organisation = "Test\\u009bLab"'),
      "alpha/submission.toml", "system.organisation", "U+009B", ALPHA),
    C("DEL in licence", lambda r: edit(sub(r), 'licence = "CC0-1.0"', 'licence = "CC0\\u007f"'),
      "alpha/submission.toml", "licence", "U+007F", ALPHA),
    C("RLO in system name", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "\\u202eahplA"'),
      "alpha/submission.toml", "system.name", "U+202E", ALPHA),
    C("isolate in description",
      lambda r: edit(sub(r), 'description = "Two', 'description = "\\u2066Two'),
      "alpha/submission.toml", "description", "U+2066", ALPHA),
    C("zero-width space in name",
      lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\u200bpha"'),
      "alpha/submission.toml", "system.name", "U+200B", ALPHA),
    C("BOM inside a string", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\ufeffpha"'),
      "alpha/submission.toml", "system.name", "U+FEFF", ALPHA),
    C("non-character U+FFFF", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\uffffpha"'),
      "alpha/submission.toml", "system.name", "U+FFFF", ALPHA),
    C("soft hyphen in name (format character)",
      lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\u00adpha"'),
      "alpha/submission.toml", "system.name", "U+00AD", ALPHA),
    C("line break in name", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Al\\npha"'),
      "alpha/submission.toml", "system.name", "U+000A", ALPHA),
    C("full-width name (not NFKC)", lambda r: edit(sub(r), 'name = "Alpha"', 'name = "Ａlpha"'),
      "alpha/submission.toml", "system.name", "not in Unicode NFKC form", ALPHA),
    C("ligature in version", lambda r: edit(sub(r), "[system]", '[system]\nversion = "ﬁx"'),
      "alpha/submission.toml", "system.version", "not in Unicode NFKC form", ALPHA),
    C("control character in a key",
      lambda r: append(sub(r), '"bad\\u0001key" = 1\n'),
      "alpha/submission.toml", "system.bad\\u0001key", "key contains the control", ALPHA),
    C("ESC in benchmark title",
      lambda r: edit(r / SIM / "benchmark.toml", 'title = "', 'title = "\\u001b]0;x\\u0007'),
      "sim-mini/benchmark.toml", "title", "U+001B", SIM),
    C("ESC in a track setting string",
      lambda r: edit(r / GEN / "benchmark.toml", 'normalisation = "paper"',
                     'normalisation = "pa\\u001bper"'),
      "gen-mini/benchmark.toml", "generality.normalisation", "U+001B", GEN),
    # ------------------------------------------------------------------ numbers in manifests
    C("nan in a track setting", lambda r: edit(r / GEN / "benchmark.toml", "kmin = 0.0",
                                                "kmin = nan"),
      "gen-mini/benchmark.toml", "generality.kmin", "NaN or infinite", GEN),
    C("inf in a track setting", lambda r: edit(r / GEN / "benchmark.toml", "kmin = 0.0",
                                                "kmin = inf"),
      "gen-mini/benchmark.toml", "generality.kmin", "NaN or infinite", GEN),
    C("-inf in a track setting", lambda r: edit(r / GEN / "benchmark.toml", "kmin = 0.0",
                                                 "kmin = -inf"),
      "gen-mini/benchmark.toml", "generality.kmin", "NaN or infinite", GEN),
    C("integer 2^63 in a manifest", lambda r: append(sub(r), "big = 9223372036854775807\n"),
      "alpha/submission.toml", "system.big", "beyond the largest accepted integer", ALPHA),
    C("integer -2^60 in a manifest", lambda r: append(sub(r), "neg = -1152921504606846976\n"),
      "alpha/submission.toml", "system.neg", "beyond the largest accepted integer", ALPHA),
    # ------------------------------------------------------------------ g-index domains
    C("negative prior", lambda r: append(gsub(r), "priors = -74.7\n"),
      "g-rep/submission.toml", "gindex.priors*", "greater than or equal to 0", REP),
    C("prior -E (unbounded g-index)", lambda r: append(gsub(r), "priors = -6.2\n"),
      "g-rep/submission.toml", "gindex.priors*", "greater than or equal to 0", REP),
    C("prior nan", lambda r: append(gsub(r), "priors = nan\n"),
      "g-rep/submission.toml", "gindex.priors", "NaN or infinite", REP),
    C("prior inf", lambda r: append(gsub(r), "priors = inf\n"),
      "g-rep/submission.toml", "gindex.priors", "NaN or infinite", REP),
    C("negative per-domain prior",
      lambda r: append(gsub(r), "priors = { cron-reminder = -1.0 }\n"),
      "g-rep/submission.toml", "gindex.priors*", "greater than or equal to 0", REP),
    C("compute inf in the manifest",
      lambda r: edit(gsub(r), "compute = 74.75", "compute = inf"),
      "g-rep/submission.toml", "gindex.compute", "NaN or infinite", REP),
    C("compute nan in the manifest",
      lambda r: edit(gsub(r), "compute = 74.75", "compute = nan"),
      "g-rep/submission.toml", "gindex.compute", "NaN or infinite", REP),
    C("negative compute in the manifest",
      lambda r: edit(gsub(r), "compute = 74.75", "compute = -74.75"),
      "g-rep/submission.toml", "gindex.compute", "greater than 0", REP),
    C("compute below 1 PFLOP·s (NaN g-index)",
      lambda r: (write(r / GIX / "g-rep" / "compute.csv", "domain,compute\n,0.5\n"),
                 edit(gsub(r), "compute = 74.75", "compute = 0.5")),
      "g-rep/compute.csv", "compute", "ρ + E > 0", REP),
    C("compute exactly 1 minus a hair",
      lambda r: (write(r / GIX / "g-rep" / "compute.csv", "domain,compute\n,0.99\n"),
                 edit(gsub(r), "compute = 74.75", "compute = 0.99")),
      "g-rep/compute.csv", "compute", "ρ + E > 0", REP),
    C("compute beyond 1e30", lambda r: (write(r / GIX / "g-rep" / "compute.csv",
                                              "domain,compute\n,1e300\n"),
                                        edit(gsub(r), "compute = 74.75", "compute = 1e300")),
      "g-rep/submission.toml", "gindex.compute", "less than or equal to", REP),
    C("compute log infinite tflops",
      lambda r: write(r / GIX / "g-rep" / "compute.csv", "domain,tflops,seconds\n,inf,10\n"),
      "g-rep/compute.csv", "line 2: tflops", "is infinite", REP),
    C("compute log nan", lambda r: write(r / GIX / "g-rep" / "compute.csv",
                                         "domain,compute\n,nan\n"),
      "g-rep/compute.csv", "line 2: compute", "is NaN", REP),
    C("compute log overflow 1e999",
      lambda r: write(r / GIX / "g-rep" / "compute.csv", "domain,compute\n,1e999\n"),
      "g-rep/compute.csv", "line 2: compute", "is infinite", REP),
    C("num_samples 2^64", lambda r: edit(r / GIX / "g-rep" / "curriculum.csv", "cron-reminder,80",
                                         "cron-reminder,18446744073709551616"),
      "g-rep/curriculum.csv", "line 2: num_samples", "beyond the largest accepted integer", REP),
    C("num_samples 40 digits", lambda r: edit(r / GIX / "g-rep" / "curriculum.csv",
                                              "cron-reminder,80", "cron-reminder," + "9" * 40),
      "g-rep/curriculum.csv", "line 2: num_samples", "not a whole number", REP),
    C("num_samples zero", lambda r: edit(r / GIX / "g-rep" / "curriculum.csv", "cron-reminder,80",
                                         "cron-reminder,0"),
      "g-rep/curriculum.csv", "line 2: num_samples", "below the minimum", REP),
    C("divergence above 1", lambda r: edit(r / GIX / "g-rep" / "divergences.csv",
                                           "cron-reminder,0.14104308390022663",
                                           "cron-reminder,1.5"),
      "g-rep/divergences.csv", "line 2: divergence", "above the maximum", REP),
    C("divergence nan", lambda r: edit(r / GIX / "g-rep" / "divergences.csv",
                                       "cron-reminder,0.14104308390022663", "cron-reminder,nan"),
      "g-rep/divergences.csv", "line 2: divergence", "is NaN", REP),
    C("negative divergence", lambda r: edit(r / GIX / "g-rep" / "divergences.csv",
                                            "cron-reminder,0.14104308390022663",
                                            "cron-reminder,-0.5"),
      "g-rep/divergences.csv", "line 2: divergence", "below the minimum", REP),
    # ------------------------------------------------------------------ flow programs
    C("program with a cycle", lambda r: write(first_program(r), CYCLE),
      "g-ver/programs/", "flow", "the wires form a cycle", VER),
    C("program self-loop", lambda r: write(first_program(r),
                                           '[{"id": "a", "type": "t", "wires": [["a"]]}]'),
      "g-ver/programs/", "flow", "the wires form a cycle", VER),
    C("program nested 1000 deep", lambda r: write(first_program(r), "[" * 1000 + "]" * 1000),
      "g-ver/programs/", "line 1", "nests 1000 levels deep", VER),
    C("program over max_nodes", lambda r: write(first_program(r), BIG_FLOW),
      "g-ver/programs/", "flow", "more than 2000", VER),
    C("program with NaN", lambda r: write(first_program(r),
                                          '[{"id": "a", "type": "t", "x": NaN}]'),
      "g-ver/programs/", "line 1", "NaN is not allowed", VER),
    C("program with 1e999", lambda r: write(first_program(r),
                                            '[{"id": "a", "type": "t", "x": 1e999}]'),
      "g-ver/programs/", "line 1", "not a finite number", VER),
    C("program with an ESC string", lambda r: write(first_program(r),
                                                    '[{"id": "a", "type": "\\u001b[31m"}]'),
      "g-ver/programs/", "line 1", "U+001B", VER),
    C("program is an object", lambda r: write(first_program(r), '{"nodes": 1}'),
      "g-ver/programs/", "flow", "", VER),
    C("program node without id", lambda r: write(first_program(r), '[{"type": "t"}]'),
      "g-ver/programs/", "flow[0].id", "is missing", VER),
    C("program duplicate ids", lambda r: write(first_program(r),
                                               '[{"id": "a", "type": "t"}, {"id": "a", '
                                               '"type": "t"}]'),
      "g-ver/programs/", "flow[1].id", "repeats the id", VER),
    # ------------------------------------------------------------------ JSON files
    C("json arrays 1000 deep", lambda r: write(r / GEN / "alpha" / "meta.json",
                                               "[" * 1000 + "]" * 1000),
      "alpha/meta.json", "line 1", "nests 1000 levels deep", ALPHA),
    C("json objects 100 deep", lambda r: write(r / GEN / "alpha" / "meta.json",
                                               '{"a":' * 100 + "1" + "}" * 100),
      "alpha/meta.json", "line 1", "nests 100 levels deep", ALPHA),
    C("json Infinity", lambda r: write(r / GEN / "alpha" / "meta.json", '{"x": Infinity}'),
      "alpha/meta.json", "line 1", "Infinity is not allowed", ALPHA),
    C("json -Infinity", lambda r: write(r / GEN / "alpha" / "meta.json", '{"x": -Infinity}'),
      "alpha/meta.json", "line 1", "-Infinity is not allowed", ALPHA),
    C("json overflowing float", lambda r: write(r / GEN / "alpha" / "meta.json", "[1e400]"),
      "alpha/meta.json", "line 1", "not a finite number", ALPHA),
    C("json 5000-digit integer", lambda r: write(r / GEN / "alpha" / "meta.json",
                                                 "[" + "7" * 5000 + "]"),
      "alpha/meta.json", "line 1", "Exceeds the limit", ALPHA),
    C("json NUL string", lambda r: write(r / GEN / "alpha" / "meta.json", '["a\\u0000b"]'),
      "alpha/meta.json", "line 1", "U+0000", ALPHA),
    C("json lone surrogate", lambda r: write(r / GEN / "alpha" / "meta.json", '["\\ud800"]'),
      "alpha/meta.json", "line 1", "U+D800", ALPHA),
    C("json RLO string", lambda r: write(r / GEN / "alpha" / "meta.json", '{"a": "\\u202e"}'),
      "alpha/meta.json", "line 1", "U+202E", ALPHA),
    C("json control character in a key",
      lambda r: write(r / GEN / "alpha" / "meta.json", '{"k\\u0007": 1}'),
      "alpha/meta.json", "line 1", "the key", ALPHA),
    C("jsonl deep line", lambda r: write(r / GEN / "alpha" / "log.jsonl",
                                         '{"ok": 1}\n' + "[" * 100 + "]" * 100 + "\n"),
      "alpha/log.jsonl", "line 2", "nests 100 levels deep", ALPHA),
    C("json truncated", lambda r: write(r / GEN / "alpha" / "meta.json", '{"a": [1, 2'),
      "alpha/meta.json", "line 1", "JSON does not parse", ALPHA),
    C("deep json in the benchmark's reference",
      lambda r: write(r / GEN / "reference" / "extra.json", "[" * 800 + "]" * 800),
      "gen-mini/reference/extra.json", "line 1", "nests 800 levels deep", GEN),
    C("deep data TOML in a bundle", lambda r: write(r / GEN / "alpha" / "log.toml",
                                                    "x = " + "[" * 400 + "]" * 400 + "\n"),
      "alpha/log.toml", "syntax", "nests 400 levels deep", ALPHA),
    C("NUL in a data TOML", lambda r: write(r / GEN / "alpha" / "log.toml", 'x = "a\\u0000"\n'),
      "alpha/log.toml", "x", "U+0000", ALPHA),
    C("nan in a data TOML", lambda r: write(r / GEN / "alpha" / "log.toml", "x = nan\n"),
      "alpha/log.toml", "x", "NaN or infinite", ALPHA),
    # ------------------------------------------------------------------ CSV cells
    # ------------------------------------------------------------------ rules a bundle may not set
    C("bundle declares its own raw scale",
      lambda r: append(sub(r), "\n[generality]\nraw_scale = [-1e9, 1]\n"),
      "alpha/submission.toml", "generality.raw_scale", "a rule of the benchmark", ALPHA),
    C("bundle declares its own missing policy",
      lambda r: append(sub(r), "\n[generality]\nmissing = \"exclude\"\n"),
      "alpha/submission.toml", "generality.missing", "a rule of the benchmark", ALPHA),
    C("bundle picks its own transform",
      lambda r: append(sub(r), "\n[generality]\ntransform = \"rnk\"\n"),
      "alpha/submission.toml", "generality.transform", "a rule of the benchmark", ALPHA),
    C("similarity bundle declares its own scale",
      lambda r: append(r / SIM / "beta" / "submission.toml", "\n[similarity]\nscale = [0, 9]\n"),
      "beta/submission.toml", "similarity.scale", "a rule of the benchmark", BETA),
    C("similarity bundle picks the convention",
      lambda r: append(r / SIM / "beta" / "submission.toml",
                       "\n[similarity]\nconvention = \"mixture\"\n"),
      "beta/submission.toml", "similarity.convention", "a rule of the benchmark", BETA),
    # ------------------------------------------------------------------ observations out of domain
    C("response above 1", lambda r: edit(resp(r), "A1,i2,1", "A1,i2,7"),
      "alpha/responses.csv", "line*", "above the maximum 1", ALPHA),
    C("response far below 0", lambda r: edit(resp(r), "A1,i2,1", "A1,i2,-1e9"),
      "alpha/responses.csv", "line*", "below the minimum 0", ALPHA),
    C("similarity V above 1", lambda r: edit(runs(r), "0.9,0.5,0.8", "0.9,0.5,5"),
      "beta/runs.csv", "row*", "v_ab is 5.0, outside the benchmark's scale", BETA),
    C("similarity V far below 0", lambda r: edit(runs(r), "0.9,0.5,0.8", "-1e6,0.5,0.8"),
      "beta/runs.csv", "row*", "v_a is -1000000.0, outside the benchmark's scale", BETA),
    C("NUL in a cell", lambda r: edit(resp(r), "A1,i2,1", "A\x001,i2,1"),
      "alpha/responses.csv", "line 3: agent", "U+0000", ALPHA),
    C("ESC in a cell", lambda r: edit(resp(r), "A1,i2,1", "\x1b[31mA1,i2,1"),
      "alpha/responses.csv", "line 3: agent", "U+001B", ALPHA),
    C("BEL in an item cell", lambda r: edit(resp(r), "A1,i2,1", "A1,i2\x07,1"),
      "alpha/responses.csv", "line 3: item", "U+0007", ALPHA),
    C("RLO in a cell", lambda r: edit(resp(r), "A1,i2,1", "A\u202e1,i2,1"),
      "alpha/responses.csv", "line 3: agent", "U+202E", ALPHA),
    C("zero-width joiner in a cell", lambda r: edit(resp(r), "A1,i2,1", "A\u200d1,i2,1"),
      "alpha/responses.csv", "line 3: agent", "U+200D", ALPHA),
    C("C1 control in a cell", lambda r: edit(resp(r), "A1,i2,1", "A\u00851,i2,1"),
      "alpha/responses.csv", "line 3: agent", "U+0085", ALPHA),
    C("control in a header", lambda r: edit(resp(r), "agent,item,value", "agent,item,value,\x1bx"),
      "alpha/responses.csv", "header", "U+001B", ALPHA),
    C("10,001 columns", lambda r: edit(resp(r), "agent,item,value",
                                       "agent,item,value," + ",".join(f"c{i}" for i in range(
                                           9998))),
      "alpha/responses.csv", "header", "more than 10,000", ALPHA),
    C("500 unknown columns are capped",
      lambda r: edit(resp(r), "agent,item,value",
                     "agent,item,value," + ",".join(f"u{i}" for i in range(500))),
      "alpha/responses.csv", "-", "more problems in this file not shown", ALPHA),
    C("1000 bad rows are capped", lambda r: append(resp(r), "".join(
        f"A{i},i1,zz\n" for i in range(1000))),
      "alpha/responses.csv", "-", "more problems not shown", ALPHA),
    C("cell 1e999", lambda r: edit(runs(r), "t1,t2,0.5,sampling,q,0.9,0.5,0.8",
                                   "t1,t2,0.5,sampling,q,1e999,0.5,0.8"),
      "beta/runs.csv", "line 2: v_a", "is infinite", BETA),
    C("cell -inf", lambda r: edit(runs(r), "t1,t2,0.5,sampling,q,0.9,0.5,0.8",
                                  "t1,t2,0.5,sampling,q,0.9,-inf,0.8"),
      "beta/runs.csv", "line 2: v_b", "is infinite", BETA),
    C("cell NaN p", lambda r: edit(runs(r), "t1,t2,0.5", "t1,t2,NaN"),
      "beta/runs.csv", "line 2: p", "is NaN", BETA),
    C("cell 200-character number", lambda r: edit(runs(r), "t1,t2,0.5", "t1,t2,0." + "5" * 200),
      "beta/runs.csv", "line 2: p", "not a number", BETA),
    C("field over the csv limit", lambda r: append(runs(r), "t1,t2,0.5,sampling,q,0.9,0.5,"
                                                   + "8" * 200_000 + "\n"),
      "beta/runs.csv", "-", "is not valid CSV", BETA),
    C("empty csv", lambda r: write(runs(r), ""),
      "beta/runs.csv", "header", "file is empty", BETA),
    # ------------------------------------------------------------------ gzip
    C("truncated gzip", lambda r: write(r / GEN / "alpha" / "x.csv.gz",
                                        gz(b"a,b\n" * 5000)[:-12]),
      "alpha/x.csv.gz", "gzip", "is truncated", ALPHA),
    C("two gzip members", lambda r: write(r / GEN / "alpha" / "x.csv.gz",
                                          gz(b"a\n") + gz(b"b\n")),
      "alpha/x.csv.gz", "gzip", "more than one gzip member", ALPHA),
    C("trailing bytes after gzip", lambda r: write(r / GEN / "alpha" / "x.csv.gz",
                                                   gz(b"a\n") + b"junk"),
      "alpha/x.csv.gz", "gzip", "more than one gzip member", ALPHA),
    C("not gzip at all", lambda r: write(r / GEN / "alpha" / "x.csv.gz", b"plain text\n"),
      "alpha/x.csv.gz", "gzip", "not valid gzip data", ALPHA),
    C("gzip CRC mismatch", lambda r: write(r / GEN / "alpha" / "x.csv.gz", bad_crc()),
      "alpha/x.csv.gz", "gzip", "not valid gzip data", ALPHA),
    C("gzip bomb", lambda r: write(r / GEN / "alpha" / "x.csv.gz",
                                   gzip.compress(b"\0" * (257 * 2**20), compresslevel=1)),
      "alpha/x.csv.gz", "gzip", "inflates to more than 256 MiB", ALPHA),
    # ------------------------------------------------------------------ folders and names
    C("folders 40 deep", lambda r: deep_dirs(r, 40),
      "alpha/d/d/d/d/d/d/d/d/d/d/d/d/d", "folder", "nested more than 12 folders deep", ALPHA),
    C("path longer than 240 bytes", lambda r: deep_dirs(r, 6, "p" * 45),
      "alpha/", "file name", "longer than 240 bytes", ALPHA),
    C("case-colliding file names", lambda r: shutil.copy(resp(r), resp(r).with_name(
        "Responses.csv")),
      "alpha/responses.csv", "file name", "only in letter case", ALPHA),
    C("space in a file name", lambda r: write(r / GEN / "alpha" / "a b.csv", "x\n"),
      "alpha/a b.csv", "file name", "other than letters", ALPHA),
    C("non-ASCII file name", lambda r: write(r / GEN / "alpha" / "résumé.txt", "x\n"),
      "alpha/résumé.txt", "file name", "other than letters", ALPHA),
    C("file name ending in a dot", lambda r: write(r / GEN / "alpha" / "notes.", "x\n"),
      "alpha/notes.", "file name", "ends with '.'", ALPHA),
    C("device file name", lambda r: write(r / GEN / "alpha" / "con.csv", "x\n"),
      "alpha/con.csv", "file name", "reserved device name", ALPHA),
    C("hidden file", lambda r: write(r / GEN / "alpha" / ".env", "SECRET=1\n"),
      "alpha/.env", "file name", "starts with '.'", ALPHA),
    C("escape sequence in a file name", lambda r: write(r / GEN / "alpha" / "a\x1b[2J.csv", "x\n"),
      "alpha/a", "file name", "control characters", ALPHA),
    C("fifo in a bundle", lambda r: os.mkfifo(r / GEN / "alpha" / "pipe.csv"),
      "alpha/pipe.csv", "file type", "not a regular file", ALPHA),
    C("link to a folder", lambda r: os.symlink("/etc", r / GEN / "alpha" / "etc"),
      "alpha/etc", "file type", "symbolic link", ALPHA),
    C("bundle id con", lambda r: copy_alpha(r, "con", "Con Bot"),
      f"{GEN}/con", "bundle id", "reserved device name", f"{GEN}/con"),
    C("bundle id nul", lambda r: copy_alpha(r, "nul", "Nul Bot"),
      f"{GEN}/nul", "bundle id", "reserved device name", f"{GEN}/nul"),
    C("bundle id lpt1.x", lambda r: copy_alpha(r, "lpt1.x", "Lpt Bot"),
      f"{GEN}/lpt1.x", "bundle id", "reserved device name", f"{GEN}/lpt1.x"),
    C("bundle id ending in a dot", lambda r: copy_alpha(r, "x.", "X Bot"),
      f"{GEN}/x.", "bundle id", "not a valid id", f"{GEN}/x."),
    C("bundle id in capitals", lambda r: copy_alpha(r, "Beta2", "Beta Two"),
      f"{GEN}/Beta2", "bundle id", "not a valid id", f"{GEN}/Beta2"),
    C("bundle id 65 characters", lambda r: copy_alpha(r, "a" * 65, "Long Bot"),
      f"{GEN}/{'a' * 65}", "bundle id", "not a valid id", f"{GEN}/{'a' * 65}"),
    # ------------------------------------------------------------------ look-alike names
    C("Cyrillic look-alike name", lambda r: copy_alpha(r, "alpha2", "Аlpha"),
      f"{GEN}/alpha2/submission.toml", "system.name", "looks like the system name",
      f"{GEN}/alpha2"),
    C("Greek look-alike name", lambda r: copy_alpha(r, "alpha2", "Αlpha"),
      f"{GEN}/alpha2/submission.toml", "system.name", "looks like the system name",
      f"{GEN}/alpha2"),
    C("digit-for-letter look-alike", lambda r: copy_alpha(r, "alpha2", "A1pha"),
      f"{GEN}/alpha2/submission.toml", "system.name", "looks like the system name",
      f"{GEN}/alpha2"),
    C("case look-alike", lambda r: copy_alpha(r, "alpha2", "ALPHA"),
      f"{GEN}/alpha2/submission.toml", "system.name", "looks like the system name",
      f"{GEN}/alpha2"),
    C("separator look-alike across benchmarks",
      lambda r: edit(r / SIM / "beta" / "submission.toml", 'name = "Baseline Q"',
                     'name = "Al-pha"'),
      f"{SIM}/beta/submission.toml", "system.name", "looks like the system name", BETA),
    C("zero-width look-alike", lambda r: copy_alpha(r, "alpha2", "Alpha\\u200b"),
      f"{GEN}/alpha2/submission.toml", "system.name", "U+200B", f"{GEN}/alpha2"),
    C("bidi-reversed look-alike", lambda r: copy_alpha(r, "alpha2", "\\u202eahplA"),
      f"{GEN}/alpha2/submission.toml", "system.name", "U+202E", f"{GEN}/alpha2"),
    C("full-width look-alike", lambda r: copy_alpha(r, "alpha2", "Ａｌｐｈａ"),
      f"{GEN}/alpha2/submission.toml", "system.name", "not in Unicode NFKC form",
      f"{GEN}/alpha2"),
    # ------------------------------------------------------------------ settings paths
    C("absolute path in settings",
      lambda r: edit(r / GIX / "benchmark.toml", 'domains_dir = "reference/domains"',
                     'domains_dir = "/etc"'),
      f"{GIX}/benchmark.toml", "gindex.domains_dir", "leaves the folder", GIX),
    C("parent path in settings",
      lambda r: edit(r / GIX / "benchmark.toml", 'domains_dir = "reference/domains"',
                     'domains_dir = "../../.."'),
      f"{GIX}/benchmark.toml", "gindex.domains_dir", "leaves the folder", GIX),
    C("negative benchmark rho",
      lambda r: edit(r / GIX / "benchmark.toml", "rho = 1e-4", "rho = -1e-4"),
      f"{GIX}/benchmark.toml", "gindex.rho", "greater than or equal to 0", GIX),
    C("benchmark rho nan", lambda r: edit(r / GIX / "benchmark.toml", "rho = 1e-4", "rho = nan"),
      f"{GIX}/benchmark.toml", "gindex.rho", "NaN or infinite", GIX),
    C("benchmark folder named con",
      lambda r: (shutil.move(r / SIM, r / "con"),
                 edit(r / "con" / "benchmark.toml", 'id = "sim-mini"', 'id = "con"')),
      "con/benchmark.toml", "id", "reserved device name", "con"),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The base tree and a store with every base bundle ingested."""
    root = tmp_path_factory.mktemp("hostile-base")
    subs = build_base(root)
    db = root / "store.duckdb"
    from pipeline.ingest import ingest

    with open_store(db) as s:
        rep = ingest(s, [subs])
    assert not rep.problems and rep.count("new") == 4, rep.problems
    return subs, db


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_ends_in_the_exact_problem(case: Hostile, base, tmp_path) -> None:
    subs, db = base
    report = run_case(case, subs, db, tmp_path)
    hits = [p for p in report.problems
            if p.severity == "error" and matches(case, p.file, p.field, p.message)]
    assert hits, f"{case.name}: expected {case.file!r} / {case.field!r} / {case.message!r}; " \
        "got:\n" + "\n".join(str(p) for p in report.problems[:30])
    for p in hits:
        assert p.fix or "not shown" in p.message, f"{p} gives no fix"


def test_corpus_has_at_least_100_cases() -> None:
    assert len(CASES) >= 100
    assert len({c.name for c in CASES}) == len(CASES)


def test_base_tree_validates(base) -> None:
    from pipeline.validate import collect

    assert collect([base[0]]).problems == []
