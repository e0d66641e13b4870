"""`gpu-finops sweep SWEEP.toml --out DIR`: run every scenario, then build one database.

Output folder::

    DIR/inputs/               the preset's generated inputs (when the sweep names a preset)
    DIR/profiles/<s>.toml     derived profiles (a scenario that changes scoring or preemption)
    DIR/traces/<s>.csv        the trace a `rightsize` or trace-policy scenario replays (rightsized,
                              preemption policies set: gpu_finops.trace_policy)
    DIR/runs/<s>/             one run directory per scenario (events.parquet, run.json, ...)
    DIR/state/<s>.json        each scenario's outcome and fingerprint; <s>.running while it runs
    DIR/logs/<s>.log          the traceback of a failed scenario
    DIR/sweep.json            every scenario, its settings, status and error
    DIR/gpu-finops.duckdb     every successful run built, plus table sweep_scenarios

A rerun skips a scenario whose state says it finished with the same fingerprint (its settings,
the hashes of its inputs and profile, and the gpu-finops version) and whose run directory is
there; a failed or changed scenario runs again. The database is rebuilt only when its runs
changed, by `build` (fresh, under the database's writer lock), and only over the very file the
sweep built last: a user's database of that name, or one changed since, is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from gpu_finops.sweep.executors import LocalExecutor, Outcome, RayExecutor
from gpu_finops.sweep.profiles import scenario_profile
from gpu_finops.sweep.spec import Inputs, Scenario, Sweep, read_sweep
from gpu_finops.sweep.task import ScenarioTask
from scheduler.errors import InputError
from scheduler.eventlog.files import replace_folder
from scheduler.eventlog.text import printable
from scheduler.eventlog.writes import sha256_file, write_file

DB_NAME = "gpu-finops.duckdb"
SCENARIO_TABLE = "sweep_scenarios"


@dataclass
class ScenarioState:
    scenario: Scenario
    task: ScenarioTask
    fingerprint: str
    status: str = "pending"  # ok | failed | timed_out | skipped (finished before, same fingerprint)
    error: str = ""
    result: dict[str, Any] = field(default_factory=dict)


@dataclass
class SweepReport:
    sweep: Sweep
    out: Path
    states: list[ScenarioState]
    db: Path | None
    built: bool

    @property
    def failed(self) -> list[ScenarioState]:
        return [s for s in self.states if s.status in ("failed", "timed_out")]


def run_sweep(spec: Path, out: Path, *, executor: str = "local", address: str | None = None,
              workers: int | None = None, quiet: bool = False, console: Console | None = None,
              scenario_timeout_s: float | None | bool = False) -> SweepReport:
    """``scenario_timeout_s``: the time limit of each scenario (None: none), over the sweep
    file's ``[sweep] scenario_timeout_s``; False (the default) keeps the file's."""
    console = console or Console(file=sys.stderr, soft_wrap=True, emoji=False)
    sweep = read_sweep(spec)
    if scenario_timeout_s is not False:
        sweep = replace(sweep, scenario_timeout_s=scenario_timeout_s or None)
    ray = RayExecutor(address or "auto", lambda task, files: deliver_run(task.run_dir, files)) \
        if executor == "ray" else None
    if ray is not None:
        ray.check()
    out = out.resolve()
    _check_database(out)  # before any work: a database the sweep may not replace stops it at once
    for folder in ("runs", "state", "logs"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    inputs = _prepare_inputs(sweep, out, console, quiet)
    states = [_plan(sweep, scenario, inputs, out) for scenario in sweep.scenarios]
    pending = []
    for state in states:
        previous = read_json_object(out / "state" / f"{state.scenario.name}.json")
        if (previous.get("status") == "ok" and previous.get("fingerprint") == state.fingerprint
                and (state.task.run_dir / "run.json").is_file()):
            state.status, state.result = "skipped", previous.get("result", {})
        else:
            pending.append(state)
    console.print(f"sweep {escape(sweep.name)}: {len(states)} scenarios, {len(states) - len(pending)} finished before, "
                  f"{len(pending)} to run ({_where(executor, address, workers or sweep.workers)})", highlight=False)
    by_name = {s.scenario.name: s for s in states}
    with _progress(len(pending), quiet, console) as advance:
        def started(task: ScenarioTask, where: str) -> None:
            write_json(out / "state" / f"{task.name}.running", {"where": where, "since": time.time()})

        def done(outcome: Outcome) -> None:
            state = by_name[outcome.task.name]
            (out / "state" / f"{outcome.task.name}.running").unlink(missing_ok=True)
            if outcome.ok:
                assert outcome.result is not None
                state.status, state.result = "ok", _result_fields(outcome)
                line = f"[green]✓[/] {escape(printable(state.scenario.name))} ({outcome.result.seconds:.1f} s)"
            else:
                state.status, state.error = "timed_out" if outcome.timed_out else "failed", outcome.error
                (out / "logs" / f"{state.scenario.name}.log").write_text(
                    f"{outcome.error}\n\n{outcome.detail}", encoding="utf-8")
                mark = "[red]⏱ timed out[/]" if outcome.timed_out else "[red]✗[/]"
                line = f"{mark} {escape(printable(state.scenario.name))}: {escape(printable(outcome.error))}"
            write_json(out / "state" / f"{state.scenario.name}.json", {
                "status": state.status, "fingerprint": state.fingerprint, "error": state.error,
                "result": state.result})
            console.print(line, highlight=False)
            advance()

        tasks = [s.task for s in pending]
        try:
            if tasks:
                if ray is not None:
                    ray.run(tasks, started, done)
                else:
                    LocalExecutor(workers or sweep.workers or os.cpu_count() or 1).run(tasks, started, done)
        finally:  # interrupted (Ctrl-C, SIGTERM): the executor stopped its workers; none is running
            for task in tasks:
                (out / "state" / f"{task.name}.running").unlink(missing_ok=True)
    db, built = _build(sweep, out, inputs, states, console, quiet)
    write_json(out / "sweep.json", _summary(sweep, states, db))
    return SweepReport(sweep, out, states, db, built)


def _where(executor: str, address: str | None, workers: int | None) -> str:
    if executor == "ray":
        return f"Ray cluster at {address or 'auto'}"
    return f"{workers or os.cpu_count() or 1} local worker processes"


# ------------------------------------------------------------------------------------ inputs


def _prepare_inputs(sweep: Sweep, out: Path, console: Console, quiet: bool) -> Inputs:
    """Concrete files for every scenario: the preset generated once, an import's start read."""
    inputs = sweep.inputs
    if inputs.preset is not None:
        folder = out / "inputs"
        wanted = {"preset": inputs.preset, "seed": inputs.preset_seed, "version": _version()}
        if read_json_object(folder / "preset.json") != wanted or not (folder / "trace.csv").is_file():
            # The preset generator: where it lives today (the lead moves it under gpu_finops).
            from gpu_finops.generator import generate

            if not quiet:
                console.print(f"generating preset {inputs.preset} (seed {inputs.preset_seed}) → {folder}",
                              markup=False, highlight=False)
            generate(inputs.preset, folder, seed=inputs.preset_seed)
            write_json(folder / "preset.json", wanted)
        return Inputs(folder / "trace.csv", folder / "cluster.csv", folder / "queues.yaml",
                      inputs.prices or folder / "prices.csv", inputs.start, inputs.trace_format)
    if inputs.imported is not None and inputs.start is None:
        start = read_json_object(inputs.imported / "import.json").get("start")
        return Inputs(inputs.trace, inputs.cluster, inputs.queues, inputs.prices, start, inputs.trace_format,
                      imported=inputs.imported)
    return inputs


