"""Reader for the generic trace schema (docs/contracts.md, DESIGN.md section 4.2).

Contract of `read_generic_trace(path, start)`:

- The file is CSV (UTF-8, header row; plain or gzip) or Parquet; one row per workload (pod
  group).
- Required columns: ``workload_id, submit_time, duration_s, gpus_per_pod``. A missing one
  raises `InputError` naming row 1 (the header) and the column. So do a missing, unreadable
  or non-UTF-8 file. Unknown extra columns are ignored; one that looks like a known column
  (``tennant``) gives a warning (`TraceLoad.warnings`), since its values would otherwise
  silently become the defaults.
- Every data row either becomes a `Workload` or a `RejectedRow` (quarantined, with the
  column and the reason), never both and never neither:
  ``len(workloads) + len(rejected) == input_rows``.
- ``submit_time`` is seconds relative to ``start`` or an ISO 8601 time (converted to seconds
  since ``start``; a naive time is read as UTC). Negative seconds or a time before ``start``
  are rejected.
- Workloads come back sorted by ``(submit_time_s, source order)``; ``Workload.source_row``
  is the row's spreadsheet line number (header = 1, first data row = 2), the same number a
  `RejectedRow` carries.
- Values must fit the event-log columns and the pipeline's timestamps: ``pods`` at most
  `MAX_PODS`, ``priority`` a 32-bit integer, CPU and memory at most `MAX_RESOURCE_PER_POD`,
  times and durations at most `MAX_SECONDS` (ten years), each checked before any arithmetic
  on it. A cell holding a list or a map (a nested Parquet column), or text holding a control
  character (an escape sequence, NUL), is rejected, not turned into text.
- ``labels`` (optional) is a JSON object of text values, the workload's pod labels and
  annotations (`scheduler.trace.labels`); a cell that is not one is rejected with the reason.

`iter_generic_trace(path, start)` is the streaming form: it reads the file in batches and
yields each batch's workloads and rejected rows in source order, so a caller that does not
keep them all reads a trace of any length in bounded memory (only the workload ids are kept,
to find duplicates). `read_generic_trace` collects the batches into one `TraceLoad`.
"""

from __future__ import annotations

import math
import reprlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from scheduler.errors import InputError
from scheduler.model.cluster import TOPOLOGY_LEVELS
from scheduler.model.workload import MILLI, DisruptionMode, OnPodLoss, PodPreemptionPolicy, Workload
from scheduler.trace.io import (
    DEFAULT_BATCH_ROWS,
    ROW_PROBLEM,
    control_character_problem,
    header_typos,
    read_table_rows,
)
from scheduler.trace.io import RowProblem as _RowProblem
from scheduler.trace.labels import parse_labels
from scheduler.trace.shape_memo import ShapeMemo

REQUIRED_COLUMNS = ("workload_id", "submit_time", "duration_s", "gpus_per_pod")
OPTIONAL_COLUMNS = (
    "pods",
    "min_count",
    "gpu_model",
    "cpu_milli_per_pod",
    "memory_mib_per_pod",
    "tenant",
    "queue",
    "priority",
    "checkpoint_interval_s",
    "topology_required",
    "topology_preferred",
    "parent_group",
    "parent_min_groups",
    "parent_topology_required",
    "kind",
    "gpu_utilization",
    "schedule_timeout_s",
    "labels",
    "disruption_mode",
    "on_pod_loss",
    "preemption_policy",
    "resource_claim_templates",
    "resource_claim",
)
COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
DEFAULT_TENANT = "default"
DEFAULT_KIND = "batch"
MAX_SECONDS = 10 * 366 * 86_400
"""Ten years: longer than any trace, short enough that every run time stays a valid date."""
MAX_PODS = 100_000
"""Pods of one group: beyond any real job, and a bound on the replay's per-pod work."""
MAX_PRIORITY = 2**31 - 1  # a Kubernetes priority is a 32-bit integer
MAX_RESOURCE_PER_POD = 2**40
"""CPU millicores or MiB of one pod: times MAX_PODS it still fits a 64-bit integer."""
MAX_GPUS_PER_POD = 2**31 - 1  # a node's GPU count is a 32-bit integer
_MAX_WHOLE = 2**53  # any whole-number cell: a float still holds it exactly; each column has a tighter bound


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """An input row refused before the replay, with the column at fault and why."""

    row: int  # spreadsheet line number: header = 1, first data row = 2
    workload_id: str | None
    field: str
    reason: str  # as rejected.csv shows it
    # For rows refused because they can never run on the cluster (`trace/checks.py`): the
    # `rejected` event row's reason code and message.
    code: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class TraceLoad:
    workloads: tuple[Workload, ...]
    rejected: tuple[RejectedRow, ...]
    input_rows: int
    warnings: tuple[str, ...] = ()  # for the console: e.g. a header column that looks misspelt


