"""GPU utilisation from NVIDIA's DCGM exporter series, for `import prometheus`.

Metrics read (dcgm-exporter names; docs/importers.md has the mapping):

- ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``: the fraction of time the graphics/compute engine was
  active over the sample interval, 0..1 as dcgm-exporter writes it (what Kubecost reads for GPU
  efficiency);
- ``DCGM_FI_DEV_GPU_UTIL``: the older device utilisation, a whole percent 0..100 as NVML gives it
  (what OpenCost reads), used for a GPU only when that GPU has no ``GR_ENGINE_ACTIVE`` series.

Exports are not always in those units (a recording rule ``* 100``, a dashboard's ``/ 100``), so
the unit is read from each series' own samples (`series_unit`): **percent** when some sample is
above 1, **fraction** when every sample is within 0..1 and some lies strictly between 0 and 1;
a series with both (a sample above 1 and one strictly between 0 and 1) **mixes** the units and
is a rejected row (``MixedUnits``); a series of only 0s and 1s (a nearly idle GPU in percent,
or an idle or busy one as a fraction) is read in the unit the other series of that metric in
the same file show, where they agree (`export_units`: one recording rule rescales them all),
else in the metric's documented unit above.

Each series is one GPU (``UUID``, else ``Hostname`` + ``gpu`` device index) as seen by one pod
(``pod``, ``namespace``; ``exported_pod`` / ``exported_namespace`` when Prometheus renamed the
exporter's own labels). A workload's utilisation is the mean of every sample of every GPU of its
pods: a sample is one GPU over one query step, so the mean is weighted by GPUs and by running
time. A workload none of whose pods has a series stays unknown (empty in the trace), never 0.

A sample that is not a finite number within 0..100 (NaN, +Inf, an object, 140) is left
out and the series gets a rejected row saying how many and why; a series with no pod (a GPU no
pod held) or no usable sample is a rejected row too. Nothing is dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_finops.importers.records import Rejected

ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
DEVICE_UTIL = "DCGM_FI_DEV_GPU_UTIL"
PERCENT, FRACTION = 100.0, 1.0
DCGM_METRICS: Mapping[str, float] = {ENGINE_ACTIVE: FRACTION, DEVICE_UTIL: PERCENT}
"""Each metric and its documented full scale (a sample divided by it is a fraction of the
interval): the unit of a series whose samples cannot tell (`series_unit`)."""
PREFERENCE = (ENGINE_ACTIVE, DEVICE_UTIL)


@dataclass(frozen=True, slots=True)
class GpuSeries:
    """One DCGM series: a GPU of a pod, its samples as fractions 0..1."""

    source: str
    row: int
    metric: str
    namespace: str
    pod: str
    gpu: str
    fractions: tuple[float, ...]


def _label(labels: Mapping[str, str], name: str) -> str:
    return labels.get(name) or labels.get(f"exported_{name}") or ""


def read_gpu_series(
    source: str, row: int, metric: str, labels: Mapping[str, str], raw_values: Iterable[Any],
    export_unit: float | None = None,
) -> tuple[GpuSeries | None, list[Rejected]]:
    """One DCGM series from its raw ``values`` pairs; the rejected rows for what is unusable.
    ``export_unit``: the unit of the metric's other series in the file (`export_units`), for a
    series whose samples cannot tell."""
    namespace, pod = _label(labels, "namespace"), _label(labels, "pod")
    gpu = labels.get("UUID") or labels.get("uuid") or f"{labels.get('Hostname', '')}/{labels.get('gpu', '')}"
    if not pod or not namespace:
        return None, [Rejected(source, row, "Series", namespace, metric, "pod",
                               "NoPod: the GPU was held by no pod in this series (idle capacity outside "
                               "allocations is what the replay measures)")]
    values: list[float] = []
    bad: list[str] = []
    for pair in raw_values:
        problem, value = _sample(pair)
        if problem is None:
            values.append(value)
        else:
            bad.append(problem)
    rejected = []
    if bad:
        rejected.append(Rejected(
            source, row, "Series", namespace, pod, "values",
            f"BadSample: {len(bad)} of {len(bad) + len(values)} samples of {metric} left out "
            f"({'; '.join(sorted(set(bad)))})",
        ))
    if not values:
        rejected.append(Rejected(source, row, "Series", namespace, pod, "values",
                                 f"Empty: no usable sample of {metric}: the pod's utilisation stays unknown"))
        return None, rejected
    scale = series_unit(metric, values, export_unit)
    if scale is None:
        above = next(v for v in values if v > 1)
        between = next(v for v in values if 0 < v < 1)
        rejected.append(Rejected(
            source, row, "Series", namespace, pod, "values",
            f"MixedUnits: {metric} has samples in percent (above 1: {above:g}) and as fractions (between 0 and "
            f"1: {between:g}): this series is left out"))
        return None, rejected
    return GpuSeries(source, row, metric, namespace, pod, gpu, tuple(v / scale for v in values)), rejected


def series_unit(metric: str, values: list[float], export_unit: float | None = None) -> float | None:
    """The full scale of one series' samples (each finite, 0..100): `PERCENT` when some sample
    is above 1, `FRACTION` when all are within 0..1 and some lies strictly between; None when
    the series has both (mixed units); of only 0s and 1s, ``export_unit``, else the metric's
    documented unit."""
    percent = any(v > 1 for v in values)
    fraction = any(0 < v < 1 for v in values)
    if percent and fraction:
        return None
    if percent:
        return PERCENT
    if fraction:
        return FRACTION
    return export_unit or DCGM_METRICS[metric]


def export_units(series: Iterable[tuple[str, str, Iterable[Any]]]) -> dict[tuple[str, str], float]:
    """(source, metric) → the unit every series of that metric in that file shows by its own
    samples, where they agree (``series``: source, metric, raw values). Series of only 0s and
    1s and series mixing the units show none."""
    shown: dict[tuple[str, str], set[float]] = {}
    for source, metric, raw_values in series:
        values = [value for problem, value in map(_sample, raw_values) if problem is None]
        percent, fraction = any(v > 1 for v in values), any(0 < v < 1 for v in values)
        if percent != fraction:
            shown.setdefault((source, metric), set()).add(PERCENT if percent else FRACTION)
    return {key: next(iter(units)) for key, units in shown.items() if len(units) == 1}


def _sample(pair: Any) -> tuple[str | None, float]:
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        return "not a [time, value] pair", 0.0
    value = pair[1]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return f"value is a {type(value).__name__}, not a number", 0.0
    try:
        number = float(value)
    except ValueError:
        return f"value {str(value)[:20]!r} is not a number", 0.0
    if not math.isfinite(number):
        return f"value {value} is not finite", 0.0
    if not 0 <= number <= PERCENT:
        return f"value {value} is outside 0..{PERCENT:g}", 0.0
    return None, number


def workload_utilization(
    gpu_series: Iterable[GpuSeries], pod_workloads: Mapping[tuple[str, str], str]
) -> tuple[dict[str, float], list[Rejected]]:
    """Each workload's mean engine-active fraction over its pods' GPUs and samples, and a
    rejected row for each series of a pod that is in no workload.

    ``pod_workloads``: (namespace, pod name) → workload id, for every pod that became a workload
    or a member of one. Per GPU of a pod, ``GR_ENGINE_ACTIVE`` wins over ``GPU_UTIL``."""
    chosen: dict[tuple[str, str, str], GpuSeries] = {}
    for series in gpu_series:
        key = (series.namespace, series.pod, series.gpu)
        held = chosen.get(key)
        if held is None or PREFERENCE.index(series.metric) < PREFERENCE.index(held.metric):
            chosen[key] = series
        elif held.metric == series.metric:  # the same GPU in two answers: both sets of samples
            chosen[key] = GpuSeries(held.source, held.row, held.metric, held.namespace, held.pod, held.gpu,
                                    held.fractions + series.fractions)
    totals: dict[str, list[float]] = {}
    unmatched: list[Rejected] = []
    for (namespace, pod, _), series in sorted(chosen.items()):
        workload = pod_workloads.get((namespace, pod))
        if workload is None:
            unmatched.append(Rejected(series.source, series.row, "Series", namespace, pod, "pod",
                                      f"NotUsed: {series.metric} of a pod that is in no workload of the import"))
            continue
        total = totals.setdefault(workload, [0.0, 0.0])
        total[0] += math.fsum(series.fractions)
        total[1] += len(series.fractions)
    means = {workload: round(total / count, 4) for workload, (total, count) in totals.items() if count}
    return means, unmatched
