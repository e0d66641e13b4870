"""No file of the user's is lost: a database held by another process, a folder that only
looks like an output, a link, a folder named as the database, a path SQL would misread.

Issue 20, items 1, 2, 3, 6 and 7. Each goes through the command line (`main`, or a child
process where another process's lock is the point).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.reliability.processes import assert_one_line_error, environment, in_process

# A process that opens the database read-write, writes a table and keeps it open: DuckDB keeps
# the table in its write-ahead log (X.wal) until it checkpoints or closes.
HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
if sys.argv[2] == "write":
    con.execute("create table mine as select 42 as answer")
print("ready", flush=True)
time.sleep(120)
"""


def _build(workspace, db: Path, *extra: str) -> tuple[int, str, str]:
    return in_process("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                      "--db", str(db), *extra)


def _hold(db: Path, mode: str) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), mode], stdout=subprocess.PIPE,
                              text=True, env=environment())
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    return holder


def _runs_in(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [row[0] for row in con.execute("select run_id from raw_runs order by 1").fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("mode", ["write", "idle"])
def test_build_refuses_a_database_another_process_has_open_read_write(workspace, tmp_path, mode):
    """Item 1: the build used to copy the file without the holder's WAL and rename over it."""
    db = tmp_path / "marts.duckdb"
    assert _build(workspace, db)[0] == 0
    before = db.read_bytes()
    holder = _hold(db, mode)
    try:
        code, _, err = _build(workspace, db)
        line = assert_one_line_error("build", code, err)
        assert "read-write" in line and "marts.duckdb" in line
        assert db.read_bytes() == before, "the held database was replaced"
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".marts")], "temp left behind"
    finally:
        holder.kill()  # dies without closing: a write holder leaves its WAL behind
        holder.wait()
    if mode == "write":
        assert (tmp_path / "marts.duckdb.wal").exists()
    # The holder is gone: the next build folds its WAL in (its table survives) and succeeds.
    code, _, err = _build(workspace, db)
    assert code == 0, err
    assert not (tmp_path / "marts.duckdb.wal").exists()
    assert in_process("validate", "--db", str(db))[0] == 0
    code, out, err = in_process("sql", "--db", str(db), "--format", "csv", "SELECT * FROM mine" if mode == "write"
                                else "SELECT count(*) AS n FROM focus_cost_records")
    assert code == 0, err
    if mode == "write":
        assert out.splitlines() == ["answer", "42"], "the holder's table was lost"


def test_build_refuses_a_stale_write_ahead_log(workspace, tmp_path):
    """A WAL older than its file (what the old swap left beside a rebuilt database) is named,
    not applied, and left in place for the user."""
    db = tmp_path / "marts.duckdb"
    assert _build(workspace, db)[0] == 0
    holder = _hold(db, "write")
    holder.kill()
    holder.wait()
    stale = (tmp_path / "marts.duckdb.wal").read_bytes()
    assert _build(workspace, db)[0] == 0  # folds that WAL in: the file moves on
    (tmp_path / "marts.duckdb.wal").write_bytes(stale)
    code, _, err = _build(workspace, db)
    assert "write-ahead log" in assert_one_line_error("build", code, err)
    assert (tmp_path / "marts.duckdb.wal").exists(), "the user's .wal file was deleted"