@dataclass(frozen=True, slots=True)
class TraceBatch:
    """Consecutive input rows: their workloads and rejected rows, each in source order. The
    first batch carries the file's warnings."""

    workloads: tuple[Workload, ...]
    rejected: tuple[RejectedRow, ...]
    input_rows: int
    warnings: tuple[str, ...] = ()


def read_generic_trace(path: Path, start: datetime) -> TraceLoad:
    """Read a generic-schema trace; see the module docstring for the contract."""
    accepted: list[Workload] = []
    rejected: list[RejectedRow] = []
    warnings: list[str] = []
    input_rows = 0
    for batch in iter_generic_trace(path, start):
        accepted.extend(batch.workloads)
        rejected.extend(batch.rejected)
        warnings.extend(batch.warnings)
        input_rows += batch.input_rows
    # sorted() is stable, and rows arrive in source order: ties keep source order.
    accepted.sort(key=lambda w: (w.submit_time_s, w.source_row))
    return TraceLoad(tuple(accepted), tuple(rejected), input_rows, tuple(warnings))


def iter_generic_trace(
    path: Path, start: datetime, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[TraceBatch]:
    """Stream a generic-schema trace in batches of ``batch_rows`` input rows (the last may be
    shorter). The header is checked before the first batch; duplicates are found across the
    whole file. Summed over the batches, ``workloads + rejected == input_rows``."""
    path = Path(path)
    columns, rows = read_table_rows(path, batch_rows)
    for column in REQUIRED_COLUMNS:
        if column not in columns:
            raise InputError(
                path,
                f"required column missing (the header has: {', '.join(c for c in columns if c) or 'nothing'})",
                row=1,
                field=column,
            )
    warnings = tuple(header_typos(columns, COLUMNS, path, "generic trace"))
    start_utc = _as_utc(start)
    seen_ids: dict[str, int] = {}
    model_sets: dict[str, tuple[str, ...]] = {}  # one tuple per distinct gpu_model label
    shapes = ShapeMemo(columns)
    accepted: list[Workload] = []
    rejected: list[RejectedRow] = []
    input_rows = 0
    for row_number, record in rows:
        input_rows += 1
        try:
            shape = shapes.seen(record)
            if shape is not None:
                workload = _parse_own(record, row_number, start_utc, shape)
            else:
                workload = _parse_row(record, row_number, start_utc, model_sets)
                shapes.remember(workload)
            if workload.workload_id in seen_ids:
                raise _RowProblem(
                    "workload_id",
                    f"duplicate workload_id {_shown(workload.workload_id)}, first seen on row {seen_ids[workload.workload_id]}",
                )
        except _RowProblem as problem:
            rejected.append(RejectedRow(row_number, _label(record), problem.field, problem.reason))
        else:
            seen_ids[workload.workload_id] = row_number
            accepted.append(workload)
        if input_rows == batch_rows:
            yield TraceBatch(tuple(accepted), tuple(rejected), input_rows, warnings)
            accepted, rejected, input_rows, warnings = [], [], 0, ()
    if input_rows or warnings:
        yield TraceBatch(tuple(accepted), tuple(rejected), input_rows, warnings)


def quarantine_out_of_range(load: TraceLoad) -> TraceLoad:
    """Move workloads whose values the run directory cannot hold into the rejected rows.

    The generic reader never accepts such a workload; adapters that build workloads
    themselves (openb, AAIC) go through this check so that every trace obeys the same
    limits (`MAX_PODS`, `MAX_SECONDS`, 32-bit priority, ...). Counts still add up.
    """
    kept: list[Workload] = []
    moved: list[RejectedRow] = []
    for workload in load.workloads:
        problem = _out_of_range(workload)
        if problem is None:
            kept.append(workload)
        else:
            moved.append(RejectedRow(workload.source_row, workload.workload_id, *problem))
    if not moved:
        return load
    rejected = sorted((*load.rejected, *moved), key=lambda r: r.row)
    return TraceLoad(tuple(kept), tuple(rejected), load.input_rows, load.warnings)


def _out_of_range(workload: Workload) -> tuple[str, str] | None:
    checks = (
        ("submit_time", workload.submit_time_s, 0, MAX_SECONDS),
        ("duration_s", workload.duration_s, 0, MAX_SECONDS),
        ("pods", workload.pods, 1, MAX_PODS),
        ("min_count", workload.min_count, 1, workload.pods),
        ("gpus_per_pod", workload.gpus_per_pod, 0.001, MAX_GPUS_PER_POD),
        ("cpu_milli_per_pod", workload.cpu_milli_per_pod, 0, MAX_RESOURCE_PER_POD),
        ("memory_mib_per_pod", workload.memory_mib_per_pod, 0, MAX_RESOURCE_PER_POD),
        ("priority", workload.priority, -MAX_PRIORITY, MAX_PRIORITY),
    )
    for column, value, low, high in checks:
        # An adapter's whole number may be too large for a float: compare it as it is.
        finite = isinstance(value, int) or math.isfinite(value)
        if not (finite and low <= value <= high):
            return column, f"must be between {low:,} and {high:,}, got {_show(value) if finite else value}"
    return None


# ----------------------------------------------------------------------------------- rows


def _parse_row(
    record: dict[str, Any],
    row_number: int,
    start: datetime,
    model_sets: dict[str, tuple[str, ...]] | None = None,
) -> Workload:
    if ROW_PROBLEM in record:
        raise _RowProblem("(row)", record[ROW_PROBLEM])
    workload_id, submit_time_s, duration_s = _row_identity(record, start)
    pods = _integer(record, "pods", default=1)
    if pods < 1:
        raise _RowProblem("pods", f"must be >= 1, got {pods}")
    _at_most("pods", pods, MAX_PODS, "pods in one group")
    min_count = _integer(record, "min_count", default=pods)
    if not 1 <= min_count <= pods:
        raise _RowProblem("min_count", f"must be between 1 and pods ({pods}), got {min_count}")
    gpus_per_pod = _required_number(record, "gpus_per_pod")
    # A row whose pods ask through DRA claims may count 0 GPUs (a MIG slice is no whole GPU).
    claims = bool(_shared_text(record, "resource_claim_templates") or _shared_text(record, "resource_claim"))
    if gpus_per_pod < 0 or (gpus_per_pod == 0 and not claims):
        raise _RowProblem("gpus_per_pod", f"must be > 0, got {_show(gpus_per_pod)}")
    # The bound first: 1e306 GPUs times MILLI is no longer a finite number.
    _at_most("gpus_per_pod", gpus_per_pod, MAX_GPUS_PER_POD, "GPUs")
    if gpus_per_pod >= 1 and not float(gpus_per_pod).is_integer():
        raise _RowProblem(
            "gpus_per_pod",
            f"must be a whole number of GPUs when >= 1 (fractions share one device), got {_show(gpus_per_pod)}",
        )
    if round(gpus_per_pod * MILLI) < 1 and not (claims and gpus_per_pod == 0):
        raise _RowProblem("gpus_per_pod", f"must be at least 0.001, got {_show(gpus_per_pod)}")
    gpu_label = _text(record.get("gpu_model"), "gpu_model")
    gpu_models = _model_set(gpu_label, model_sets) if gpu_label else ()
    cpu = _integer(record, "cpu_milli_per_pod", default=0)
    memory = _integer(record, "memory_mib_per_pod", default=0)
    for name, value in (("cpu_milli_per_pod", cpu), ("memory_mib_per_pod", memory)):
        if value < 0:
            raise _RowProblem(name, f"must be >= 0, got {value}")
        _at_most(name, value, MAX_RESOURCE_PER_POD, "per pod")
    checkpoint = _number(record, "checkpoint_interval_s", required=False)
    if checkpoint is not None and checkpoint <= 0:
        raise _RowProblem("checkpoint_interval_s", f"must be > 0 when given, got {_show(checkpoint)}")
    if checkpoint is not None:
        _at_most("checkpoint_interval_s", checkpoint, MAX_SECONDS, "s (ten years)")
    schedule_timeout = _number(record, "schedule_timeout_s", required=False)
    if schedule_timeout is not None:
        if not schedule_timeout > 0:
            raise _RowProblem("schedule_timeout_s", f"must be > 0 when given, got {_show(schedule_timeout)}")
        _at_most("schedule_timeout_s", schedule_timeout, MAX_SECONDS, "s (ten years)")
    priority = _integer(record, "priority", default=0)
    if abs(priority) > MAX_PRIORITY:
        raise _RowProblem("priority", f"must be a 32-bit integer (|priority| <= {MAX_PRIORITY}), got {priority}")
    return Workload(
        workload_id=workload_id,
        submit_time_s=submit_time_s,
        duration_s=duration_s,
        pods=pods,
        min_count=min_count,
        gpus_per_pod=float(gpus_per_pod),
        gpu_models=gpu_models,
        cpu_milli_per_pod=cpu,
        memory_mib_per_pod=memory,
        # Interned: a few team, queue and kind names repeat on millions of rows.
        tenant=_shared_text(record, "tenant") or DEFAULT_TENANT,
        queue=_shared_text(record, "queue"),
        priority=priority,
        checkpoint_interval_s=None if checkpoint is None else float(checkpoint),
        topology_required=_topology(record, "topology_required"),
        topology_preferred=_topology(record, "topology_preferred"),
        parent_group=_shared_text(record, "parent_group"),
        parent_min_groups=_parent_min_groups(record),
        parent_topology_required=_topology(record, "parent_topology_required"),
        kind=_shared_text(record, "kind") or DEFAULT_KIND,
        gpu_utilization=_fraction(record, "gpu_utilization"),
        schedule_timeout_s=None if schedule_timeout is None else float(schedule_timeout),
        labels=parse_labels(record.get("labels")),
        source_row=row_number,
        disruption_mode=_choice(record, "disruption_mode", DisruptionMode) or DisruptionMode.SINGLE,
        on_pod_loss=_choice(record, "on_pod_loss", OnPodLoss),
        preemption_policy=(_choice(record, "preemption_policy", PodPreemptionPolicy)
                           or PodPreemptionPolicy.PREEMPT_LOWER_PRIORITY),
        # DRA: ResourceClaimTemplate names (`|` between them), one claim per pod from each, and
        # the PodGroup's shared ResourceClaim (docs/dra.md); resolved against the DRA inputs.
        claim_templates=_names(_shared_text(record, "resource_claim_templates")),
        shared_claim=_shared_text(record, "resource_claim"),
    )


def _row_identity(record: dict[str, Any], start: datetime) -> tuple[str, float, float]:
    """A row's own columns that come first: its id, submission (seconds) and duration."""
    workload_id = _text(record.get("workload_id"), "workload_id")
    if workload_id is None:
        raise _RowProblem("workload_id", "missing: every row needs a workload_id")
    submit_time_s = _submit_seconds(record.get("submit_time"), start)
    duration_s = _required_number(record, "duration_s")
    if duration_s <= 0:
        raise _RowProblem("duration_s", f"must be > 0, got {_show(duration_s)}")
    _at_most("duration_s", duration_s, MAX_SECONDS, "s (ten years)")
    return workload_id, submit_time_s, float(duration_s)


def _parse_own(record: dict[str, Any], row_number: int, start: datetime, shape: Workload) -> Workload:
    """A row of a shape that parsed cleanly before (`ShapeMemo`): its own columns checked in
    `_parse_row`'s order, everything else `shape`'s."""
    if ROW_PROBLEM in record:
        raise _RowProblem("(row)", record[ROW_PROBLEM])
    workload_id, submit_time_s, duration_s = _row_identity(record, start)
    s = shape
    return Workload(
        workload_id, submit_time_s, duration_s, s.pods, s.min_count, s.gpus_per_pod, s.gpu_models,
        s.cpu_milli_per_pod, s.memory_mib_per_pod, s.tenant, s.queue, s.priority, s.checkpoint_interval_s,
        s.topology_required, s.topology_preferred, s.parent_group, s.parent_min_groups,
        s.parent_topology_required, s.schedule_timeout_s, s.kind, _fraction(record, "gpu_utilization"),
        parse_labels(record.get("labels")), row_number, s.disruption_mode, s.on_pod_loss, s.preemption_policy,
        s.claim_templates, s.shared_claim,
    )


def _names(text: str | None) -> tuple[str, ...]:
    """Names separated by `|` (empty: none)."""
    return tuple(name.strip() for name in text.split("|") if name.strip()) if text else ()


_Choice = TypeVar("_Choice", DisruptionMode, OnPodLoss, PodPreemptionPolicy)


def _choice(record: dict[str, Any], column: str, values: type[_Choice]) -> _Choice | None:
    """One of an enumeration's values (any case); empty is None."""
    text = _shared_text(record, column)
    if text is None:
        return None
    try:
        return values(text.lower())
    except ValueError:
        raise _RowProblem(column, f"must be {' or '.join(str(v.value) for v in values)}, got {_shown(text)}") from None


# ------------------------------------------------------------------------------ values


def _parent_min_groups(record: dict[str, Any]) -> int | None:
    """CompositePodGroup quorum: how many child groups must be placeable together."""
    if _text(record.get("parent_min_groups"), "parent_min_groups") is None:
        return None
    value = _integer(record, "parent_min_groups", default=0)
    if value < 1:
        raise _RowProblem("parent_min_groups", f"must be >= 1 when given, got {value}")
    _at_most("parent_min_groups", value, MAX_PODS, "groups")
    if _text(record.get("parent_group"), "parent_group") is None:
        raise _RowProblem("parent_min_groups", "needs a parent_group")
    return value


def _text(value: Any, column: str = "(row)") -> str | None:
    """Strip text; empty or missing is None. A list or map (nested Parquet), or text with a
    control character (a terminal escape sequence, NUL), is a problem."""
    if type(value) is str:  # every CSV cell: the fast path, millions of times per trace
        value = value.strip()
        if value and not value.isprintable():
            _refuse_control_characters(value, column)
        return value or None
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise _RowProblem(column, f"not UTF-8 text: {_shown(value)}") from None
    elif isinstance(value, list | tuple | dict):
        raise _RowProblem(column, f"must be one value, got a {type(value).__name__}: {_shown(value)}")
    text = str(value).strip()
    if text and not text.isprintable():
        _refuse_control_characters(text, column)
    return text or None


def _refuse_control_characters(text: str, column: str) -> None:
    problem = control_character_problem(text)
    if problem is not None:
        raise _RowProblem(column, problem)


def _shared_text(record: dict[str, Any], column: str) -> str | None:
    text = _text(record.get(column), column)
    return None if text is None else sys.intern(text)


def _model_set(label: str, cache: dict[str, tuple[str, ...]] | None) -> tuple[str, ...]:
    """``A|B`` as a tuple of model names; one shared tuple per distinct label."""
    if cache is not None and label in cache:
        return cache[label]
    models = tuple(sys.intern(m.strip()) for m in label.split("|") if m.strip())
    if cache is not None:
        cache[label] = models
    return models


def _label(record: dict[str, Any]) -> str | None:
    """The row's workload_id for a rejected row, whatever the cell holds."""
    try:
        return _text(record.get("workload_id"))
    except _RowProblem:
        return _shown(record.get("workload_id"))


def _shown(value: Any) -> str:
    """A value for a message, cut short: a hostile cell must not make a huge error line."""
    return reprlib.repr(value)


def _at_most(column: str, value: float, limit: float, unit: str) -> None:
    if value > limit:
        raise _RowProblem(column, f"must be at most {limit:,} {unit}, got {_show(value)}")


def _show(value: float) -> str:
    if isinstance(value, int):  # exact, and never converted to a float that cannot hold it
        return str(value) if value.bit_length() <= 128 else f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    if float(value).is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))  # 1e+306, not its 307 digits


