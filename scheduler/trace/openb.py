"""Adapter for the Alibaba cluster-trace-gpu-v2023 ("openb") pod lists.

The pod lists (``openb_pod_list_*.csv``) have one row per pod::

    name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase,
    creation_time, deletion_time, scheduled_time

(the ``multigpu`` variants have only the first five columns). Two readers:

- `read_openb_pods(path)` parses every row into an `OpenbPod` (the request shape, the
  constraint and the times as they are), for the FGD experiment that places pods one by one
  without time. It keeps CPU-only pods (``num_gpu = 0``).
- `read_openb_trace(path, start)` maps the pods onto the generic schema for `replay`
  (column mapping in docs/traces.md):

  ==================  =============================================================
  generic column      openb source
  ==================  =============================================================
  workload_id         ``name``
  submit_time         ``creation_time`` (seconds after ``--start``)
  duration_s          ``deletion_time - scheduled_time`` (``- creation_time`` for a pod
                      that was never scheduled: the time it existed)
  pods, min_count     1, 1 (the trace has no gang structure)
  gpus_per_pod        ``gpu_milli / 1000`` when ``num_gpu = 1`` (GPU sharing),
                      else ``num_gpu`` (whole GPUs; ``gpu_milli`` must then be 1000)
  gpu_model           ``gpu_spec`` (``A|B`` alternatives, empty = any model)
  cpu/memory          ``cpu_milli``, ``memory_mib``
  priority            ``qos``: Guaranteed 300, LS 200, Burstable 100, BE 0
  kind                ``qos`` spelled out (latency-sensitive, best-effort, …)
  tenant              ``openb`` (the trace has no team)
  ==================  =============================================================

Every data row becomes a workload or a `RejectedRow` naming the column and the reason:
``len(workloads) + len(rejected) == input_rows``. Numbers are bounded before any arithmetic
(`MAX_WHOLE`), text holding a control character is rejected, and a header column that looks
like a known one gives a warning (`TraceLoad.warnings`). Rows the replay cannot map are rejected
there: CPU-only pods (the replay accounts GPU workloads only), rows without times (the
multigpu files), a zero or negative lifetime.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.model.workload import MILLI, Workload
from scheduler.trace.generic import MAX_SECONDS, RejectedRow, TraceLoad
from scheduler.trace.io import ROW_PROBLEM, control_character_problem, header_typos, read_table_rows
from scheduler.trace.io import RowProblem as _RowProblem

POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
OPTIONAL_COLUMNS = ("gpu_spec", "qos", "pod_phase", *TIME_COLUMNS)
QOS_PRIORITY = {"Guaranteed": 300, "LS": 200, "Burstable": 100, "BE": 0}
QOS_KIND = {
    "Guaranteed": "guaranteed",
    "LS": "latency-sensitive",
    "Burstable": "burstable",
    "BE": "best-effort",
}
OPENB_TENANT = "openb"
MAX_WHOLE = 2**40
"""Any whole number of a pod row (millicores, MiB, GPUs, seconds), checked before any
arithmetic on it: far above any real pod."""


@dataclass(frozen=True, slots=True)
class OpenbPod:
    """One pod row, as the trace states it (times in seconds from the trace start)."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int  # per GPU, 1..1000; 0 for a CPU-only pod
    gpu_models: tuple[str, ...]
    qos: str | None
    creation_time: int | None
    deletion_time: int | None
    scheduled_time: int | None
    row: int

    @property
    def total_gpu_milli(self) -> int:
        """GPU demand of the pod in milli-GPUs: ``num_gpu * gpu_milli``."""
        return self.num_gpu * self.gpu_milli

    @property
    def gpus_per_pod(self) -> float:
        return self.gpu_milli / MILLI if self.num_gpu == 1 else float(self.num_gpu)


@dataclass(frozen=True, slots=True)
class OpenbPodList:
    pods: tuple[OpenbPod, ...]
    rejected: tuple[RejectedRow, ...]
    input_rows: int
    warnings: tuple[str, ...] = ()


def read_openb_pods(path: Path) -> OpenbPodList:
    """Every row of an openb pod list as an `OpenbPod` or a rejected row, in file order."""
    path = Path(path)
    columns, rows = read_table_rows(path)
    for column in POD_COLUMNS:
        if column not in columns:
            raise InputError(path, "required column of an openb pod list missing", row=1, field=column)
    warnings = tuple(header_typos(columns, (*POD_COLUMNS, *OPTIONAL_COLUMNS), path, "openb pod list"))
    pods: list[OpenbPod] = []
    rejected: list[RejectedRow] = []
    seen: dict[str, int] = {}
    input_rows = 0
    for row_number, record in rows:
        input_rows += 1
        name = _label(record.get("name"))
        try:
            pod = _parse_pod(record, row_number)
            if pod.name in seen:
                raise _RowProblem("name", f"duplicate pod name {pod.name!r}, first seen on row {seen[pod.name]}")
        except _RowProblem as problem:
            rejected.append(RejectedRow(row_number, name, problem.field, problem.reason))
            continue
        seen[pod.name] = row_number
        pods.append(pod)
    return OpenbPodList(tuple(pods), tuple(rejected), input_rows, warnings)


