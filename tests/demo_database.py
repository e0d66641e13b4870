"""The demo, run once per test session, for the tests that check what it leaves behind, what
the pages and the docs say about its database, and how long it takes.

`gpu-finops demo --no-serve` is run once per test session into a temporary folder (about a
minute on two cores), as a new user runs it. ``GPU_FINOPS_DEMO_OUT`` names a folder a demo
already wrote (``make docs`` sets it after running the demo once, so the docs test, the page
checks and the screenshots all read one database); the demo's time is then not measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEMO_OUT_ENV = "GPU_FINOPS_DEMO_OUT"


@dataclass(frozen=True)
class DemoRun:
    """What `gpu-finops demo --no-serve` wrote (read-only: copy before writing)."""

    out: Path  # gpu-finops.duckdb, report/, run/, run-kube-default/, inputs/, export/
    elapsed_s: float | None  # how long the demo took; None when read from $GPU_FINOPS_DEMO_OUT

    @property
    def db(self) -> Path:
        return self.out / "gpu-finops.duckdb"


def run_demo(out: Path) -> DemoRun:
    """Run the demo into ``out`` (without serving), timed."""
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "gpu_finops.cli", "demo", "--no-serve", "--out", str(out), "-q"],
        capture_output=True, text=True, timeout=900,
    )
    elapsed = time.monotonic() - began
    if result.returncode != 0:
        raise AssertionError(f"gpu-finops demo failed: {result.stderr[-3000:]}")
    return DemoRun(out, elapsed)


def demo_run(tmp_root: Path) -> DemoRun:
    """The demo's output: ``$GPU_FINOPS_DEMO_OUT`` when set, else a fresh demo run under
    ``tmp_root``."""
    given = os.environ.get(DEMO_OUT_ENV, "").strip()
    if given:
        demo = DemoRun(Path(given), None)
        if not demo.db.is_file():
            raise AssertionError(f"{DEMO_OUT_ENV}={given}: no gpu-finops.duckdb there (run `gpu-finops demo --out {given}`)")
        return demo
    return run_demo(tmp_root / "demo-out")
