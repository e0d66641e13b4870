"""The demo's own database for the tests that check what the pages and the docs say about it.

`gpu-finops demo --no-serve` is run once per test session into a temporary folder (about a
minute on two cores). ``GPU_FINOPS_DEMO_OUT`` names a folder a demo already wrote (``make docs``
sets it after running the demo once, so the docs test, the page checks and the screenshots all
read one database).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DEMO_OUT_ENV = "GPU_FINOPS_DEMO_OUT"


def run_demo(out: Path) -> Path:
    """Run the demo into ``out`` (without serving) and return its database."""
    result = subprocess.run(
        [sys.executable, "-m", "gpu_finops.cli", "demo", "--no-serve", "--out", str(out), "-q"],
        capture_output=True, text=True, timeout=900,
    )
    if result.returncode != 0:
        raise AssertionError(f"gpu-finops demo failed: {result.stderr[-3000:]}")
    return out / "gpu-finops.duckdb"


def demo_database(tmp_root: Path) -> Path:
    """The demo's database: ``$GPU_FINOPS_DEMO_OUT/gpu-finops.duckdb`` when set, else a fresh
    demo run under ``tmp_root``."""
    given = os.environ.get(DEMO_OUT_ENV, "").strip()
    if given:
        db = Path(given) / "gpu-finops.duckdb"
        if not db.is_file():
            raise AssertionError(f"{DEMO_OUT_ENV}={given}: no gpu-finops.duckdb there (run `gpu-finops demo --out {given}`)")
        return db
    return run_demo(tmp_root / "demo-out")
