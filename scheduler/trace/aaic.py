"""Adapter for the AAIC batch-job log (AIST AI Cloud, 2017): multi-node (gang) GPU jobs.

The quarter files (``aaicwl-2017Q3.csv.gz``, ``aaicwl-2017Q4.csv.gz``, gzip or plain CSV,
read as a stream) have a header and ``", "`` (comma, space) between values::

    id, user, group, queue, nodes, gpus, walltime_req, termcode,
    time_submit, time_start, time_end, waittime, walltime

`read_aaic_jobs(path)` parses every row into an `AaicJob` (all columns kept, including
``walltime_req``, ``termcode`` and the recorded ``waittime``, for the wait comparison).
`read_aaic_trace(path, start)` maps the jobs onto the generic schema (docs/traces.md):

  ==================  ==========================================================
  generic column      AAIC source
  ==================  ==========================================================
  workload_id         ``aaic-<id>``
  submit_time         ``time_submit`` (Unix seconds, UTC) minus ``start``
  duration_s          ``time_end - time_start`` (the recorded run time)
  pods, min_count     ``nodes``, ``nodes`` (gang: every node's pod runs together)
  gpus_per_pod        ``gpus`` (GPUs used on each node)
  tenant              ``group-<group>`` (the cost centre)
  queue               ``q<queue>`` (a LocalQueue per AAIC queue)
  priority            0 (the log has no priority; its queues share one pool, FCFS)
  kind                ``termcode`` spelled out: ok, failed, walltime-exceeded,
                      cancelled-by-user, cancelled-by-system
  ==================  ==========================================================

Unix times map to UTC. Without ``--start`` a replay starts at 00:00 UTC of the day of the
first submission (`natural_start`); rows submitted before ``start`` are rejected. A job
whose ``time_end`` equals ``time_start`` (it ran 0 s) cannot be replayed and is rejected
with the reason, like any unparsable row: ``len(workloads) + len(rejected) == input_rows``.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scheduler.errors import InputError
from scheduler.model.cluster import Cluster, Node
from scheduler.model.workload import Workload
from scheduler.trace.generic import RejectedRow, TraceLoad
from scheduler.trace.io import RowProblem as _RowProblem
from scheduler.trace.io import not_utf8_error, open_csv_lines

COLUMNS = (
    "id", "user", "group", "queue", "nodes", "gpus", "walltime_req", "termcode",
    "time_submit", "time_start", "time_end", "waittime", "walltime",
)
TERMCODES = {0: "ok", 1: "failed", 2: "walltime-exceeded", 3: "cancelled-by-user", 4: "cancelled-by-system"}
# The upstream README's cluster: 40 of its 50 nodes under the batch scheduler, 8 GPUs,
# 20 cores and 256 GiB each. The GPU model is not named; 2017 hardware of that class is
# P100 (an assumption, said so in docs/traces.md).
DEFAULT_NODES = 40
DEFAULT_GPUS_PER_NODE = 8
DEFAULT_GPU_MODEL = "P100"
DEFAULT_CPU_MILLI = 20_000
DEFAULT_MEMORY_MIB = 256 * 1024
LAST_UNIX_TIME = 4_102_444_800  # 2100-01-01T00:00:00Z: later times are not a job log
MAX_WHOLE = 2**53  # any column: checked before any arithmetic (a float still holds it exactly)


@dataclass(frozen=True, slots=True)
class AaicJob:
    """One row of the log, every column as recorded."""

    id: int
    user: int
    group: int
    queue: int
    nodes: int
    gpus: int
    walltime_req: int
    termcode: int
    time_submit: int
    time_start: int
    time_end: int
    waittime: int
    walltime: int
    row: int

    @property
    def workload_id(self) -> str:
        return f"aaic-{self.id}"

    @property
    def tenant(self) -> str:
        return f"group-{self.group}"

    @property
    def local_queue(self) -> str:
        return f"q{self.queue}"

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus


@dataclass(frozen=True, slots=True)
class AaicJobs:
    jobs: tuple[AaicJob, ...]
    rejected: tuple[RejectedRow, ...]
    input_rows: int


def read_aaic_jobs(path: Path) -> AaicJobs:
    """Every row of an AAIC quarter file as an `AaicJob` or a rejected row, in file order."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a CSV file")
    handle, lines = open_csv_lines(path)  # gzip (by its magic bytes) is decompressed as a stream
    with handle:
        return _read_jobs(path, csv.reader(lines, skipinitialspace=True))


def _read_jobs(path: Path, reader: Iterator[list[str]]) -> AaicJobs:
    try:
        header = [name.strip() for name in next(reader)]
    except StopIteration:
        raise InputError(path, "empty file: expected a header row", row=1) from None
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None
    except (OSError, EOFError) as exc:
        raise InputError(path, f"not a readable gzip file: {exc}") from None
    for column in COLUMNS:
        if column not in header:
            raise InputError(path, "required column of an AAIC log missing", row=1, field=column)
    position = {name: header.index(name) for name in COLUMNS}
    jobs: list[AaicJob] = []
    rejected: list[RejectedRow] = []
    seen: dict[int, int] = {}
    input_rows = 0
    row_number = 1
    try:
        for values in reader:
            row_number += 1
            if not values or all(not v.strip() for v in values):
                continue
            input_rows += 1
            raw_id = values[position["id"]].strip() if len(values) > position["id"] else None
            label = f"aaic-{raw_id}" if raw_id else None
            try:
                job = _parse_job(values, position, len(header), row_number)
                if job.id in seen:
                    raise _RowProblem("id", f"duplicate id {job.id}, first seen on row {seen[job.id]}")
            except _RowProblem as problem:
                rejected.append(RejectedRow(row_number, label, problem.field, problem.reason))
                continue
            seen[job.id] = row_number
            jobs.append(job)
    except csv.Error as exc:
        raise InputError(path, f"malformed CSV: {exc}", row=row_number + 1) from None
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None
    except (OSError, EOFError) as exc:  # a truncated or damaged gzip stream
        raise InputError(path, f"not a readable gzip file: {exc}", row=row_number + 1) from None
    return AaicJobs(tuple(jobs), tuple(rejected), input_rows)


