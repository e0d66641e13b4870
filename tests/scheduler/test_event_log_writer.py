"""The event-log writer keeps rows as tuples in the schema's order: a row given by position
(`row`, the replay's path) and the same row given by name (`emit`) are the same bytes, every
value lands in its own column, and row groups split anywhere read back as one table."""

from __future__ import annotations

import pyarrow.parquet as pq

from scheduler.eventlog.schema import EVENT_SCHEMA, EventType
from scheduler.eventlog.writer import EventLogWriter

# One value per optional column, each different, in EVENT_SCHEMA's order.
NAMED = {"pod_index": 3, "node": "node-7", "gpus": 0.5, "gpu_model": "A100", "tenant": "t1", "queue": "q1",
         "cluster_queue": "cq1", "priority": 9, "reason": "why", "message": "said", "flavor": "f1",
         "preemptor": "w9", "queue_position": 4, "queue_length": 11}


def _write(path, rows, batch_rows=65_536, by_name=False):
    writer = EventLogWriter(path, batch_rows=batch_rows)
    for time_s, event, workload, fields in rows:
        if by_name:
            writer.emit(time_s, event, workload, **fields)
        else:
            writer.row(time_s, event, workload, *(fields.get(name) for name in EVENT_SCHEMA.names[4:]))
    writer.close()
    return pq.read_table(path)


def _rows():
    partial = {"gpu_model": "H100", "tenant": "t2", "priority": 1, "reason": "Pending", "queue_length": 2}
    return [(float(i), EventType.STARTED if i % 2 else EventType.PENDING, f"w{i}", NAMED if i % 3 else partial)
            for i in range(7)]


def test_a_row_by_position_is_the_row_by_name_byte_for_byte(tmp_path):
    by_position = _write(tmp_path / "a.parquet", _rows())
    by_name = _write(tmp_path / "b.parquet", _rows(), by_name=True)
    assert by_position.equals(by_name)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_each_value_lands_in_its_own_column(tmp_path):
    table = _write(tmp_path / "a.parquet", [(2.5, EventType.STARTED, "w1", NAMED)])
    assert table.schema.names == EVENT_SCHEMA.names
    assert table.to_pylist() == [{"seq": 0, "time_s": 2.5, "event": "started", "workload_id": "w1", **NAMED}]


def test_row_groups_split_anywhere_read_back_as_one_table(tmp_path):
    whole = _write(tmp_path / "a.parquet", _rows())
    for batch in (1, 2, 3, 7):
        split = _write(tmp_path / f"b{batch}.parquet", _rows(), batch_rows=batch)
        assert split.equals(whole), batch
        assert pq.ParquetFile(tmp_path / f"b{batch}.parquet").num_row_groups == -(-7 // batch)
