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
    """Rows are kept as tuples in the schema's column order and turned into columns once per
    row group (`zip(*rows)`): a row costs one tuple, not one append per column."""

    def __init__(self, path: Path, batch_rows: int = 65_536) -> None:
        self.path = path
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        schema = EVENT_SCHEMA.with_metadata({METADATA_KEY: SCHEMA_VERSION.encode()})
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._schema = schema
        self._batch_rows = batch_rows
        self.rows = 0
        self.counts: dict[str, int] = {}
        self._rows: list[tuple[object, ...]] = []

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
        value = event.value
        self._rows.append((self.rows, float(time_s), value, workload_id, pod_index, node, gpus, gpu_model, tenant,
                           queue, cluster_queue, priority, reason, message, flavor, preemptor, queue_position,
                           queue_length))
        self.rows += 1
        counts = self.counts
        counts[value] = counts.get(value, 0) + 1
        if len(self._rows) >= self._batch_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        columns = zip(*self._rows, strict=True)
        arrays = [pa.array(column, type=field.type) for column, field in zip(columns, self._schema, strict=True)]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self._schema))
        self._rows = []

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
