"""Builds and sweeps into one database at once (issue 24): they take turns on the database's
writer lock (`scheduler.eventlog.writes.output_lock`), so every run a command reported built is
in the database afterwards; a sweep never replaces a database it did not build, nor one another
process holds read-write. Real processes throughout. Before the lock, two builds into one file
both printed "built" and the database held one of their runs; a sweep replaced a user's own
gpu-finops.duckdb, and one held read-write no longer opened afterwards."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.reliability.processes import assert_one_line_error, cli_command, environment, in_process

SWEEP = """\
[sweep]
name = "stress"

[inputs]
preset = "tiny"

[[scenario]]
name = "gang"
profile = "gang-v1.37"
"""


def _runs_in(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {run for (run,) in con.execute("select run_id from dim_runs").fetchall()}


def _reported_built(stdout: str, stderr: str) -> set[str]:
    """Run ids a command said it built: `build` prints "built a, b → DB", a sweep "built N runs"."""
    runs: set[str] = set()
    for line in stdout.splitlines():
        found = re.match(r"built (.+) → ", line)
        if found:
            runs |= {r.strip() for r in found.group(1).split(",")}
    if re.search(r"built \d+ runs? → ", stderr):
        runs.add("stress-gang")
    return runs


@pytest.fixture()
def tiny_runs(tmp_path):
    """The tiny preset's inputs and four replays of it under distinct run ids."""
    inputs = tmp_path / "inputs"
    assert in_process("generate", "--preset", "tiny", "--out", str(inputs))[0] == 0
    runs = []
    for seed in range(4):
        run = tmp_path / f"run-{seed}"
        assert in_process("replay", "--trace", str(inputs / "trace.csv"), "--cluster", str(inputs / "cluster.csv"),
                          "--seed", str(seed), "--run-id", f"build-{seed}", "--out", str(run))[0] == 0
        runs.append(run)
    return inputs, runs


@pytest.mark.slow
def test_builds_started_together_into_one_database_keep_every_run(tiny_runs, tmp_path):
    inputs, runs = tiny_runs
    db = tmp_path / "shared.duckdb"
    processes = [subprocess.Popen(cli_command("build", str(run), "--prices", str(inputs / "prices.csv"),
                                              "--db", str(db), "-q"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
                 for run in runs]
    reported: set[str] = set()
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        reported |= _reported_built(out, err)
    assert reported == {f"build-{seed}" for seed in range(4)}
    assert _runs_in(db) == reported
    assert not list(tmp_path.glob(".shared.duckdb*")), "no lock or temporary file is left behind"


@pytest.mark.slow
def test_builds_and_sweeps_into_one_database_at_once_lose_no_reported_run(tiny_runs, tmp_path):
    inputs, runs = tiny_runs
    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "sweep"
    db = out / "gpu-finops.duckdb"
    commands = [cli_command("sweep", str(spec), "--out", str(out), "--workers", "1", "-q") for _ in range(2)]
    commands += [cli_command("build", str(run), "--prices", str(inputs / "prices.csv"), "--db", str(db), "-q")
                 for run in runs[:3]]
    processes = []
    for command in commands:
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          env=environment()))
        time.sleep(0.2)
    reported: set[str] = set()
    for process in processes:
        stdout, stderr = process.communicate(timeout=900)
        if process.returncode == 0:
            reported |= _reported_built(stdout, stderr)
        else:  # refused (a sweep after a build changed its database): one line, nothing claimed
            assert process.returncode == 2, stderr
            assert "Traceback" not in stderr, stderr
            assert stderr.strip().splitlines()[-1].startswith("gpu-finops "), stderr
    assert reported, "at least one command built something"
    assert reported <= _runs_in(db), (reported, _runs_in(db))


def test_a_sweep_never_replaces_a_users_own_database_of_that_name(tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "out"
    out.mkdir()
    with duckdb.connect(str(out / "gpu-finops.duckdb")) as con:
        con.execute("create table my_budget as select 42 as usd")
    before = (out / "gpu-finops.duckdb").read_bytes()
    code, _, err = in_process("sweep", str(spec), "--out", str(out), "--workers", "1", "-q")
    line = assert_one_line_error("sweep", code, err)
    assert "did not build" in line
    assert (out / "gpu-finops.duckdb").read_bytes() == before
    # its own database it rebuilds, and a rerun of an unchanged sweep leaves it
    (out / "gpu-finops.duckdb").unlink()
    assert in_process("sweep", str(spec), "--out", str(out), "--workers", "1", "-q")[0] == 0
    assert _runs_in(out / "gpu-finops.duckdb") == {"stress-gang"}


def test_a_sweep_never_replaces_a_database_another_process_holds_read_write(tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "out"
    assert in_process("sweep", str(spec), "--out", str(out), "--workers", "1", "-q")[0] == 0
    db = out / "gpu-finops.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time\n"
         f"con = duckdb.connect({str(db)!r})\n"
         "con.execute('create table held as select 1 as x')\n"
         "print('ready', flush=True)\n"
         "sys.stdin.read()\n"
         "con.close()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        spec.write_text(SWEEP.replace('profile = "gang-v1.37"', 'profile = "gang-v1.37"\nseed = 7'))
        code, _, err = in_process("sweep", str(spec), "--out", str(out), "--workers", "1", "-q")
        assert_one_line_error("sweep", code, err)
    finally:
        holder.communicate("", timeout=60)
    with duckdb.connect(str(db), read_only=True) as con:  # it opens, and the holder's table is there
        assert con.execute("select x from held").fetchall() == [(1,)]
    assert not Path(f"{db}.wal").exists()