def _plan(sweep: Sweep, scenario: Scenario, inputs: Inputs, out: Path) -> ScenarioState:
    queues = {"inputs": inputs.queues, "none": None}.get(scenario.queues, Path(scenario.queues))
    trace = scenario.trace or inputs.trace
    cluster = scenario.cluster or inputs.cluster
    assert trace is not None and cluster is not None  # read_sweep requires them
    if scenario.rightsize is not None:
        from gpu_finops.rightsizing import rightsize_trace

        rightsized = out / "traces" / f"{scenario.name}.csv"
        rightsized.parent.mkdir(parents=True, exist_ok=True)
        rightsize_trace(trace, rightsized, scenario.rightsize)
        trace = rightsized
    if not scenario.trace_policy.empty:
        from gpu_finops.trace_policy import apply_trace_policy

        overridden = out / "traces" / f"{scenario.name}.csv"
        overridden.parent.mkdir(parents=True, exist_ok=True)
        apply_trace_policy(trace, overridden, scenario.trace_policy)
        trace = overridden
    task = ScenarioTask(
        name=scenario.name, run_id=sweep.run_id(scenario), trace=trace, cluster=cluster, queues=queues,
        profile=scenario_profile(scenario, out / "profiles"), seed=scenario.seed,
        start=scenario.start or inputs.start, trace_format=inputs.trace_format, run_dir=out / "runs" / scenario.name,
        timeout_s=sweep.scenario_timeout_s,  # not in the fingerprint: a finished run stays finished
    )
    files = [task.trace, task.cluster, *([task.queues] if task.queues else []),
             *([task.profile_path] if task.profile_path else [])]
    for path in files:
        if not path.is_file():
            raise InputError(path, f"scenario {scenario.name}: file not found")
    identity = {
        "version": _version(), "run_id": task.run_id, "seed": task.seed, "start": task.start,
        "format": task.trace_format, "profile": task.profile if task.profile_path is None else task.profile_path.name,
        "files": {role: sha256_file(p) for role, p in zip(("trace", "cluster", "queues", "profile"), [
            task.trace, task.cluster, task.queues, task.profile_path], strict=True) if p is not None},
    }
    return ScenarioState(scenario, task, _digest(identity))


