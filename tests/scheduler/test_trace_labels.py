"""The trace's optional ``labels`` column: read into the workload, validated row by row, carried
into workloads.parquet."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scheduler.trace import read_generic_trace
from scheduler.trace.cluster import workloads_to_arrow
from scheduler.trace.labels import labels_json, parse_labels

START = datetime(2026, 11, 2, tzinfo=UTC)
HEADER = ["workload_id", "submit_time", "duration_s", "gpus_per_pod", "labels"]


def write(tmp_path: Path, *rows: list[str]) -> Path:
    path = tmp_path / "trace.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def test_labels_are_read_sorted_by_key_and_empty_is_none(tmp_path):
    path = write(tmp_path,
                 ["a", "0", "60", "1", '{"team": "llm", "cost-center": "cc-42", "app.kubernetes.io/part-of": "chat"}'],
                 ["b", "0", "60", "1", ""],
                 ["c", "0", "60", "1", "{}"])
    load = read_generic_trace(path, START)
    assert not load.rejected
    labels = {w.workload_id: w.labels for w in load.workloads}
    assert labels == {
        "a": (("app.kubernetes.io/part-of", "chat"), ("cost-center", "cc-42"), ("team", "llm")),
        "b": (),
        "c": (),
    }


def test_the_column_is_optional(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("workload_id,submit_time,duration_s,gpus_per_pod\nw,0,60,1\n", encoding="utf-8")
    (w,) = read_generic_trace(path, START).workloads
    assert w.labels == ()


@pytest.mark.parametrize(
    ("cell", "reason_contains"),
    [
        ("{bad", "not JSON"),
        ('["team", "llm"]', "must be a JSON object"),
        ('"llm"', "must be a JSON object"),
        ('{"team": 7}', "value of 'team' must be text, got a number"),
        ('{"team": true}', "got true/false"),
        ('{"team": null}', "got null"),
        ('{"team": {"name": "llm"}}', "got an object"),
        ('{"team": ["llm"]}', "got a list"),
        ('{"team": ""}', "is empty"),
        ('{"team": "a", "team": "b"}', "appears twice"),
        ('{"-team": "a"}', "Kubernetes label key"),
        ('{"Example.COM/team": "a"}', "DNS subdomain"),
        ('{"' + "k" * 64 + '": "a"}', "Kubernetes label key"),
        ('{"team": "' + "v" * 1025 + '"}', "at most 1,024"),
        ('{"team": "a\\u001b[31m"}', "unprintable character U+001B"),
        ('{"team": "__unallocated__"}', "reserve"),
        ('{"team": "__idle__"}', "reserve"),
        ("{" + ",".join(f'"k{i}": "v"' for i in range(65)) + "}", "65 keys, at most 64"),
        ("[" * 70_000, "at most 65,536"),
        ("[" * 20_000, "not"),  # nested too deep, or not an object: a reason either way, no traceback
    ],
)
def test_a_bad_labels_cell_is_a_rejected_row_with_its_reason(tmp_path, cell, reason_contains):
    path = write(tmp_path, ["ok", "0", "60", "1", '{"team": "llm"}'], ["bad", "0", "60", "1", cell])
    load = read_generic_trace(path, START)
    assert [w.workload_id for w in load.workloads] == ["ok"]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.workload_id, rejected.field) == (3, "bad", "labels")
    assert reason_contains in rejected.reason
    assert len(load.workloads) + len(load.rejected) == load.input_rows


def test_parquet_traces_carry_labels_as_json_text(tmp_path):
    path = tmp_path / "trace.parquet"
    pq.write_table(pa.table({
        "workload_id": ["a", "b"], "submit_time": [0.0, 1.0], "duration_s": [60.0, 60.0],
        "gpus_per_pod": [1.0, 1.0], "labels": ['{"project": "p1"}', '{"project": 1}'],
    }), path)
    load = read_generic_trace(path, START)
    assert [(w.workload_id, w.labels) for w in load.workloads] == [("a", (("project", "p1"),))]
    assert [(r.workload_id, r.field) for r in load.rejected] == [("b", "labels")]


def test_labels_reach_workloads_parquet_as_a_typed_map(tmp_path):
    path = write(tmp_path, ["a", "0", "60", "1", '{"team": "llm", "cost-center": "cc-42"}'],
                 ["b", "0", "60", "1", ""])
    table = workloads_to_arrow(read_generic_trace(path, START).workloads)
    assert table.schema.field("labels").type == pa.map_(pa.string(), pa.string())
    assert table.column("labels").to_pylist() == [[("cost-center", "cc-42"), ("team", "llm")], None]


def test_the_canonical_cell_round_trips():
    labels = parse_labels('{ "team" : "llm", "cost-center": "cc-ü" }')
    assert labels_json(labels) == '{"cost-center":"cc-ü","team":"llm"}'
    assert parse_labels(labels_json(labels)) == labels
    assert labels_json(()) == ""
