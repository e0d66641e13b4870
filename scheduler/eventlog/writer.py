"""Append-only event-log writer: buffered rows → Parquet row groups → atomic rename.

Rows are buffered column by column and flushed as one row group every `batch_rows` rows,
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

_COLUMNS = EVENT_SCHEMA.names


_OPTIONAL = EVENT_SCHEMA.names[4:]


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
    def __init__(self, path: Path, batch_rows: int = 65_536) -> None:
        self.path = path
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        schema = EVENT_SCHEMA.with_metadata({METADATA_KEY: SCHEMA_VERSION.encode()})
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._schema = schema
        self._batch_rows = batch_rows
        self.rows = 0
        self.counts: dict[str, int] = {}
        self._new_buffer()

    def _new_buffer(self) -> None:
        self._buffer: dict[str, list[object]] = {name: [] for name in _COLUMNS}
        # Every row appends to every column: the bound appends are looked up once per batch.
        self._seq, self._time, self._event, self._workload = (
            self._buffer[name].append for name in ("seq", "time_s", "event", "workload_id"))
        self._optional = [(name, self._buffer[name].append) for name in _OPTIONAL]

    def emit(self, time_s: float, event: EventType, workload_id: str, **fields: Unpack[EventFields]) -> None:
        self._seq(self.rows)
        self._time(float(time_s))
        self._event(event.value)
        self._workload(workload_id)
        get = fields.get
        for name, append in self._optional:
            append(get(name))
        self.rows += 1
        self.counts[event.value] = self.counts.get(event.value, 0) + 1
        if len(self._buffer["seq"]) >= self._batch_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer["seq"]:
            return
        table = pa.Table.from_pydict(self._buffer, schema=self._schema)
        self._writer.write_table(table)
        self._new_buffer()

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