# ------------------------------------------------------------------------------------- runs


def deliver_run(run_dir: Path, files: dict[str, bytes]) -> None:
    """A run directory that came back as bytes: written beside, then swapped into place (the
    replay's own rule: only over a previous run folder, never a moment without one)."""
    from scheduler.commands import check_run_folder

    staging = run_dir.parent / f".{run_dir.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name, payload in files.items():
            if "/" in name or name in (".", ".."):
                raise ValueError(f"unexpected run file name {name!r}")
            (staging / name).write_bytes(payload)
        check_run_folder(run_dir)
        replace_folder(staging, run_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _result_fields(outcome: Outcome) -> dict[str, Any]:
    result = outcome.result
    assert result is not None
    return {"run_id": result.run_id, "workloads": result.workloads, "events": result.events,
            "rejected_rows": result.rejected_rows, "horizon_s": result.horizon_s,
            "seconds": round(result.seconds, 3), "events_sha256": result.events_sha256, "host": result.host}


# --------------------------------------------------------------------------------- database


def _build(sweep: Sweep, out: Path, inputs: Inputs, states: list[ScenarioState], console: Console,
           quiet: bool) -> tuple[Path | None, bool]:
    finished = [s for s in states if s.status in ("ok", "skipped")]
    db = out / DB_NAME
    if not finished:
        console.print("[red]no scenario finished: no database built[/]")
        return None, False
    assert inputs.prices is not None
    identity = {"runs": [[s.scenario.name, s.fingerprint, s.result.get("events_sha256")] for s in finished],
                "prices": sha256_file(inputs.prices), "charge_period_s": sweep.charge_period_s,
                "failed": sorted(s.scenario.name for s in states if s.status in ("failed", "timed_out"))}
    recorded = read_json_object(out / "state" / "database.json")
    if db.is_file() and recorded.get("digest") == _digest(identity) and recorded.get("file") == _identity_of(db):
        console.print(f"database unchanged: {db}", highlight=False, markup=False)
        return db, False
    from pipeline.build import build

    def ours(path: Path) -> None:
        """The sweep replaces its database whole: only the very file it built last time."""
        if path.exists() and recorded.get("file") != _identity_of(path):
            raise InputError(path, _NOT_OURS)

    build([s.task.run_dir for s in finished], inputs.prices, db, charge_period_s=sweep.charge_period_s,
          show_progress=not quiet, fresh=True, extra_tables={SCENARIO_TABLE: _scenario_table(sweep, states)},
          check_target=ours)
    write_json(out / "state" / "database.json", {"digest": _digest(identity), "file": _identity_of(db)})
    console.print(f"built {len(finished)} runs → {db}", highlight=False, markup=False)
    return db, True


def _check_database(out: Path) -> None:
    """Refuse at once (one line, nothing run) a ``DIR/gpu-finops.duckdb`` the sweep did not
    build or that was changed since, and one another process has open read-write; `_build`
    checks again under the database's lock."""
    db = out / DB_NAME
    if not db.exists() and not db.is_symlink():
        return
    if read_json_object(out / "state" / "database.json").get("file") != _identity_of(db):
        raise InputError(db, _NOT_OURS)
    from pipeline.target import BuildTarget

    with BuildTarget(db):  # refuses a database held read-write, folds a dead writer's log in
        pass


_NOT_OURS = ("the sweep did not build this database, or it was changed since (a table added, opened "
             "read-write): replacing it would lose that; move it away and run again")


def _identity_of(path: Path) -> list[Any] | None:
    """What tells the file the sweep built from any other: its size and hash (a write through
    DuckDB changes both; a copy of the whole sweep folder keeps them)."""
    try:
        return [path.stat().st_size, sha256_file(path)]
    except OSError:
        return None


def _scenario_table(sweep: Sweep, states: list[ScenarioState]) -> Any:
    """Table sweep_scenarios: one row per scenario with its settings, status and error, so the
    comparison can show what each run changed (facts as columns, not parsed from run ids)."""
    import pyarrow as pa

    rows = [{"run_id": s.task.run_id, "sweep": sweep.name, "scenario": s.scenario.name,
             "status": "ok" if s.status == "skipped" else s.status, **s.scenario.axes(),
             "trace": s.task.trace.name, "error": s.error or None,
             "replay_seconds": s.result.get("seconds"), "events_sha256": s.result.get("events_sha256"),
             "is_baseline": s.scenario.name == sweep.baseline}
            for s in states]
    for row in rows:
        row["queues"] = Path(row["queues"]).name if row["queues"] not in ("inputs", "none") else row["queues"]
        row["profile"] = Path(row["profile"]).name if str(row["profile"]).endswith(".toml") else row["profile"]
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        ("run_id", pa.string()), ("sweep", pa.string()), ("scenario", pa.string()), ("status", pa.string()),
        ("profile", pa.string()), ("queues", pa.string()), ("scoring", pa.string()), ("preemption", pa.string()),
        ("seed", pa.int64()), ("trace", pa.string()), ("error", pa.string()), ("replay_seconds", pa.float64()),
        ("events_sha256", pa.string()), ("rightsize", pa.float64()), ("trace_policy", pa.string()),
        ("is_baseline", pa.bool_())]))
    return table


