"""GPU utilisation from NVIDIA's DCGM exporter series, for `import prometheus`.

Metrics read (dcgm-exporter names; docs/importers.md has the mapping):

- ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``: the fraction of time the graphics/compute engine was
  active over the sample interval, 0..1 (what Kubecost reads for GPU efficiency);
- ``DCGM_FI_DEV_GPU_UTIL``: the older device utilisation, percent 0..100 (what OpenCost reads),
  used for a GPU only when that GPU has no ``GR_ENGINE_ACTIVE`` series.

Each series is one GPU (``UUID``, else ``Hostname`` + ``gpu`` device index) as seen by one pod
(``pod``, ``namespace``; ``exported_pod`` / ``exported_namespace`` when Prometheus renamed the
exporter's own labels). A workload's utilisation is the mean of every sample of every GPU of its
pods: a sample is one GPU over one query step, so the mean is weighted by GPUs and by running
time. A workload none of whose pods has a series stays unknown (empty in the trace), never 0.

A sample that is not a finite number in the metric's range (NaN, +Inf, an object, 140 %) is left
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
DCGM_METRICS: Mapping[str, float] = {ENGINE_ACTIVE: 1.0, DEVICE_UTIL: 100.0}
"""Each metric and its full scale: a sample divided by it is a fraction of the interval."""
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
    source: str, row: int, metric: str, labels: Mapping[str, str], raw_values: Iterable[Any]
) -> tuple[GpuSeries | None, list[Rejected]]:
    """One DCGM series from its raw ``values`` pairs; the rejected rows for what is unusable."""
    namespace, pod = _label(labels, "namespace"), _label(labels, "pod")
    gpu = labels.get("UUID") or labels.get("uuid") or f"{labels.get('Hostname', '')}/{labels.get('gpu', '')}"
    if not pod or not namespace:
        return None, [Rejected(source, row, "Series", namespace, metric, "pod",
                               "NoPod: the GPU was held by no pod in this series (idle capacity outside "
                               "allocations is what the replay measures)")]
    scale = DCGM_METRICS[metric]
    fractions: list[float] = []
    bad: list[str] = []
    for pair in raw_values:
        problem, fraction = _sample(pair, scale)
        if problem is None:
            fractions.append(fraction)
        else:
            bad.append(problem)
    rejected = []
    if bad:
        rejected.append(Rejected(
            source, row, "Series", namespace, pod, "values",
            f"BadSample: {len(bad)} of {len(bad) + len(fractions)} samples of {metric} left out "
            f"({'; '.join(sorted(set(bad)))})",
        ))
    if not fractions:
        rejected.append(Rejected(source, row, "Series", namespace, pod, "values",
                                 f"Empty: no usable sample of {metric}: the pod's utilisation stays unknown"))
        return None, rejected
    return GpuSeries(source, row, metric, namespace, pod, gpu, tuple(fractions)), rejected


def _sample(pair: Any, scale: float) -> tuple[str | None, float]:
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
    if not 0 <= number <= scale:
        return f"value {value} is outside 0..{scale:g}", 0.0
    return None, number / scale


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
