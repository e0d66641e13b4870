"""`replay --format`: which adapter reads a trace, and `auto` detection from its header.

Detection reads the header row only (its first 64 KiB at most, decompressed on the fly when
the file is gzip: never the whole file, which a gzip bomb would blow up a thousandfold): the generic
schema has ``workload_id``; an openb pod list has ``name, num_gpu, gpu_milli``; an AAIC
log has ``nodes, gpus, time_submit, waittime``. Parquet files are generic. Anything else
is an `InputError` naming the header, so a wrong file never replays silently as nothing.

`load_trace` returns the workloads and the run start: relative times (generic, openb)
take ``start`` (``--start``, else the default); Unix times (AAIC) map to UTC and, without
``--start``, start at 00:00 UTC of the first submission's day.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from scheduler.errors import InputError
from scheduler.trace.aaic import read_aaic_trace
from scheduler.trace.generic import TraceLoad, quarantine_out_of_range, read_generic_trace
from scheduler.trace.io import first_csv_line, is_parquet
from scheduler.trace.openb import read_openb_trace

TRACE_FORMATS = ("auto", "generic", "openb", "aaic")
_SIGNATURES = (
    ("generic", ("workload_id",)),
    ("openb", ("name", "num_gpu", "gpu_milli")),
    ("aaic", ("nodes", "gpus", "time_submit", "waittime")),
)


def detect_trace_format(path: Path) -> str:
    """``generic``, ``openb`` or ``aaic`` from the file's header row."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a CSV or Parquet file")
    if is_parquet(path):
        return "generic"
    first = first_csv_line(path)
    header = {value.strip() for value in first or ()}
    for name, columns in _SIGNATURES:
        if all(column in header for column in columns):
            return name
    shown = ", ".join(value.strip() for value in (first or ())[:8]) or "nothing"
    raise InputError(
        path,
        f"unknown trace format (header: {shown}); give --format generic, openb or aaic",
        row=1,
    )


def load_trace(
    path: Path, trace_format: str, start: datetime | None, default_start: datetime
) -> tuple[TraceLoad, datetime, str]:
    """Read ``path`` with the adapter of ``trace_format`` (``auto`` detects it).

    Returns the loaded trace, the run start and the format used. ``start`` is the user's
    ``--start`` (None when not given)."""
    if trace_format not in TRACE_FORMATS:
        raise InputError("--format", f"unknown trace format {trace_format!r}; known: {', '.join(TRACE_FORMATS)}")
    chosen = detect_trace_format(path) if trace_format == "auto" else trace_format
    if chosen == "aaic":
        loaded, anchor = read_aaic_trace(path, start)
        return quarantine_out_of_range(loaded), anchor, chosen
    anchor = start or default_start
    if chosen == "openb":
        return quarantine_out_of_range(read_openb_trace(path, anchor)), anchor, chosen
    return read_generic_trace(path, anchor), anchor, chosen