@pytest.mark.parametrize("content", ["a previous run.json", "an unreadable run.json"])
def test_replay_never_deletes_a_folder_that_merely_holds_a_run_json(workspace, tmp_path, content):
    """Item 2: ``--out`` replaced any folder holding a file named run.json."""
    out = tmp_path / "project"
    (out / "src").mkdir(parents=True)
    (out / "main.py").write_text("print('mine')\n")
    (out / "src" / "lib.py").write_text("x = 1\n")
    if content == "a previous run.json":
        shutil.copy(workspace.run_a / "run.json", out / "run.json")
    else:
        (out / "run.json").write_text("{not json")
    code, _, err = in_process("replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                              str(workspace.inputs / "cluster.csv"), "--out", str(out))
    assert "main.py" in assert_one_line_error("replay", code, err)
    assert (out / "main.py").read_text() == "print('mine')\n" and (out / "src" / "lib.py").exists()


def test_replay_still_replaces_its_own_previous_run(workspace, tmp_path):
    out = Path(shutil.copytree(workspace.run_a, tmp_path / "run"))
    code, _, err = in_process("replay", "--trace", str(workspace.inputs / "trace-b.csv"), "--cluster",
                              str(workspace.inputs / "cluster.csv"), "--out", str(out), "--run-id", "again")
    assert code == 0, err
    assert json.loads((out / "run.json").read_text())["run_id"] == "again"


def test_build_export_never_deletes_the_users_files_in_focus_cost_records(workspace, tmp_path):
    """Item 2, the export: ``EXPORT/focus_cost_records/`` was replaced whole."""
    export = tmp_path / "export"
    assert _build(workspace, tmp_path / "marts.duckdb", "--export", str(export))[0] == 0
    records = export / "focus_cost_records"
    assert sorted(p.name for p in records.iterdir() if p.is_file()) == [".gpu-finops-files.json"]
    (records / "notes.md").write_text("my notes\n")
    code, _, err = _build(workspace, tmp_path / "marts.duckdb", "--export", str(export))
    assert "notes.md" in assert_one_line_error("build", code, err)
    assert (records / "notes.md").read_text() == "my notes\n"
    (records / "notes.md").unlink()
    assert _build(workspace, tmp_path / "marts.duckdb", "--export", str(export))[0] == 0  # ours again


def test_build_export_refuses_a_folder_of_the_users_named_focus_cost_records(workspace, tmp_path):
    records = tmp_path / "export" / "focus_cost_records"
    records.mkdir(parents=True)
    (records / "data_0.parquet").write_bytes(b"PAR1 not ours")
    code, _, err = _build(workspace, tmp_path / "marts.duckdb", "--export", str(tmp_path / "export"))
    assert_one_line_error("build", code, err)
    assert (records / "data_0.parquet").read_bytes() == b"PAR1 not ours"
    assert not (tmp_path / "marts.duckdb").exists(), "refused before building"


def test_build_through_a_symbolic_link_rebuilds_the_file_it_points_to(workspace, tmp_path):
    """Item 3: the link was replaced by a file and the database it pointed to went stale."""
    real = tmp_path / "shared" / "marts.duckdb"
    real.parent.mkdir()
    assert _build(workspace, real)[0] == 0
    link = tmp_path / "marts.duckdb"
    link.symlink_to(real)
    code, _, err = in_process("build", str(workspace.run_b), "--prices", str(workspace.inputs / "prices.csv"),
                              "--db", str(link))
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert _runs_in(real) == ["a", "b"], "the file the link points to was not rebuilt"


def test_build_refuses_a_file_with_other_hard_links(workspace, tmp_path):
    db = tmp_path / "marts.duckdb"
    assert _build(workspace, db)[0] == 0
    os.link(db, tmp_path / "copy.duckdb")
    code, _, err = _build(workspace, db)
    assert "hard link" in assert_one_line_error("build", code, err)


def test_build_refuses_a_folder_as_the_database(workspace, tmp_path):
    """Item 6: ``--db DIR`` raised IsADirectoryError."""
    folder = tmp_path / "marts"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep")
    code, _, err = _build(workspace, folder)
    assert "folder" in assert_one_line_error("build", code, err)
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("name", ["o'brien export", "x') TO 'elsewhere' (FORMAT csv); --", 'quote"d'])
def test_build_export_path_is_never_read_as_sql(workspace, tmp_path, name):
    """Item 7: the export path was pasted into a COPY statement on the read-write connection."""
    export = tmp_path / name
    code, _, err = _build(workspace, tmp_path / "marts.duckdb", "--export", str(export))
    assert code == 0, err
    files = sorted(p.relative_to(export).as_posix() for p in export.rglob("*.parquet"))
    assert files and all(f.startswith("focus_cost_records/billing_period=") for f in files)
    rows = sum(pq.read_table(export / f).num_rows for f in files)
    con = duckdb.connect(str(tmp_path / "marts.duckdb"), read_only=True)
    try:
        assert rows == con.execute("select count(*) from focus_cost_records").fetchone()[0]
    finally:
        con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["marts.duckdb", name])


def test_a_scheduled_report_never_replaces_a_folder_of_the_users(workspace, tmp_path):
    """The scheduled report swaps its folder in whole: only over a folder a report wrote."""
    db = tmp_path / "marts.duckdb"
    assert _build(workspace, db)[0] == 0
    target = tmp_path / "documents"
    target.mkdir()
    (target / "thesis.tex").write_text("keep me")
    config = tmp_path / "reports.toml"
    config.write_text(f'[[report]]\nname = "daily"\ncron = "0 6 * * *"\ndb = "{db}"\nout = "{target}"\n'
                      'period = "run"\nformats = ["csv"]\n')
    code, _, err = in_process("schedule", "--config", str(config), "--now", "2026-11-03T06:00:00Z")
    assert code == 1 and "thesis.tex" in err, err
    assert (target / "thesis.tex").read_text() == "keep me"