def _number(record: dict[str, Any], column: str, *, required: bool) -> float | None:
    value = record.get(column)
    if type(value) is str:  # every CSV cell: the fast path
        value = value.strip()
        if value:
            try:
                number = float(value)
            except ValueError:
                raise _RowProblem(column, f"not a number: {_shown(value)}") from None
            if not math.isfinite(number):
                raise _RowProblem(column, f"not a finite number: {_shown(value)}")
            return number
    if value is None or value == "":
        if required:
            raise _RowProblem(column, "missing: a number is required")
        return None
    if isinstance(value, bool):
        raise _RowProblem(column, f"not a number: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _RowProblem(column, f"not a number: {_shown(value)}") from None
    if not math.isfinite(number):
        raise _RowProblem(column, f"not a finite number: {_shown(value)}")
    return number


def _required_number(record: dict[str, Any], column: str) -> float:
    number = _number(record, column, required=True)
    assert number is not None  # required: _number raised otherwise
    return number


def _integer(record: dict[str, Any], column: str, *, default: int) -> int:
    number = _number(record, column, required=False)
    if number is None:
        return default
    if not number.is_integer():
        raise _RowProblem(column, f"must be a whole number, got {_show(number)}")
    if abs(number) > _MAX_WHOLE:  # before it becomes a 300-digit integer
        raise _RowProblem(column, f"must be between -{_MAX_WHOLE:,} and {_MAX_WHOLE:,}, got {_show(number)}")
    return int(number)


def _fraction(record: dict[str, Any], column: str) -> float | None:
    """A share between 0 and 1, or None when the cell is empty (not measured, never zero)."""
    value = _number(record, column, required=False)
    if value is not None and not 0 <= value <= 1:
        raise _RowProblem(column, f"must be between 0 and 1 (a fraction of the running time), got {_show(value)}")
    return value


def _topology(record: dict[str, Any], column: str) -> str | None:
    level = _text(record.get(column), column)
    if level is None:
        return None
    if level not in TOPOLOGY_LEVELS:
        raise _RowProblem(column, f"must be one of {', '.join(TOPOLOGY_LEVELS)}, got {_shown(level)}")
    return next(known for known in TOPOLOGY_LEVELS if known == level)  # the shared constant


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _submit_seconds(value: Any, start: datetime) -> float:
    """Seconds since ``start``: a number as is, an ISO 8601 time converted."""
    column = "submit_time"
    if isinstance(value, datetime):
        moment: datetime | None = value
    else:
        text = _text(value, column)
        if text is None:
            raise _RowProblem(column, "missing: seconds since the start or an ISO 8601 time")
        moment = None
        try:
            seconds = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise _RowProblem(
                    column, f"neither seconds nor an ISO 8601 time: {_shown(text)}"
                ) from None
        if moment is None:
            if not math.isfinite(seconds):
                raise _RowProblem(column, f"not a finite number: {_shown(text)}")
            if seconds < 0:
                raise _RowProblem(column, f"must be >= 0 seconds after the start, got {_show(seconds)}")
            _at_most(column, seconds, MAX_SECONDS, "s after the start (ten years)")
            return seconds
    assert moment is not None  # a number returned above
    try:
        moment_utc = _as_utc(moment)
    except OverflowError:  # e.g. 0001-01-01T00:00+14:00 is before year 1 in UTC
        raise _RowProblem(column, f"{_shown(str(moment))} is out of range") from None
    offset = (moment_utc - start).total_seconds()
    if offset < 0:
        raise _RowProblem(
            column,
            f"{moment_utc.isoformat()} is before the run start {start.isoformat()}",
        )
    _at_most(column, offset, MAX_SECONDS, "s after the start (ten years)")
    return offset
