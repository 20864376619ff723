"""Running a program-synthesis system on a g-index benchmark (``gmeter gindex run``).

The system is a program (``cmd:PROGRAM ARGS``) started once. For every test task of the
benchmark — each reference program ``<domains_dir>/<domain>/<task>.json``, in domain then task
order — gmeter writes one JSON line to its standard input and reads one line back::

    → {"task": "cron-reminder-67bc10", "domain": "cron-reminder", "prompt": "Set a reminder ..."}
    ← {"program": [{"id": "n1", "type": "inject", "wires": [["n2"]]}, ...]}

``prompt`` is the reference program's ``text`` (the task in natural language); ``program`` is
the generated flow: a node list, ``{"flow": [...]}``, or ``[]`` for no program. Each reply
must come within the time limit and fit in the size limit (like the AIQ protocols); a reply
that is not JSON, has no ``program``, or fails the track's structure checks (nodes with ids
and types, wires to known nodes, no cycles, at most ``max_nodes``) stops the run with an error
naming the task. The bundle written — ``programs/<task>.json``, ``curriculum.csv`` (the
``--curriculum`` file), ``compute.csv`` (``--compute``) and ``submission.toml`` — is validated
with the track's own rules before the command reports success, and is *verified* on the board
(the divergences are computed from the programs).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import AgentProtocolError, GmeterError, Problem, UsageError
from pipeline.lab.aiq.external import CommandAgent
from pipeline.toml_writer import toml_value
from pipeline.tracks.gindex.settings import COMPUTE, CURRICULUM, PROGRAMS

#: Seconds a system may take for one task (``--timeout``).
DEFAULT_TIMEOUT = 60.0
#: Largest reply line (bytes): far beyond any flow of ``max_nodes`` nodes.
MAX_REPLY = 8 << 20


class SystemProcess(CommandAgent):
    """The system's process: one request line per task, one reply line back."""

    def __init__(self, command: str, timeout: float) -> None:
        super().__init__(command, timeout)
        self.max_line = MAX_REPLY
        self.task = ""

    def _fail(self, what: str) -> AgentProtocolError:
        exc = AgentProtocolError(
            f"system cmd:{self.command}, task {self.task}: {what}{self._stderr_tail()}",
            hint='answer every task line with one line {"program": [...]} (see docs/gindex.md)',
        )
        self.close()
        return exc

    def ask(self, task: str, domain: str, prompt: str) -> Any:
        """Send one task; return the reply's ``program`` (not yet checked)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.task = task
        self._send({"task": task, "domain": domain, "prompt": prompt})
        text = self._recv().decode("utf-8", "replace").strip()
        try:
            msg = json.loads(text)
        except ValueError:
            raise self._fail(f"reply {text[:80]!r} is not JSON") from None
        if not isinstance(msg, dict) or "program" not in msg:
            raise self._fail(f'reply {text[:80]!r} is not an object {{"program": [...]}}')
        return msg["program"]


@dataclass(frozen=True)
class Task:
    """One test task: its id, domain and prompt."""

    task: str
    domain: str
    prompt: str


@dataclass(frozen=True)
class HarnessRun:
    """What ``gmeter gindex run`` did."""

    out: Path
    tasks: int
    empty: int
    seconds: float
    warnings: list[Problem]


def benchmark_tasks(benchmark: Path) -> tuple[list[Task], Any]:
    """The benchmark's test tasks (sorted by domain and task) and its loaded input."""
    from pipeline.tracks.gindex.validate import reference_tasks
    from pipeline.validate import load_benchmark

    loaded = load_benchmark(benchmark.resolve(), only=[])
    if loaded.track != "gindex" or loaded.input is None:
        raise UsageError(
            f"{benchmark} is not a readable g-index benchmark",
            hint='give a folder whose benchmark.toml says track = "gindex"',
        )
    bench = loaded.input
    tasks = []
    for domain, items in sorted(reference_tasks(bench).items()):
        for task, path in sorted(items):
            doc = bench.files.json(path)
            text = doc.get("text") if isinstance(doc, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise GmeterError(
                    f"{bench.files.where(path)}: text is missing",
                    hint="every reference program needs its task in natural language (text)",
                )
            tasks.append(Task(task, domain, text))
    return tasks, bench


def _submission(system: str, name: str, contact: str, compute: float, tasks: int) -> str:
    return "\n".join([
        f"submitted = {dt.date.today().isoformat()}",
        f"contact = {toml_value(contact)}",
        'licence = "CC-BY-4.0"',
        "description = " + toml_value(
            f"{name}: programs generated for the {tasks} test tasks by `gmeter gindex run "
            f"--system {system}`; training compute {compute:g} as declared."),
        "",
        "[system]",
        f"name = {toml_value(name)}",
        "",
        "[gindex]",
        f"model = {toml_value(name)}",
        f"compute = {toml_value(compute)}",
        "",
    ])  # fmt: skip


def run_system(
    system: str,
    benchmark: Path,
    curriculum: Path,
    compute: float,
    out: Path,
    *,
    name: str | None = None,
    contact: str = "not given",
    timeout: float = DEFAULT_TIMEOUT,
    progress: Any = None,
    curriculum_samples: Path | None = None,
) -> HarnessRun:
    """Run ``system`` on every test task of ``benchmark`` and write a bundle to ``out``.

    With ``curriculum_samples`` (a folder of ``<domain>.jsonl``, one training sample per line)
    the curriculum's samples are copied into the bundle's ``curriculum/`` and the entry is
    verified; without, the curriculum size is self-declared and the entry is reported.

    Raises
    ------
    UsageError
        ``system`` is not ``cmd:PROGRAM``, the benchmark is not a g-index benchmark, or the
        curriculum file cannot be read.
    AgentProtocolError
        The system did not answer a task properly (no reply in time, not JSON, too long).
    GmeterError
        A program fails the track's checks, or the written bundle does not validate.
    """
    from pipeline.tracks.gindex.validate import flow_problems
    from pipeline.validate import load_benchmark, load_bundle

    if not system.startswith("cmd:") or not system[4:].strip():
        raise UsageError(f"--system {system!r}", hint="use cmd:PROGRAM ARGS (see docs/gindex.md)")
    command = system[4:].strip()
    from pipeline.bundles import read_file_bounded
    from pipeline.manifest import bad_id

    why = bad_id(out.resolve().name)
    if why:  # the folder name is the bundle id: say so before the (long) run, not after
        raise UsageError(f"--out {out}: {why}",
                         hint="name the bundle folder as its id, e.g. my-system-1")

    curriculum_text = read_file_bounded(curriculum, f"--curriculum {curriculum}",
                                        error=UsageError)
    tasks, bench = benchmark_tasks(benchmark)
    max_nodes = int(bench.settings.get("max_nodes", 2000))
    proc = SystemProcess(command, timeout)
    programs: dict[str, bytes] = {}
    empty = 0
    start = time.monotonic()
    try:
        for k, t in enumerate(tasks):
            program = proc.ask(t.task, t.domain, t.prompt)
            where = f"system cmd:{command}, task {t.task}"
            bad = flow_problems(program, where, max_nodes)
            if bad:
                raise GmeterError(
                    f"{where}: program {bad[0].field} {bad[0].message}",
                    hint="return a Node-RED style flow: nodes with unique ids and types, "
                    "wires to known nodes, no cycles ([] for no program)",
                )
            nodes = program.get("flow") if isinstance(program, Mapping) else program
            empty += not nodes
            programs[t.task] = (json.dumps({"flow": nodes}, indent=1, ensure_ascii=False)
                                + "\n").encode()  # fmt: skip
            if progress is not None:
                progress("gindex run", k + 1, len(tasks))
    finally:
        proc.close()
    seconds = time.monotonic() - start
    out.mkdir(parents=True, exist_ok=True)
    for task, data in programs.items():
        path = out / PROGRAMS / f"{task}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (out / CURRICULUM).write_bytes(curriculum_text)
    if curriculum_samples is not None:
        _copy_samples(curriculum_samples, out)
    (out / COMPUTE).write_text(f"compute\n{compute!r}\n", encoding="utf-8")
    label = name or command.split()[0].rsplit("/", 1)[-1]
    (out / "submission.toml").write_text(
        _submission(system, label, contact, compute, len(tasks)), encoding="utf-8"
    )
    bench_loaded = load_benchmark(benchmark.resolve(), only=[])
    checked = load_bundle(bench_loaded, out.resolve())
    errors = [p for p in checked.problems if p.severity == "error"]
    if errors:
        raise GmeterError(
            f"the bundle written to {out} does not validate: "
            + "; ".join(str(p) for p in errors[:5]),
            hint="fix the curriculum file or --compute, then run again",
        )
    return HarnessRun(out, len(tasks), empty, seconds,
                      [p for p in checked.problems if p.severity != "error"])  # fmt: skip


def _copy_samples(folder: Path, out: Path) -> None:
    """Copy ``folder/<domain>.jsonl`` into the bundle's ``curriculum/`` folder."""
    from pipeline.tracks.gindex.settings import CURRICULUM_SAMPLES

    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not files:
        raise UsageError(f"--curriculum-samples {folder}: no <domain>.jsonl files",
                         hint="one file per curriculum domain, one JSON sample per line")
    dest = out / CURRICULUM_SAMPLES
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        (dest / f.name).write_bytes(f.read_bytes())
