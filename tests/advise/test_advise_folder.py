"""`advise quotas` under the project's one write discipline (issue 41): its study file is the
one it created or is refused, DIR is locked while it runs, and nothing in DIR it did not write
is replaced; all of it checked before the first replay."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_finops.cli import main
from scheduler.eventlog.writes import lock_path, output_lock
from tests.advise.cases import advise_args, unused_quota_case

ONE_TRIAL = ("--trials", "1", "--batch", "1", "--workers", "1", "--seeds", "2")


def _refused(capsys, files, out, *fragments: str) -> str:
    assert main(advise_args(files, out, *ONE_TRIAL)) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert not (out / "runs" / "today").exists(), "refused before any replay"
    return lines[0]


def test_a_users_own_sqlite_database_named_study_db_is_refused_and_left_byte_for_byte(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    with sqlite3.connect(out / "study.db") as mine:
        mine.execute("CREATE TABLE invoices (id INTEGER, amount REAL)")
        mine.execute("INSERT INTO invoices VALUES (1, 99.5)")
    before = (out / "study.db").read_bytes()
    _refused(capsys, files, out, "study.db: is not a study `advise quotas` created", "tables other than")
    assert (out / "study.db").read_bytes() == before


@pytest.mark.parametrize("content", [b"my notes, not a database\n", b"", b"SQLite format 3\x00" + b"\x00" * 84])
def test_a_study_db_that_is_not_sqlite_is_refused_and_left_byte_for_byte(tmp_path, capsys, content):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "study.db").write_bytes(content)
    _refused(capsys, files, out, "study.db: is not a study `advise quotas` created")
    assert (out / "study.db").read_bytes() == content


def test_a_users_trial_manifest_and_result_file_are_refused_before_any_replay(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    mine = out / "trials" / "trial-0000" / "queues.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text("# my hand-tuned quotas\n")
    _refused(capsys, files, out, "holds files advise quotas did not write", "trials/trial-0000/queues.yaml")
    assert mine.read_text() == "# my hand-tuned quotas\n"
    mine.unlink()
    (out / "trials.csv").write_text("mine\n")
    _refused(capsys, files, out, "holds files advise quotas did not write", "trials.csv")
    assert (out / "trials.csv").read_text() == "mine\n"


@pytest.mark.parametrize("name", ["runs", "trials", "state"])
def test_a_file_where_the_command_keeps_a_folder_is_refused_before_any_replay(tmp_path, capsys, name):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("mine\n")
    _refused(capsys, files, out, f"{name}: {name} must be a folder")
    assert (out / name).read_text() == "mine\n"


@pytest.mark.parametrize("run", ["today", "today-s43", "trial-0000-s43"])  # another seed's run folder too
def test_a_folder_of_the_users_named_as_a_run_is_refused_before_any_replay(tmp_path, capsys, run):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    (out / "runs" / run).mkdir(parents=True)
    (out / "runs" / run / "main.py").write_text("print('mine')\n")
    assert main(advise_args(files, out, *ONE_TRIAL)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and run in err, err
    assert (out / "runs" / run / "main.py").read_text() == "print('mine')\n"
    assert not (out / "study.db").exists()


def test_an_input_inside_the_output_folder_is_never_written_over(tmp_path, capsys):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    (out / "trials").mkdir(parents=True)
    files["queues"] = out / "trials" / "queues.yaml"  # replacing trials/ would delete it
    files["queues"].write_text((tmp_path / "queues.yaml").read_text())
    assert main(advise_args(files, out, *ONE_TRIAL)) == 2
    err = capsys.readouterr().err
    assert "holds the input" in err and len(err.strip().splitlines()) == 1, err
    assert not (out / "runs").exists()


def test_the_output_folder_is_locked_while_the_command_runs(tmp_path, capsys, monkeypatch):
    """Another command holding DIR's lock (here this test): the command waits, then says one
    line naming it and writes nothing (two advise runs on one DIR collided in Optuna's storage)."""
    monkeypatch.setattr("scheduler.eventlog.writes.LOCK_WAIT_S", 0.5)
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    with output_lock(out):
        assert main(advise_args(files, out, *ONE_TRIAL)) == 2
    err = capsys.readouterr().err
    assert f"another gpu-finops command (pid {os.getpid()}) is writing it" in err.strip().splitlines()[-1], err
    assert "Traceback" not in err and not out.exists()


def test_two_runs_on_one_folder_take_turns_and_the_second_resumes_the_study(tmp_path):
    files = unused_quota_case(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "gpu_finops.cli", *advise_args(files, out, "--trials", "2", "--batch", "2",
                                                                     "--workers", "1", "--seeds", "1")]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not lock_path(out).exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    answers = [process.communicate(timeout=600) for process in (first, second)]
    for process, (_, err) in zip((first, second), answers, strict=True):
        assert process.returncode == 0 and "Traceback" not in err, err
    assert "waiting for another gpu-finops command" in answers[1][1]
    assert "0 replayed now" in answers[1][0]  # it found the study finished
    assert len((out / "trials.csv").read_text().splitlines()) == 3
    assert not lock_path(out).exists()
