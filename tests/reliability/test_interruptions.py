"""`replay`, `build` and `report` killed with SIGKILL: old outputs or new ones, never half.

Each test alternates two versions of one command writing to the same place (two traces,
two charge periods, two runs), so "the previous outputs" and "the new outputs" are both
known, byte for byte. Then, for kills before the command's file operations (every rename and
deletion) and at random moments (`killing.run_command`):

1. after the kill, everything under the final names is the previous complete state or the new
   complete state (for the report, each file is one or the other), readable, nothing
   half-written; temporary files may be left, under hidden temporary names only;
2. rerunning the same command completes and gives exactly the new state.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import duckdb

from tests.reliability.killing import run_command

SEED = 20261102  # the kill moments are drawn from a seeded generator: the same every run


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under its final (not hidden) name in ``folder``, by relative path."""
    if not folder.exists():
        return {}
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }


def exercise(
    commands: dict[str, list[str]],
    state: Callable[[], object],
    plan: Callable[[int], list[tuple[str, float]]],
    check: Callable[[object, object, object], None] | None = None,
) -> list[str]:
    """Run both commands once to know their complete outputs, then kill them in turn.

    ``plan(operations)`` gives the kills from the number of file operations a complete run
    makes: ("op", k) kills before the k-th one, ("after_s", f) at that fraction of the
    command's full run time.
    ``check(seen, before, after)`` asserts the state after a kill; by default it must equal
    ``before`` (what was there) or ``after`` (the killed command's complete output). Each
    kill starts from what the previous one left, temporary leftovers included; at the end
    the last killed command is rerun and must complete with its complete output. Returns
    what happened at each kill, for the assertion messages.
    """
    check = check or _old_or_new
    complete = {}
    for name in commands:
        outcome = run_command(commands[name])
        assert outcome.exit_code == 0, f"{name} failed: {outcome}"
        complete[name] = (state(), outcome)
    names = list(commands)
    happened = []
    target = names[0]
    for how, value in plan(min(outcome.operations or 0 for _, outcome in complete.values())):
        before, (after, full) = state(), complete[target]
        if how == "op":
            outcome = run_command(commands[target], kill_before_op=int(value))
            assert outcome.killed, f"no file operation {value} to kill at ({full.operations} in all)"
        else:
            outcome = run_command(commands[target], kill_after_s=value * full.seconds)
        happened.append(f"{target} {how}={value:.3g}: {'killed' if outcome.killed else 'finished'}")
        check(state(), before, after)
        target = names[(names.index(target) + 1) % len(names)]
    last = names[(names.index(target) - 1) % len(names)]
    rerun = run_command(commands[last])
    assert rerun.exit_code == 0, f"the rerun after a kill failed: {rerun}"
    assert state() == complete[last][0], "the rerun did not give the complete new outputs"
    return happened


def _old_or_new(seen: object, before: object, after: object) -> None:
    assert seen in (before, after), "after the kill the outputs are neither the old nor the new ones"


def _kills(sample: int | None, moments: int, rng: random.Random) -> Callable[[int], list]:
    """A plan: ``sample`` of the file operations drawn at random (all when None), then
    ``moments`` random moments."""

    def plan(operations: int) -> list[tuple[str, float]]:
        assert operations >= 1, "the command puts its outputs in place with file operations"
        chosen = range(1, operations + 1) if sample is None else rng.sample(range(1, operations + 1), min(sample, operations))
        return [("op", k) for k in sorted(chosen)] + [("after_s", rng.random()) for _ in range(moments)]

    return plan


def test_killed_replay_leaves_the_previous_run_or_the_new_one(workspace, tmp_path):
    inputs, out = workspace.inputs, tmp_path / "run"
    commands = {
        name: ["replay", "--trace", str(inputs / f"trace-{name}.csv"), "--cluster",
               str(inputs / "cluster.csv"), "--out", str(out), "--run-id", name, "-q"]
        for name in ("a", "b")
    }
    # Before every file operation (the events file into place, then, after the folders are
    # swapped, the old run's removal file by file), then at a random moment.
    happened = exercise(commands, lambda: _files(out), _kills(None, 1, random.Random(SEED)))
    assert sum("killed" in h for h in happened) >= 3, happened


