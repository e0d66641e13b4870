"""A full disk (issue 24): one line naming the path, the previous output intact, no temporary
file left. On a real full file system: a small tmpfs mounted for the test (skipped where this
process may not mount one)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.processes import assert_one_line_error, in_process


def _mounted(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture()
def small_disk(tmp_path):
    yield from _mounted(tmp_path / "disk", "2m")


@pytest.fixture()
def database_disk(tmp_path):
    """Room for one database of the workspace's runs and its rebuild's first pages, not more."""
    yield from _mounted(tmp_path / "disk", "32m")


def _fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("command", ["generate", "replay"])
def test_a_full_disk_is_one_line_and_the_previous_output_survives(small_disk, workspace, command):
    out = small_disk / "out"
    if command == "generate":
        argv = ["generate", "--preset", "tiny", "--out", str(out)]
        again = [*argv, "--seed", "9"]
    else:
        argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                str(workspace.inputs / "cluster.csv"), "--out", str(out)]
        again = [*argv, "--seed", "9"]
    assert in_process(*argv)[0] == 0
    before = _files(out)
    _fill(small_disk)
    code, _, err = in_process(*again)
    line = assert_one_line_error(command, code, err)
    assert "no space left on device" in line.lower() and str(small_disk) in line, line
    assert _files(out) == before
    leftovers = [p.name for p in small_disk.iterdir() if p.name not in ("out", "filler")]
    assert leftovers == [] and sorted(p.name for p in out.iterdir()) == sorted(before), leftovers


def test_a_full_disk_during_build_is_one_line_and_the_previous_database_survives(database_disk, workspace, tmp_path):
    """DuckDB's own I/O error (an IOException while writing, a FatalException at the
    checkpoint) was a traceback; now it is the write discipline's one line."""
    import duckdb

    run_a, run_b = workspace.copy_runs(tmp_path)
    db = database_disk / "costs.duckdb"
    prices = str(workspace.inputs / "prices.csv")
    assert in_process("build", str(run_a), "--prices", prices, "--db", str(db))[0] == 0
    before = db.read_bytes()
    _fill(database_disk)
    code, _, err = in_process("build", str(run_a), str(run_b), "--prices", prices, "--db", str(db))
    line = assert_one_line_error("build", code, err)
    assert "no space left on device" in line.lower() and str(db) in line, line
    assert db.read_bytes() == before
    with duckdb.connect(str(db), read_only=True) as con:  # and it still opens, with its one run
        assert con.execute("select count(distinct x_RunId) from focus_cost_records").fetchone() == (1,)
    leftovers = [p.name for p in database_disk.iterdir() if p.name not in ("costs.duckdb", "filler")]
    assert leftovers == [], leftovers
