"""The machine-wide lock (tests/machine_lock.py) that keeps two pytest-xdist workers from
installing Chromium or the FOCUS validator at once: held by one process at a time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.machine_lock import machine_wide_lock

REPO = Path(__file__).resolve().parents[1]
NAME = "test-machine-lock"

SECOND_HOLDER = """
import sys
from tests.machine_lock import machine_wide_lock
log = sys.argv[1]
with open(log, "a") as out:
    out.write("waiting\\n")
with machine_wide_lock(sys.argv[2]):
    with open(log, "a") as out:
        out.write("in\\n")
"""


def _lines(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_a_second_process_waits_until_the_first_lets_go(tmp_path):
    log = tmp_path / "turns.log"
    with machine_wide_lock(NAME):
        second = subprocess.Popen([sys.executable, "-c", SECOND_HOLDER, str(log), NAME],
                                  env={**os.environ, "PYTHONPATH": str(REPO)})
        deadline = time.monotonic() + 60
        while _lines(log) != ["waiting"] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # time enough to take a lock nobody held
        assert _lines(log) == ["waiting"]
    assert second.wait(timeout=60) == 0
    assert _lines(log) == ["waiting", "in"]
