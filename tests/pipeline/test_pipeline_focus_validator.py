"""The FinOps Foundation's focus-validator (FOCUS 1.2, offline) accepts our export."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest
import scenarios

from pipeline.build import build

# <repo root>/../shared/tools/focus-validate
VALIDATOR = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "focus-validate"


@pytest.mark.slow
def test_export_passes_the_focus_validator(tmp_path, prices_csv):
    if not VALIDATOR.exists():
        pytest.skip(f"focus-validate not found at {VALIDATOR}")
    runs = tmp_path / "runs"
    run_dirs = [make().write(runs) for make in scenarios.ALL]
    export = tmp_path / "export"
    build(run_dirs, prices_csv, tmp_path / "f.duckdb", export=export, show_progress=False)
    single = tmp_path / "focus_cost_records.parquet"
    con = duckdb.connect()
    con.execute(
        f"""copy (select * from read_parquet('{export}/focus_cost_records/**/*.parquet',
                                              hive_partitioning = false))
            to '{single}' (format parquet)"""
    )
    con.close()
    result = subprocess.run(
        [str(VALIDATOR), str(single)], capture_output=True, text=True, timeout=600
    )
    if result.returncode == 2 and "no Python >= 3.12 found" in result.stderr:
        pytest.skip("focus-validate needs Python >= 3.12, none on this machine")
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Total: ")