# ---------------------------------------------------------------------------------- output


def _summary(sweep: Sweep, states: list[ScenarioState], db: Path | None) -> dict[str, Any]:
    return {
        "sweep": sweep.name, "source": str(sweep.source), "database": str(db) if db else None,
        "scenarios": [{"name": s.scenario.name, "run_id": s.task.run_id, **s.scenario.axes(),
                       "status": s.status, "error": s.error, **{k: v for k, v in s.result.items() if k != "run_id"}}
                      for s in states],
    }


def print_report(report: SweepReport, console: Console) -> None:
    table = Table(title=f"sweep {escape(printable(report.sweep.name))}")
    for column in ("scenario", "profile", "queues", "scoring", "preemption", "seed", "status", "replay s"):
        table.add_column(column, justify="right" if column in ("seed", "replay s") else "left")
    for state in report.states:
        axes = state.scenario.axes()
        status = {"ok": "[green]ok[/]", "skipped": "done before", "failed": "[red]failed[/]",
                  "timed_out": "[red]timed out[/]"}.get(state.status, "")
        seconds = state.result.get("seconds")
        table.add_row(*(Text(printable(text)) for text in (
                      state.scenario.name, Path(str(axes["profile"])).name, Path(str(axes["queues"])).name,
                      str(axes["scoring"]), str(axes["preemption"]), str(axes["seed"]))), status,
                      f"{seconds:.1f}" if isinstance(seconds, int | float) else "")
    console.print(table)
    for state in report.failed:
        console.print(f"[red]{state.status.replace('_', ' ')}[/] {escape(printable(state.scenario.name))}: {escape(printable(state.error))} "
                      f"(log: {escape(printable(str(report.out / 'logs' / (state.scenario.name + '.log'))))})",
                      highlight=False)
    if report.db:
        console.print(f"compare them: gpu-finops compare --db {report.db} --all   ·   "
                      f"gpu-finops report --db {report.db} --out REPORT_DIR   ·   gpu-finops dashboard --db {report.db}",
                      highlight=False, markup=False)


@contextmanager
def _progress(total: int, quiet: bool, console: Console) -> Iterator[Any]:
    if quiet or total == 0:
        yield lambda: None
        return
    with Progress(TextColumn("[bold]scenarios"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("scenarios", total=total)
        yield lambda: progress.advance(task)


def _version() -> str:
    """The installed gpu-finops version: a new one reruns every scenario (the replay may differ)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("gpu-finops")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _digest(value: Any) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def read_json_object(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def write_json(path: Path, value: Any) -> None:
    write_file(path, json.dumps(value, indent=2, default=str) + "\n")
