"""Rightsizing: the smaller GPU request a workload's measured utilisation says would have done.

The rule (the pipeline's `fct_rightsizing_hints` applies the same one, `rightsized_gpus_per_pod`
in pipeline/models/macros.sql; a test checks they agree):

- a workload is a candidate when its measured mean engine-active fraction (``gpu_utilization``)
  is below ``threshold`` (default `THRESHOLD`); unknown utilisation is never a candidate;
- its work needs ``gpus_per_pod × utilization`` GPUs per pod; sized for `TARGET` utilisation
  (headroom for peaks), the request becomes the smallest size of at least
  ``gpus_per_pod × utilization / TARGET`` that is smaller than today's: a whole number of GPUs,
  or a fraction of one device (`FRACTIONS`: the trace model shares a device among pods that ask
  for less than one GPU, and halves, quarters and eighths fill a device exactly);
- the pods keep their run time (the engines were idle most of the time, so the same work fits
  in fewer GPUs), their utilisation rises to ``gpus_per_pod × utilization / new request``.

`rightsize_trace` writes a generic trace with those requests, which a sweep scenario
(``rightsize = 0.5``) replays so that the effect on waits and idle is measured, not assumed.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from scheduler.errors import InputError
from scheduler.trace.io import atomic_write_text, csv_text

THRESHOLD = 0.5
"""Workloads whose measured efficiency is below this get a hint."""
TARGET = 0.8
"""The engine-active fraction a rightsized request is sized for."""
FRACTIONS = (0.125, 0.25, 0.5)
"""Shares of one device a request below one GPU may take."""
_SLACK = 1e-9  # float noise: 8 × 0.2 / 0.8 is 2.0000000000000004


def rightsized_gpus_per_pod(gpus_per_pod: float, utilization: float | None, target: float = TARGET) -> float | None:
    """The smaller request per pod, or None when no allowed size is smaller (or utilisation is unknown)."""
    if utilization is None or not math.isfinite(utilization) or gpus_per_pod <= 0:
        return None
    need = gpus_per_pod * utilization / target
    sizes = [*FRACTIONS, *range(1, math.floor(gpus_per_pod) + 1)]
    fitting = [float(size) for size in sizes if need - _SLACK <= size < gpus_per_pod]
    return min(fitting) if fitting else None


def rightsize_trace(source: Path, destination: Path, threshold: float = THRESHOLD) -> int:
    """Copy a generic CSV trace with every candidate's request rightsized; returns how many rows
    changed. Columns and every other cell stay as they are; a row whose cells do not parse is
    copied unchanged (the replay rejects it with its reason)."""
    source = Path(source)
    if not 0 < threshold <= 1:
        raise InputError(source, f"rightsize threshold must be in (0, 1], got {threshold}", field="rightsize")
    try:
        with source.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(source, f"not a readable CSV trace: {error}") from None
    header = rows[0] if rows else []
    for column in ("gpus_per_pod", "gpu_utilization"):
        if column not in header:
            raise InputError(source, "rightsizing needs a generic CSV trace with gpus_per_pod and gpu_utilization",
                             row=1, field=column)
    gpus_at, utilization_at = header.index("gpus_per_pod"), header.index("gpu_utilization")
    changed = 0
    for row in rows[1:]:
        if len(row) != len(header):
            continue  # copied as it is: the replay rejects it with its reason
        try:
            gpus = float(row[gpus_at])
            utilization = float(row[utilization_at]) if row[utilization_at].strip() else None
        except ValueError:
            continue
        if utilization is None or not 0 <= utilization < threshold:
            continue
        smaller = rightsized_gpus_per_pod(gpus, utilization)
        if smaller is None:
            continue
        row[gpus_at] = _number(smaller)
        row[utilization_at] = f"{min(1.0, gpus * utilization / smaller):.3f}"
        changed += 1
    atomic_write_text(Path(destination), csv_text(header, rows[1:]))
    return changed


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
