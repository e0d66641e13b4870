"""Bad input through the real command line: one clear line naming file, row and field, or a
quarantined row in rejected.csv with its reason; never a traceback, never a half-written run."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

CLUSTER = "node,gpu_model,gpus\nn1,A100,8\nn2,A100,8\n"
HEADER = "workload_id,submit_time,duration_s,pods,gpus_per_pod,gpu_model"


def gpu_finops(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_finops.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def replay(tmp_path: Path, trace_text: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    (tmp_path / "trace.csv").write_text(trace_text)
    out = tmp_path / "run"
    result = gpu_finops("replay", "--trace", "trace.csv", "--cluster", "cluster.csv", "--out", str(out), "-q",
                        cwd=tmp_path)
    assert "Traceback" not in result.stderr
    return result, out


def test_a_missing_column_is_one_line_naming_file_row_and_field(tmp_path):
    result, out = replay(tmp_path, "workload_id,submit_time,pods,gpus_per_pod\nw1,0,1,1\n")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "trace.csv" in lines[0] and "row 1" in lines[0] and "'duration_s'" in lines[0]
    assert not out.exists()
    assert not list(tmp_path.glob(".run.tmp-*")), "nothing half-written left behind"


@pytest.mark.parametrize(
    ("row", "field", "reason_part"),
    [
        ("bad,0,-60,1,1,A100", "duration_s", "> 0"),
        ("bad,0,60,1,1,TPUv9", "gpu_model", "UnknownGpuModel"),
        ("bad,0,60,3,8,A100", "min_count", "LargerThanCluster"),
    ],
    ids=["negative-duration", "unknown-gpu-model", "gang-larger-than-cluster"],
)
def test_unrunnable_rows_are_quarantined_with_their_reason(tmp_path, row, field, reason_part):
    result, out = replay(tmp_path, f"{HEADER}\nok,0,60,1,1,A100\n{row}\n")
    assert result.returncode == 0, result.stderr
    with (out / "rejected.csv").open() as handle:
        rejected = list(csv.DictReader(handle))
    assert [(r["row"], r["workload_id"], r["field"]) for r in rejected] == [("3", "bad", field)]
    assert reason_part in rejected[0]["reason"]
    events = pq.read_table(out / "events.parquet").to_pylist()
    assert {(e["workload_id"], e["event"]) for e in events if e["event"] in ("finished", "rejected")} >= {
        ("ok", "finished")
    }
    if field != "duration_s":  # rows that parse but can never run are also rejected in the log
        assert any(e["workload_id"] == "bad" and e["event"] == "rejected" for e in events)


def test_unknown_profile_and_bad_start_are_one_line_errors(tmp_path):
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    (tmp_path / "trace.csv").write_text(f"{HEADER}\nok,0,60,1,1,A100\n")
    for extra, needle in ((["--profile", "gang-v9"], "unknown profile"), (["--start", "yesterday"], "ISO 8601")):
        result = gpu_finops("replay", "--trace", "trace.csv", "--cluster", "cluster.csv", "--out", "run",
                            *extra, cwd=tmp_path)
        assert result.returncode == 2 and needle in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
