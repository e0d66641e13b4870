"""The generic trace reader: every row is either a workload or a quarantined row, with why."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scheduler.errors import InputError
from scheduler.trace import read_generic_trace

START = datetime(2026, 11, 2, tzinfo=UTC)
HEADER = "workload_id,submit_time,duration_s,pods,min_count,gpus_per_pod,gpu_model,tenant,queue,priority,checkpoint_interval_s,kind"


def write(tmp_path: Path, *lines: str, name: str = "trace.csv", header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_a_good_row_becomes_a_workload_with_defaults(tmp_path):
    path = write(tmp_path, "w1,10,3600,4,,8,H100|A100,vision,vision,500,1800,training", header=HEADER)
    load = read_generic_trace(path, START)
    assert load.input_rows == 1 and not load.rejected
    (w,) = load.workloads
    assert (w.workload_id, w.submit_time_s, w.duration_s) == ("w1", 10.0, 3600.0)
    assert (w.pods, w.min_count, w.gpus_per_pod) == (4, 4, 8.0)  # min_count defaults to pods
    assert w.gpu_models == ("H100", "A100") and w.gpu_model_label == "H100|A100"
    assert (w.tenant, w.queue, w.priority, w.checkpoint_interval_s, w.kind) == ("vision", "vision", 500, 1800.0, "training")
    assert w.source_row == 2


def test_only_required_columns_fill_in_the_documented_defaults(tmp_path):
    path = write(tmp_path, "w1,0,60,0.5", header="workload_id,submit_time,duration_s,gpus_per_pod")
    (w,) = read_generic_trace(path, START).workloads
    assert (w.pods, w.min_count, w.gpu_models, w.tenant, w.queue, w.priority, w.kind) == (1, 1, (), "default", None, 0, "batch")
    assert w.shares_device


@pytest.mark.parametrize(
    ("row", "field", "reason_contains"),
    [
        ("w1,0,abc,1,1,1,,t,q,0,,batch", "duration_s", "not a number"),
        ("w1,0,nan,1,1,1,,t,q,0,,batch", "duration_s", "not a finite number"),
        ("w1,0,inf,1,1,1,,t,q,0,,batch", "duration_s", "not a finite number"),
        ("w1,0,-5,1,1,1,,t,q,0,,batch", "duration_s", "must be > 0, got -5"),
        ("w1,0,0,1,1,1,,t,q,0,,batch", "duration_s", "must be > 0"),
        ("w1,0,60,0,,1,,t,q,0,,batch", "pods", "must be >= 1"),
        ("w1,0,60,2.5,,1,,t,q,0,,batch", "pods", "whole number"),
        ("w1,0,60,4,5,1,,t,q,0,,batch", "min_count", "between 1 and pods (4), got 5"),
        ("w1,0,60,4,0,1,,t,q,0,,batch", "min_count", "between 1 and pods"),
        ("w1,0,60,1,1,0,,t,q,0,,batch", "gpus_per_pod", "must be > 0"),
        ("w1,0,60,1,1,1.5,,t,q,0,,batch", "gpus_per_pod", "whole number of GPUs"),
        ("w1,0,60,1,1,,,t,q,0,,batch", "gpus_per_pod", "missing"),
        ("w1,-1,60,1,1,1,,t,q,0,,batch", "submit_time", "must be >= 0"),
        ("w1,yesterday,60,1,1,1,,t,q,0,,batch", "submit_time", "neither seconds nor an ISO 8601"),
        ("w1,2026-11-01T23:00:00Z,60,1,1,1,,t,q,0,,batch", "submit_time", "before the run start"),
        ("w1,0,60,1,1,1,,t,q,high,,batch", "priority", "not a number"),
        ("w1,0,60,1,1,1,,t,q,0,-60,batch", "checkpoint_interval_s", "must be > 0"),
        (",0,60,1,1,1,,t,q,0,,batch", "workload_id", "missing"),
        ("w1,0,60,1,1,1,,t,q,0,,batch,extra,values", "(row)", "values but the header has"),
    ],
)
def test_a_bad_row_is_quarantined_with_its_field_and_reason(tmp_path, row, field, reason_contains):
    path = write(tmp_path, "ok,0,60,1,1,1,,t,q,0,,batch", row)
    load = read_generic_trace(path, START)
    assert [w.workload_id for w in load.workloads] == ["ok"]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field) == (3, field)
    assert reason_contains in rejected.reason
    assert len(load.workloads) + len(load.rejected) == load.input_rows == 2


def test_a_duplicate_workload_id_rejects_the_second_row(tmp_path):
    path = write(tmp_path, "w1,0,60,1,1,1,,t,q,0,,batch", "w2,0,60,1,1,1,,t,q,0,,batch", "w1,5,60,1,1,1,,t,q,0,,batch")
    load = read_generic_trace(path, START)
    assert [w.source_row for w in load.workloads] == [2, 3]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.workload_id, rejected.field) == (4, "w1", "workload_id")
    assert "first seen on row 2" in rejected.reason


def test_iso_and_seconds_times_mix_and_sort_by_time_then_source_order(tmp_path):
    path = write(
        tmp_path,
        "late,2026-11-02T01:00:00Z,60,1,1,1,,t,q,0,,batch",  # 3600 s
        "tie-a,1800,60,1,1,1,,t,q,0,,batch",
        "naive-utc,2026-11-02T00:30:00,60,1,1,1,,t,q,0,,batch",  # 1800 s, read as UTC
        "offset,2026-11-02T02:00:00+02:00,60,1,1,1,,t,q,0,,batch",  # = 00:00 UTC
    )
    load = read_generic_trace(path, START)
    assert [(w.workload_id, w.submit_time_s) for w in load.workloads] == [
        ("offset", 0.0), ("tie-a", 1800.0), ("naive-utc", 1800.0), ("late", 3600.0),
    ]


def test_a_missing_required_column_is_one_line_naming_file_header_row_and_column(tmp_path):
    path = write(tmp_path, "w1,0,60", header="workload_id,submit_time,gpus_per_pod")
    with pytest.raises(InputError) as caught:
        read_generic_trace(path, START)
    error = caught.value
    assert (error.file, error.row, error.field) == ("trace.csv", 1, "duration_s")
    assert str(error).startswith("trace.csv: row 1: field 'duration_s': required column missing")
    assert "\n" not in str(error) and str(tmp_path) not in str(error)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "file not found"), (b"workload_id\n\xff\xfe\n", "not UTF-8"), (b"", "empty file")],
)
def test_unusable_files_raise_input_error(tmp_path, content, message):
    path = tmp_path / "trace.csv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_generic_trace(path, START)


def test_parquet_rows_follow_the_same_rules(tmp_path):
    table = pa.table(
        {
            "workload_id": ["a", "b", "c"],
            "submit_time": ["0", "2026-11-02T00:01:00Z", "5"],
            "duration_s": [60.0, 60.0, float("nan")],
            "pods": [2, 1, 1],
            "gpus_per_pod": [8.0, 0.25, 1.0],
        }
    )
    path = tmp_path / "trace.parquet"
    pq.write_table(table, path)
    load = read_generic_trace(path, START)
    assert [(w.workload_id, w.submit_time_s) for w in load.workloads] == [("a", 0.0), ("b", 60.0)]
    assert [(r.row, r.field) for r in load.rejected] == [(4, "duration_s")]


def test_the_bundled_demo_trace_loads_without_rejections():
    path = Path(__file__).resolve().parents[2] / "data" / "demo" / "trace.csv"
    load = read_generic_trace(path, START)
    assert load.input_rows == len(load.workloads) > 1000
    with path.open(encoding="utf-8") as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == load.input_rows


@pytest.mark.parametrize(
    ("cell", "reason_contains"),
    [
        ("1.5", "between 0 and 1"),
        ("-0.1", "between 0 and 1"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("busy", "not a number"),
    ],
)
def test_gpu_utilization_out_of_range_is_a_rejected_row(tmp_path, cell, reason_contains):
    header = "workload_id,submit_time,duration_s,gpus_per_pod,gpu_utilization"
    path = write(tmp_path, "ok,0,60,8,0.25", "empty,0,60,8,", f"bad,0,60,8,{cell}", header=header)
    load = read_generic_trace(path, START)
    assert {w.workload_id: w.gpu_utilization for w in load.workloads} == {"ok": 0.25, "empty": None}
    (rejected,) = load.rejected
    assert (rejected.row, rejected.workload_id, rejected.field) == (4, "bad", "gpu_utilization")
    assert reason_contains in rejected.reason


def test_gpu_utilization_is_unknown_when_the_column_is_absent(tmp_path):
    (w,) = read_generic_trace(write(tmp_path, "w1,0,60,1,1,1,,t,q,0,,batch"), START).workloads
    assert w.gpu_utilization is None


def test_disruption_mode_and_on_pod_loss_are_read_in_any_case_with_documented_defaults(tmp_path):
    header = "workload_id,submit_time,duration_s,gpus_per_pod,pods,kind,disruption_mode,on_pod_loss"
    path = write(tmp_path, "a,0,60,1,4,training,All,keep_running", "b,0,60,1,4,batch,,", "c,0,60,1,4,training,single,",
                 header=header)
    a, b, c = read_generic_trace(path, START).workloads
    assert (a.disruption_mode, a.on_pod_loss, a.pod_loss_policy) == ("all", "keep_running", "keep_running")
    # Single is upstream's API default; the policy defaults by the workload's kind
    assert (b.disruption_mode, b.on_pod_loss, b.pod_loss_policy) == ("single", None, "replace_pod")
    assert (c.disruption_mode, c.pod_loss_policy) == ("single", "restart_group")


@pytest.mark.parametrize(("cells", "field", "reason"), [
    ("some,", "disruption_mode", "must be single or all, got 'some'"),
    (",restart", "on_pod_loss", "must be restart_group or keep_running or replace_pod, got 'restart'"),
])
def test_an_unknown_disruption_mode_or_pod_loss_policy_is_a_rejected_row(tmp_path, cells, field, reason):
    header = "workload_id,submit_time,duration_s,gpus_per_pod,disruption_mode,on_pod_loss"
    load = read_generic_trace(write(tmp_path, "ok,0,60,1,,", f"w1,0,60,1,{cells}", header=header), START)
    assert [w.workload_id for w in load.workloads] == ["ok"]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field, rejected.reason) == (3, field, reason)
