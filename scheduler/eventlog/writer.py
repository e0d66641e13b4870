"""Append-only event-log writer: buffered rows → Parquet row groups → atomic rename.

Rows are buffered and flushed as one row group every `batch_rows` rows,
so a long replay keeps bounded memory. The file is written under a temporary name in the
same directory and renamed into place by `close()`: a killed replay never leaves a
half-written `events.parquet` behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict, Unpack

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.eventlog.columns import arrow_array
from scheduler.eventlog.schema import EVENT_SCHEMA, METADATA_KEY, SCHEMA_VERSION, EventType


class EventFields(TypedDict, total=False):
    """The optional columns of one event row (all but seq, time_s, event, workload_id)."""

    pod_index: int | None
    node: str | None
    gpus: float | None
    gpu_model: str | None
    tenant: str | None
    queue: str | None
    cluster_queue: str | None
    priority: int | None
    reason: str | None
    message: str | None
    flavor: str | None
    preemptor: str | None
    queue_position: int | None
    queue_length: int | None


class EventLogWriter:
    """Rows are kept column by column, each value appended to its column's list by position
    (`row`): a row group becomes Arrow arrays straight from those lists, with no tuple per row
    and no transposition of the rows (`zip(*rows)` cost as much as the Arrow conversion)."""

    def __init__(self, path: Path, batch_rows: int = 65_536) -> None:
        self.path = path
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        schema = EVENT_SCHEMA.with_metadata({METADATA_KEY: SCHEMA_VERSION.encode()})
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._schema = schema
        self._batch_rows = batch_rows
        self.rows = 0
        self.counts: dict[str, int] = {}
        self._pending = 0  # rows buffered since the last row group
        # Each event type's string: an enum's `.value` runs interpreted Python on every read.
        self._event_values: dict[EventType, str] = {event: event.value for event in EventType}
        self._new_columns()

    def emit(self, time_s: float, event: EventType, workload_id: str, **fields: Unpack[EventFields]) -> None:
        """A row from named optional columns (those not named are null)."""
        self.row(time_s, event, workload_id, fields.get("pod_index"), fields.get("node"), fields.get("gpus"),
                 fields.get("gpu_model"), fields.get("tenant"), fields.get("queue"), fields.get("cluster_queue"),
                 fields.get("priority"), fields.get("reason"), fields.get("message"), fields.get("flavor"),
                 fields.get("preemptor"), fields.get("queue_position"), fields.get("queue_length"))

    def row(self, time_s: float, event: EventType, workload_id: str, pod_index: int | None, node: str | None,
            gpus: float | None, gpu_model: str | None, tenant: str | None, queue: str | None,
            cluster_queue: str | None, priority: int | None, reason: str | None = None, message: str | None = None,
            flavor: str | None = None, preemptor: str | None = None, queue_position: int | None = None,
            queue_length: int | None = None) -> None:
        """A row with every column given in the schema's order: the replay's hot path
        (`EventEmitter`), without a dict of fields per row."""
        value = self._event_values[event]
        self._seq.append(self.rows)
        self._time_s.append(float(time_s))
        self._event.append(value)
        self._workload_id.append(workload_id)
        self._pod_index.append(pod_index)
        self._node.append(node)
        self._gpus.append(gpus)
        self._gpu_model.append(gpu_model)
        self._tenant.append(tenant)
        self._queue.append(queue)
        self._cluster_queue.append(cluster_queue)
        self._priority.append(priority)
        self._reason.append(reason)
        self._message.append(message)
        self._flavor.append(flavor)
        self._preemptor.append(preemptor)
        self._queue_position.append(queue_position)
        self._queue_length.append(queue_length)
        self.rows += 1
        counts = self.counts
        counts[value] = counts.get(value, 0) + 1
        self._pending += 1
        if self._pending >= self._batch_rows:
            self._flush()

    def _new_columns(self) -> None:
        """Empty column lists for the next row group, one per schema column."""
        self._seq: list[int] = []
        self._time_s: list[float] = []
        self._event: list[str] = []
        self._workload_id: list[str] = []
        self._pod_index: list[int | None] = []
        self._node: list[str | None] = []
        self._gpus: list[float | None] = []
        self._gpu_model: list[str | None] = []
        self._tenant: list[str | None] = []
        self._queue: list[str | None] = []
        self._cluster_queue: list[str | None] = []
        self._priority: list[int | None] = []
        self._reason: list[str | None] = []
        self._message: list[str | None] = []
        self._flavor: list[str | None] = []
        self._preemptor: list[str | None] = []
        self._queue_position: list[int | None] = []
        self._queue_length: list[int | None] = []

    def _columns(self) -> list[list]:  # type: ignore[type-arg]
        """The buffered columns in the schema's order."""
        return [self._seq, self._time_s, self._event, self._workload_id, self._pod_index, self._node, self._gpus,
                self._gpu_model, self._tenant, self._queue, self._cluster_queue, self._priority, self._reason,
                self._message, self._flavor, self._preemptor, self._queue_position, self._queue_length]

    def _flush(self) -> None:
        if not self._pending:
            return
        arrays = [arrow_array(column, field.type)
                  for column, field in zip(self._columns(), self._schema, strict=True)]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self._schema))
        self._pending = 0
        self._new_columns()

    def close(self) -> Path:
        """Flush, close and move the file to its final name."""
        self._flush()
        self._writer.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        """Drop the temporary file (the replay failed)."""
        try:
            self._writer.close()
        finally:
            self._tmp.unlink(missing_ok=True)
