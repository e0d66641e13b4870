"""SIGTERM (kill, a CronJob's deadline, a CI timeout) stops every command as Ctrl-C does: the
temporary database a build writes is removed, one line, exit 130. It was a death by signal
(exit 143) that left `.DB.building-*`, its write-ahead log and the lock file beside the
database."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from tests.reliability.processes import run


def _terminate_once_building(folder: Path):
    def when_building(process) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(p.name.startswith(".b.duckdb.building") for p in folder.iterdir()):
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGTERM)
    return when_building


def test_sigterm_during_build_removes_the_temporary_database(workspace, tmp_path):
    command = [sys.executable, "-m", "gpu_finops.cli", "build", str(workspace.run_a), str(workspace.run_b),
               "--prices", str(workspace.inputs / "prices.csv"), "--db", str(tmp_path / "b.duckdb"), "-q"]
    finished = run(command, after_start=_terminate_once_building(tmp_path), timeout_s=120)
    assert finished.code == 130, finished.err[-1500:]
    assert finished.err.strip() == "gpu-finops: interrupted", finished.err[-1500:]
    assert not (tmp_path / "b.duckdb").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".b.duckdb.building")], "temporary database left"
