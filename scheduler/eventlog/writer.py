"""Append-only event-log writer: buffered rows → Parquet row groups → atomic rename.

Rows are buffered column by column and flushed as one row group every `batch_rows` rows,
so a long replay keeps bounded memory. The file is written under a temporary name in the
same directory and renamed into place by `close()`: a killed replay never leaves a
half-written `events.parquet` behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.eventlog.schema import EVENT_SCHEMA, METADATA_KEY, SCHEMA_VERSION, EventType

_COLUMNS = EVENT_SCHEMA.names


class EventLogWriter:
    def __init__(self, path: Path, batch_rows: int = 65_536) -> None:
        self.path = path
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        schema = EVENT_SCHEMA.with_metadata({METADATA_KEY: SCHEMA_VERSION.encode()})
        self._writer = pq.ParquetWriter(self._tmp, schema, compression="zstd")
        self._schema = schema
        self._batch_rows = batch_rows
        self._buffer: dict[str, list[object]] = {name: [] for name in _COLUMNS}
        self.rows = 0
        self.counts: dict[str, int] = {}

    def emit(
        self,
        time_s: float,
        event: EventType,
        workload_id: str,
        *,
        pod_index: int | None = None,
        node: str | None = None,
        gpus: float | None = None,
        gpu_model: str | None = None,
        tenant: str | None = None,
        queue: str | None = None,
        cluster_queue: str | None = None,
        priority: int | None = None,
        reason: str | None = None,
        message: str | None = None,
        flavor: str | None = None,
        preemptor: str | None = None,
        queue_position: int | None = None,
        queue_length: int | None = None,
    ) -> None:
        buffer = self._buffer
        buffer["seq"].append(self.rows)
        buffer["time_s"].append(float(time_s))
        buffer["event"].append(event.value)
        buffer["workload_id"].append(workload_id)
        buffer["pod_index"].append(pod_index)
        buffer["node"].append(node)
        buffer["gpus"].append(gpus)
        buffer["gpu_model"].append(gpu_model)
        buffer["tenant"].append(tenant)
        buffer["queue"].append(queue)
        buffer["cluster_queue"].append(cluster_queue)
        buffer["priority"].append(priority)
        buffer["reason"].append(reason)
        buffer["message"].append(message)
        buffer["flavor"].append(flavor)
        buffer["preemptor"].append(preemptor)
        buffer["queue_position"].append(queue_position)
        buffer["queue_length"].append(queue_length)
        self.rows += 1
        self.counts[event.value] = self.counts.get(event.value, 0) + 1
        if len(buffer["seq"]) >= self._batch_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer["seq"]:
            return
        table = pa.Table.from_pydict(self._buffer, schema=self._schema)
        self._writer.write_table(table)
        self._buffer = {name: [] for name in _COLUMNS}

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