def _database_state(db: Path, export: Path) -> tuple:
    """What a reader of the database and the export sees; fails if either is unreadable."""
    assert not Path(f"{db}.wal").exists(), "a write-ahead log next to the final database"
    with duckdb.connect(str(db), read_only=True) as con:
        marts = con.execute(
            """select x_RunId, count(*), round(sum(EffectiveCost), 6), min(ChargePeriodStart),
                      max(ChargePeriodEnd) - min(ChargePeriodStart)
               from focus_cost_records group by 1 order by 1"""
        ).fetchall()
        runs = con.execute("select run_id, workloads from dim_runs order by 1").fetchall()
    files = _files(export)
    parquet = sorted(name for name in files if name.endswith(".parquet"))
    if parquet:
        with duckdb.connect() as con:
            exported = con.execute(
                "select count(*), round(sum(EffectiveCost), 6) from read_parquet(?)",
                [[str(export / name) for name in parquet]],
            ).fetchone()
    else:
        exported = None
    return marts, runs, exported


def test_killed_build_leaves_the_previous_database_or_the_new_one(workspace, tmp_path):
    run_a, _ = workspace.copy_runs(tmp_path)
    db, export = tmp_path / "marts.duckdb", tmp_path / "export"
    common = ["build", str(run_a), "--prices", str(workspace.inputs / "prices.csv"), "--db", str(db), "-q"]
    commands = {"hourly": [*common, "--charge-period", "1h"], "daily": [*common, "--charge-period", "1d"]}
    happened = exercise(commands, lambda: _database_state(db, export), _kills(1, 1, random.Random(SEED + 1)))
    assert any("killed" in h for h in happened), happened


_GENERATED = re.compile(rb"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")


def _report_files(folder: Path) -> dict[str, bytes]:
    # The report states when it was generated (to the minute): not part of the comparison.
    return {name: _GENERATED.sub(b"generated <time>", data) for name, data in _files(folder).items()}


def _each_file_old_or_new(seen: dict, before: dict, after: dict) -> None:
    """The report renames file by file: each file is a complete old or new one."""
    assert set(seen) <= set(before) | set(after), f"unexpected files: {set(seen) - set(before) - set(after)}"
    for name, data in seen.items():
        assert data in (before.get(name), after.get(name)), f"{name} is neither the old nor the new file"


def test_killed_report_leaves_each_file_old_or_new(workspace, tmp_path):
    from pipeline.build import build

    run_a, run_b = workspace.copy_runs(tmp_path)
    db, out = tmp_path / "marts.duckdb", tmp_path / "report"
    build([run_a, run_b], workspace.inputs / "prices.csv", db, show_progress=False)
    common = ["report", "--db", str(db), "--out", str(out), "--format", "md,csv", "-q"]
    commands = {"a": [*common, "--run-id", "a"], "b": [*common, "--run-id", "b"]}
    happened = exercise(commands, lambda: _report_files(out), _kills(2, 1, random.Random(SEED + 2)),
                        _each_file_old_or_new)
    assert sum("killed" in h for h in happened) >= 2, happened


def test_killed_build_never_leaves_the_export_folder_missing(workspace, tmp_path):
    from pipeline.build import build

    run_a, _ = workspace.copy_runs(tmp_path)
    db, export = tmp_path / "marts.duckdb", tmp_path / "export"
    build([run_a], workspace.inputs / "prices.csv", db, export=export, show_progress=False)  # a previous export
    before = _database_state(db, export)
    argv = ["build", str(run_a), "--prices", str(workspace.inputs / "prices.csv"), "--db", str(db),
            "--export", str(export), "--charge-period", "1d", "-q"]
    # Killed before each file operation in turn: the swap of the export folders is one step
    # (renameat2), so every moment shows the whole old export or the whole new one.
    operations = run_command(argv).operations
    assert operations and operations >= 3
    build([run_a], workspace.inputs / "prices.csv", db, export=export, show_progress=False)  # back to "before"
    for k in range(1, operations + 1):
        assert run_command(argv, kill_before_op=k).killed
        assert (export / "focus_cost_records").is_dir(), f"the export folder is missing after a kill before op {k}"
        seen = _database_state(db, export)
        assert seen[2] is not None, f"the export holds no Parquet after a kill before op {k}"
    assert run_command(argv).exit_code == 0
    assert _database_state(db, export) != before  # the daily build replaced the hourly one