def natural_start(jobs: AaicJobs) -> datetime:
    """00:00 UTC of the day of the first submission (the default run start)."""
    first = min((job.time_submit for job in jobs.jobs), default=0)
    moment = datetime.fromtimestamp(first, tz=UTC)
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)


def read_aaic_trace(path: Path, start: datetime | None) -> tuple[TraceLoad, datetime]:
    """The log as generic workloads, and the run start used (``start`` or the natural one)."""
    parsed = read_aaic_jobs(path)
    anchor = natural_start(parsed) if start is None else start.astimezone(UTC)
    return aaic_jobs_to_trace(parsed, anchor), anchor


def aaic_jobs_to_trace(parsed: AaicJobs, start: datetime) -> TraceLoad:
    epoch = start.timestamp()
    workloads: list[Workload] = []
    rejected = list(parsed.rejected)
    for job in parsed.jobs:
        try:
            workloads.append(_job_to_workload(job, epoch, start))
        except _RowProblem as problem:
            rejected.append(RejectedRow(job.row, job.workload_id, problem.field, problem.reason))
    workloads.sort(key=lambda w: (w.submit_time_s, w.source_row))
    rejected.sort(key=lambda r: r.row)
    return TraceLoad(tuple(workloads), tuple(rejected), parsed.input_rows)


def default_cluster(nodes: int = DEFAULT_NODES, gpu_model: str = DEFAULT_GPU_MODEL) -> Cluster:
    """The log's documented cluster: ``nodes`` nodes of 8 GPUs, 20 cores, 256 GiB."""
    if nodes < 1:
        raise InputError("--nodes", f"must be >= 1, got {nodes}")
    width = max(2, len(str(nodes - 1)))
    return Cluster(
        tuple(
            Node(f"aaic-{i:0{width}d}", gpu_model, DEFAULT_GPUS_PER_NODE, DEFAULT_CPU_MILLI, DEFAULT_MEMORY_MIB)
            for i in range(nodes)
        )
    )


# ------------------------------------------------------------------------------- rows


def _parse_job(values: list[str], position: dict[str, int], width: int, row: int) -> AaicJob:
    if len(values) > width:
        raise _RowProblem("(row)", f"{len(values)} values but the header has {width} columns")
    numbers: dict[str, int] = {}
    for column in COLUMNS:
        index = position[column]
        text = values[index].strip() if index < len(values) else ""
        if not text:
            raise _RowProblem(column, "missing: a whole number is required")
        try:
            number = int(text)  # the fast path: every cell of the real logs
        except ValueError:
            number = _whole_from_text(column, text)
        if number < 0:
            raise _RowProblem(column, f"must be >= 0, got {text}")
        if number > MAX_WHOLE:  # before any arithmetic on it
            raise _RowProblem(column, f"must be at most {MAX_WHOLE:,}, got a number of {len(text)} characters")
        if column.startswith("time_") and number >= LAST_UNIX_TIME:
            raise _RowProblem(column, f"must be a Unix time before 2100-01-01, got {text}")
        numbers[column] = number
    if numbers["nodes"] < 1:
        raise _RowProblem("nodes", f"must be >= 1, got {numbers['nodes']}")
    if not 1 <= numbers["gpus"] <= DEFAULT_GPUS_PER_NODE:
        raise _RowProblem("gpus", f"must be between 1 and {DEFAULT_GPUS_PER_NODE} GPUs per node, got {numbers['gpus']}")
    if numbers["termcode"] not in TERMCODES:
        raise _RowProblem("termcode", f"must be one of {', '.join(map(str, TERMCODES))}, got {numbers['termcode']}")
    if numbers["time_start"] < numbers["time_submit"]:
        raise _RowProblem("time_start", "before time_submit")
    if numbers["time_end"] < numbers["time_start"]:
        raise _RowProblem("time_end", "before time_start")
    return AaicJob(row=row, **numbers)


def _whole_from_text(column: str, text: str) -> int:
    """A whole number written as a float ("3.0", "1e3"), or the row's problem."""
    try:
        number = float(text)
    except ValueError:
        raise _RowProblem(column, f"not a number: {text!r}") from None
    if not math.isfinite(number) or not number.is_integer():
        raise _RowProblem(column, f"must be a whole number, got {text!r}")
    return int(number)


def _job_to_workload(job: AaicJob, epoch: float, start: datetime) -> Workload:
    duration = job.time_end - job.time_start
    if duration <= 0:
        raise _RowProblem("time_end", "the job ran 0 s (time_end = time_start): nothing to replay")
    submit = job.time_submit - epoch
    if submit < 0:
        moment = (start + timedelta(seconds=submit)).isoformat()
        raise _RowProblem("time_submit", f"{moment} is before the run start {start.isoformat()}")
    return Workload(
        workload_id=job.workload_id,
        submit_time_s=float(submit),
        duration_s=float(duration),
        pods=job.nodes,
        min_count=job.nodes,
        gpus_per_pod=float(job.gpus),
        tenant=job.tenant,
        queue=job.local_queue,
        priority=0,
        kind=TERMCODES[job.termcode],
        source_row=job.row,
    )
