"""One interrupt rule for every DuckDB query of the CLI (issue 41): a Ctrl-C stops the query
at once and the command says `gpu-finops: interrupted`, exit 130; DuckDB's own forms of it
(``RuntimeError: Query interrupted``, ``InterruptException``) are that interrupt, never a
traceback and never a failure of their own."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from gpu_finops.interrupts import raise_query_interrupt
from pipeline.connect import is_query_interrupt
from tests.reliability.processes import cli_command, environment, in_process

LONG_QUERY = "SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3"  # minutes of work


def _has_open(pid: int, path: Path) -> bool:
    """Whether process `pid` holds `path` open: DuckDB opens the database file as `sql` connects,
    after the command's imports and its parser, right before the query runs."""
    try:
        return any(Path(f"/proc/{pid}/fd/{fd}").resolve() == path.resolve() for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # the process is gone, or a descriptor closed while looked at
        return False


def test_ctrl_c_during_a_long_sql_query_stops_it_at_once(tmp_path):
    """Before: DuckDB did not look at the pending Ctrl-C while the query ran on its workers;
    `sql` ran on to its statement timeout and then printed a `RuntimeError: Query interrupted`
    traceback (exit 1)."""
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    process = subprocess.Popen(cli_command("sql", "--db", str(db), "--timeout", "60", LONG_QUERY),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    # Not a thread count: numerical libraries start their threads while the commands are
    # imported, and a Ctrl-C there stops the import, not a query.
    deadline = time.monotonic() + 60
    while not _has_open(process.pid, db) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the query runs
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the query ran on after Ctrl-C: {err[-500:]}")
    assert time.monotonic() - sent < 15, "the query ran on after Ctrl-C"
    assert (process.returncode, err) == (130, "gpu-finops: interrupted\n"), err[-2000:]


@pytest.mark.parametrize("error", [RuntimeError("Query interrupted"), duckdb.InterruptException("INTERRUPT Error: Interrupted!")])
def test_duckdbs_forms_of_an_interrupt_are_the_interrupt(error):
    assert is_query_interrupt(error)
    wrapped = ValueError("a trial's figures failed")
    wrapped.__cause__ = error
    assert is_query_interrupt(wrapped)
    with pytest.raises(KeyboardInterrupt):
        raise_query_interrupt(wrapped)
    assert not is_query_interrupt(RuntimeError("something else"))
    raise_query_interrupt(RuntimeError("something else"))  # returns: not an interrupt


def test_a_query_interrupted_inside_build_is_exit_130_not_a_traceback(workspace, tmp_path, monkeypatch):
    """Before: `build` printed DuckDB's `RuntimeError: Query interrupted` as a traceback (exit 1)."""
    import pipeline.build

    def interrupted(*args: object, **kwargs: object) -> None:
        raise RuntimeError("Query interrupted")  # what DuckDB raises when it sees the Ctrl-C

    monkeypatch.setattr(pipeline.build, "build", interrupted)
    code, _, err = in_process("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                              "--db", str(tmp_path / "x.duckdb"))
    assert (code, err) == (130, "gpu-finops: interrupted\n")