def read_openb_trace(path: Path, start: datetime) -> TraceLoad:
    """An openb pod list as generic workloads for `replay`. The trace's times are seconds
    after its own start, which is mapped to ``start`` (the run start): they are kept as
    they are, so ``start`` only names the moment (the run's ``run.json``)."""
    parsed = read_openb_pods(path)
    workloads: list[Workload] = []
    rejected = list(parsed.rejected)
    for pod in parsed.pods:
        try:
            workloads.append(_pod_to_workload(pod))
        except _RowProblem as problem:
            rejected.append(RejectedRow(pod.row, pod.name, problem.field, problem.reason))
    workloads.sort(key=lambda w: (w.submit_time_s, w.source_row))
    rejected.sort(key=lambda r: r.row)
    return TraceLoad(tuple(workloads), tuple(rejected), parsed.input_rows, parsed.warnings)


# ------------------------------------------------------------------------------- rows


def _parse_pod(record: dict[str, Any], row: int) -> OpenbPod:
    if ROW_PROBLEM in record:
        raise _RowProblem("(row)", record[ROW_PROBLEM])
    name = _text(record.get("name"), "name")
    if name is None:
        raise _RowProblem("name", "missing: every pod needs a name")
    cpu = _required_whole(record, "cpu_milli")
    memory = _required_whole(record, "memory_mib")
    num_gpu = _required_whole(record, "num_gpu")
    gpu_milli = _required_whole(record, "gpu_milli")
    if num_gpu == 0 and gpu_milli != 0:
        raise _RowProblem("gpu_milli", f"must be 0 for a CPU-only pod (num_gpu 0), got {gpu_milli}")
    if num_gpu > 0 and not 1 <= gpu_milli <= MILLI:
        raise _RowProblem("gpu_milli", f"must be between 1 and 1000 per GPU, got {gpu_milli}")
    if num_gpu > 1 and gpu_milli != MILLI:
        raise _RowProblem(
            "gpu_milli",
            f"a pod of {num_gpu} GPUs takes whole GPUs (1000), got {gpu_milli}: only one GPU can be shared",
        )
    spec = _text(record.get("gpu_spec"), "gpu_spec")
    models = tuple(m.strip() for m in spec.split("|") if m.strip()) if spec else ()
    qos = _text(record.get("qos"), "qos")
    if qos is not None and qos not in QOS_PRIORITY:
        raise _RowProblem("qos", f"unknown QoS class {qos!r}; known: {', '.join(QOS_PRIORITY)}")
    return OpenbPod(
        name=name,
        cpu_milli=cpu,
        memory_mib=memory,
        num_gpu=num_gpu,
        gpu_milli=gpu_milli,
        gpu_models=models,
        qos=qos,
        creation_time=_whole(record, "creation_time"),
        deletion_time=_whole(record, "deletion_time"),
        scheduled_time=_whole(record, "scheduled_time"),
        row=row,
    )


def _pod_to_workload(pod: OpenbPod) -> Workload:
    if pod.num_gpu == 0:
        raise _RowProblem("num_gpu", "CPU-only pod (num_gpu 0): the replay accounts GPU workloads only")
    if pod.creation_time is None:
        raise _RowProblem("creation_time", "missing: a replay needs the creation time (this file has no times)")
    if pod.deletion_time is None:
        raise _RowProblem("deletion_time", "missing: a replay needs the deletion time to know the duration")
    began = pod.scheduled_time if pod.scheduled_time is not None else pod.creation_time
    duration = pod.deletion_time - began
    if duration <= 0:
        since = "scheduled_time" if pod.scheduled_time is not None else "creation_time"
        raise _RowProblem("deletion_time", f"lifetime must be > 0 s, got {duration} s (deletion_time - {since})")
    return Workload(
        workload_id=pod.name,
        submit_time_s=float(pod.creation_time),
        duration_s=float(duration),
        pods=1,
        min_count=1,
        gpus_per_pod=pod.gpus_per_pod,
        gpu_models=pod.gpu_models,
        cpu_milli_per_pod=pod.cpu_milli,
        memory_mib_per_pod=pod.memory_mib,
        tenant=OPENB_TENANT,
        queue=None,
        priority=QOS_PRIORITY.get(pod.qos or "", 0),
        kind=QOS_KIND.get(pod.qos or "", "batch"),
        source_row=pod.row,
    )


def _text(value: Any, column: str) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    problem = control_character_problem(text)
    if problem is not None:
        raise _RowProblem(column, problem)
    return text or None


def _label(value: Any) -> str | None:
    """The row's pod name for a rejected row, whatever the cell holds."""
    try:
        return _text(value, "name")
    except _RowProblem:
        return repr(value)[:80]


def _required_whole(record: dict[str, Any], column: str) -> int:
    number = _whole(record, column)
    if number is None:
        raise _RowProblem(column, "missing: a whole number is required")
    return number


def _whole(record: dict[str, Any], column: str) -> int | None:
    """A whole number between 0 and `MAX_WHOLE`, or None when the cell is empty."""
    text = _text(record.get(column), column)
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        raise _RowProblem(column, f"not a number: {text[:40]!r}") from None
    if not math.isfinite(number) or not number.is_integer():
        raise _RowProblem(column, f"must be a whole number, got {text[:40]!r}")
    if number < 0:
        raise _RowProblem(column, f"must be >= 0, got {text[:40]}")
    limit = MAX_SECONDS if column in TIME_COLUMNS else MAX_WHOLE
    if number > limit:
        raise _RowProblem(column, f"must be at most {limit:,}, got {text[:40]}")
    return int(number)
