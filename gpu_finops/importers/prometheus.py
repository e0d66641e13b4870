"""`gpu-finops import prometheus`: range-query exports of kube-state-metrics → the replay's
inputs, for clusters that keep no dumps but keep Prometheus.

Input: the JSON Prometheus answers to ``GET /api/v1/query_range`` (``{"status": "success",
"data": {"resultType": "matrix", "result": [...]}}``), one file per query or several answers
in a JSON array; instant-query answers (``vector``) are read too. Each series names its metric
in ``__name__`` (query the metric, not an aggregation); a series without it takes the file's
name when that is a metric name (``kube_pod_start_time.json``).

Metrics read (kube-state-metrics v2 names; docs/importers.md has the mapping):

- pods, keyed by ``namespace``, ``pod`` and ``uid``: ``kube_pod_created``,
  ``kube_pod_start_time``, ``kube_pod_completion_time`` (Unix seconds),
  ``kube_pod_container_resource_requests`` (``resource="nvidia_com_gpu"``, ``cpu``, ``memory``;
  summed over containers), ``kube_pod_labels`` / ``kube_pod_annotations`` (the ``label_*``
  names of the labels the importer knows, as kube-state-metrics sanitises them),
  ``kube_pod_owner``, ``kube_pod_info`` (node), ``kube_pod_status_phase``,
  ``kube_pod_container_status_restarts_total``;
- nodes: ``kube_node_status_allocatable`` (else ``kube_node_status_capacity``) and
  ``kube_node_labels``, unless node dumps are given;
- GPU utilisation: NVIDIA dcgm-exporter's ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (else
  ``DCGM_FI_DEV_GPU_UTIL``), per pod and GPU: each workload's mean goes into the trace's
  ``gpu_utilization`` (`gpu_finops.importers.dcgm`); without series it stays empty (unknown).

Each pod is turned into the Pod object the API would have printed and read by the same code as
a kubectl dump, so gangs, rejected rows and times follow the same rules. A pod whose series stop
before the end of the range was deleted then: that is its finish when it has no completion time;
a pod still there at the end of the range is cut there, like a running pod in a dump.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpu_finops.importers import gangs, kube
from gpu_finops.importers.allocation_keys import AllocationKeys
from gpu_finops.importers.calendar import keep_to_calendar
from gpu_finops.importers.dcgm import (
    DCGM_METRICS,
    GpuSeries,
    export_units,
    read_gpu_series,
    workload_utilization,
)
from gpu_finops.importers.documents import SourceObject
from gpu_finops.importers.kubectl import ImportOptions, read_nodes
from gpu_finops.importers.kueue import import_kueue
from gpu_finops.importers.nodes import node_row
from gpu_finops.importers.objects import collect_group_objects
from gpu_finops.importers.output import ImportResult, write_import
from gpu_finops.importers.pods import pod_record
from gpu_finops.importers.prometheus_http import LiveRange, PrometheusError, fetch_answers
from gpu_finops.importers.records import NodeRow, PodRecord, Rejected
from gpu_finops.importers.workloads import Options, build_workloads
from scheduler.admission.manifests.quantities import shown
from scheduler.errors import InputError

POD_METRICS = frozenset({
    "kube_pod_created", "kube_pod_start_time", "kube_pod_completion_time", "kube_pod_container_resource_requests",
    "kube_pod_labels", "kube_pod_annotations", "kube_pod_owner", "kube_pod_info", "kube_pod_status_phase",
    "kube_pod_container_status_restarts_total",
})
NODE_METRICS = frozenset({"kube_node_status_allocatable", "kube_node_status_capacity", "kube_node_labels"})
RESOURCE_NAMES = {"nvidia_com_gpu": kube.GPU_RESOURCE, "nvidia.com/gpu": kube.GPU_RESOURCE, "cpu": "cpu",
                  "memory": "memory"}
# Pod labels and annotations the importer reads, by kube-state-metrics' sanitised name.
KNOWN_POD_KEYS = tuple(sorted({
    value for name, value in vars(gangs).items() if name.isupper() and isinstance(value, str) and "/" in value
} | set(gangs.PLUGIN_POD_GROUP_LABELS)))


def sanitise(key: str, prefix: str) -> str:
    """kube-state-metrics' Prometheus label name for a Kubernetes label or annotation key."""
    return prefix + re.sub(r"[^a-zA-Z0-9_]", "_", key)


@dataclass(frozen=True, slots=True)
class Series:
    source: str
    row: int  # 1-based position of the series in its file
    name: str
    labels: Mapping[str, str]
    samples: tuple[tuple[float, float], ...]  # (unix time, value), in time order
    raw_values: tuple[Any, ...] = ()  # DCGM series: the samples as exported, checked one by one
    problem: tuple[str, str] | None = None  # (field, reason): a sample the importer cannot use

    @property
    def last(self) -> float:
        return self.samples[-1][1]


@dataclass
class _Pod:
    source: str
    row: int
    namespace: str
    name: str
    uid: str
    series: dict[str, list[Series]] = field(default_factory=dict)

    def first(self, metric: str) -> Series | None:
        found = self.series.get(metric)
        return found[-1] if found else None


def read_series(paths: list[Path]) -> list[Series]:
    found: list[Series] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise InputError(path, "file not found")
        try:
            document = json.loads(path.read_bytes().decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise InputError(path, "not UTF-8 text") from None
        except json.JSONDecodeError as error:
            raise InputError(path, f"not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
        except RecursionError:
            raise InputError(path, "not valid JSON: nested too deeply") from None
        except ValueError:  # an integer of more than 4,300 digits: Python will not read it
            raise InputError(path, "not valid JSON: it holds an integer of more than 4,300 digits") from None
        found.extend(answer_series(path.name, path.stem, document))
    return found


def answer_series(source: str, stem: str, document: Any) -> list[Series]:
    """The series of one file (or one live query): an answer or a JSON array of answers, rows
    numbered from 1 across them. ``stem``: the metric a series without ``__name__`` is read as,
    when it is one (a file named after it)."""
    found: list[Series] = []
    for number, answer in enumerate(document if isinstance(document, list) else [document], start=1):
        for series in _answer_series(answer, source, number):
            found.append(_series(series, source, stem, len(found) + 1))
    return found


def _answer_series(answer: Any, source: str, number: int) -> Iterator[Mapping[str, Any]]:
    if not isinstance(answer, Mapping):
        raise InputError(source, f"answer {number} is not a query_range response (a JSON object)")
    if answer.get("status") == "error":
        raise InputError(source, f"answer {number} is a Prometheus error: {answer.get('errorType')}: "
                         f"{answer.get('error')}")
    data = answer.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("result"), list):
        raise InputError(source, f"answer {number}: no data.result list (export the JSON of /api/v1/query_range)",
                         field="data.result")
    if data.get("resultType") not in ("matrix", "vector"):
        raise InputError(source, f"answer {number}: resultType {data.get('resultType')!r}; want matrix or vector",
                         field="data.resultType")
    yield from (s for s in data["result"] if isinstance(s, Mapping))


def _series(raw: Mapping[str, Any], source: str, stem: str, row: int) -> Series:
    found = raw.get("metric")
    metric: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    name = str(metric.get("__name__") or (stem if stem in POD_METRICS | NODE_METRICS else ""))
    listed = raw.get("values")
    values: list[Any] = listed if isinstance(listed, list) else [raw.get("value")]
    labels = {str(k): str(v) for k, v in metric.items()}
    if name in DCGM_METRICS:  # a bad sample is a rejected row there, not the end of the import
        return Series(source, row, name, labels, (), tuple(values))
    samples = []
    for number, pair in enumerate(values, start=1):
        problem = _sample_problem(name, pair)
        if problem is not None:  # the series is a rejected row; the rest of the export is read
            return Series(source, row, name, labels, (), problem=(f"values[{number - 1}]", problem))
        moment, value = float(pair[0]), float(pair[1])
        if value == value:  # NaN: the metric was absent at that step
            samples.append((moment, value))
    return Series(source, row, name, labels, tuple(sorted(samples)))


TIME_METRICS = frozenset({"kube_pod_created", "kube_pod_start_time", "kube_pod_completion_time"})
"""Metrics whose value is a Unix time (0: not set yet)."""


def _sample_problem(name: str, pair: Any) -> str | None:
    """Why a sample cannot be read, or None: not ``[time, "value"]`` (an object, a list of
    three), a time or value that is not a number, an infinite value (``+Inf``), a time outside
    the import's calendar, or a time metric whose value is not a Unix time within it."""
    if not isinstance(pair, list | tuple) or len(pair) != 2 or isinstance(pair[1], list | dict | bool):
        return f"BadSample: not [time, \"value\"]: {shown(pair)}"
    try:
        moment, value = float(pair[0]), float(pair[1])
    except (TypeError, ValueError, OverflowError):
        return f"BadSample: not [time, \"value\"]: {shown(pair)}"
    if value in (math.inf, -math.inf):
        return f"BadSample: the value {shown(pair[1])} is not finite"
    try:
        kube.unix_time(moment)
        if name in TIME_METRICS and value == value and value != 0:
            kube.unix_time(value)
    except ValueError as error:
        return f"OutsideCalendar: {shown(pair)} is {error}"
    return None


def import_prometheus(paths: list[Path], out: Path, *, nodes: list[Path] | None = None, kueue: Path | None = None,
                      options: ImportOptions | None = None) -> ImportResult:
    """Exported query_range answers (files) → the import's files in ``out``."""
    result = _import(read_series(paths), paths[0], paths, nodes, kueue, options or ImportOptions())
    write_import(out, result)
    return result


def import_prometheus_live(live: LiveRange, out: Path, *, nodes: list[Path] | None = None, kueue: Path | None = None,
                           options: ImportOptions | None = None) -> ImportResult:
    """The same from a live Prometheus: each of the documented queries run over the range
    (`gpu_finops.importers.prometheus_http`), each answer read as the file of that query would be."""
    options = options or ImportOptions()
    AllocationKeys.parse(options.label_keys)  # a bad entry stops here, before any query runs
    answers = fetch_answers(live)
    series = [s for query, answer in answers for s in answer_series(query, query, answer)]
    if not any(s.samples or s.raw_values for s in series):
        raise PrometheusError(live.shown_url, None, f"no series of the documented queries from "
                              f"{_iso_ms(live.start_ms)} to {_iso_ms(live.end_ms)} (does it scrape kube-state-metrics?)")
    result = _import(series, live.shown_url, [], nodes, kueue, options)
    result.fetched = {query: hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest()
                      for query, answer in answers}
    result.origin = {"url": live.shown_url, "start": _iso_ms(live.start_ms), "end": _iso_ms(live.end_ms),
                     "step_s": live.step_ms / 1000, "pages_per_query": sum(1 for _ in live.pages())}
    write_import(out, result)
    return result


def _iso_ms(milliseconds: int) -> str:
    return kube.iso(datetime.fromtimestamp(milliseconds / 1000, UTC))


def _import(series: list[Series], where: str | Path, paths: list[Path], nodes: list[Path] | None,
            kueue: Path | None, options: ImportOptions) -> ImportResult:
    """The import of ``series`` (``where``: what an error about them all names)."""
    if not any(s.samples for s in series):
        bad = next((s for s in series if s.problem is not None), None)
        if bad is not None and bad.problem is not None:
            raise InputError(bad.source, f"no usable series in the export; series {bad.row} ({bad.name or 'no __name__'}): "
                             f"{bad.problem[1]}", field=bad.problem[0])
        raise InputError(where, "no series in the export" if not series else "no pod or node series in the export")
    end = max(s.samples[-1][0] for s in series if s.samples)
    step = _step(series)
    rejected: list[Rejected] = []
    pods: dict[tuple[str, str, str], _Pod] = {}
    node_series: dict[str, dict[str, list[Series]]] = {}
    gpu_series: list[GpuSeries] = []
    units = export_units((s.source, s.name, s.raw_values) for s in series if s.name in DCGM_METRICS)
    for s in series:
        if s.name in DCGM_METRICS:
            usable, problems = read_gpu_series(s.source, s.row, s.name, s.labels, s.raw_values,
                                               units.get((s.source, s.name)))
            rejected.extend(problems)
            if usable is not None:
                gpu_series.append(usable)
        elif s.problem is not None:
            rejected.append(Rejected(s.source, s.row, "Series", s.labels.get("namespace", ""), s.name or "(no __name__)",
                                     *s.problem))
        elif not s.samples:
            rejected.append(Rejected(s.source, s.row, "Series", s.labels.get("namespace", ""), s.name, "values",
                                     "Empty: the series has no sample in the range"))
        elif s.name in POD_METRICS and s.labels.get("pod") and s.labels.get("namespace"):
            key = (s.labels["namespace"], s.labels["pod"], s.labels.get("uid", ""))
            pod = pods.setdefault(key, _Pod(s.source, s.row, *key))
            pod.series.setdefault(s.name, []).append(s)
        elif s.name in NODE_METRICS and s.labels.get("node"):
            node_series.setdefault(s.labels["node"], {}).setdefault(s.name, []).append(s)
        else:
            rejected.append(Rejected(s.source, s.row, "Series", s.labels.get("namespace", ""), s.name or "(no __name__)",
                                     "__name__", "NotUsed: not a pod or node metric the importer reads "
                                     "(or it lacks its namespace/pod or node label)"))
    pods = _merge_missing_uid(pods)
    labels = options.labels
    if nodes:
        node_rows, node_rejected, _ = read_nodes(nodes, labels)
    else:
        node_rows, node_rejected = _nodes_from_metrics(node_series, labels)
    kueue_import = import_kueue(kueue, node_rows, options.level_of) if kueue else None
    pod_keys = KNOWN_POD_KEYS + ((options.tenant_label,) if options.tenant_label else ())
    objects = [SourceObject(p.source, p.row, _pod_object(p, end, step, pod_keys))
               for p in sorted(pods.values(), key=lambda p: (p.source, p.row))]
    groups, _ = collect_group_objects(())
    groups.priority_classes.update(kueue_import.priority_classes if kueue_import else {})
    records: list[PodRecord] = []
    for obj in objects:
        record = pod_record(obj, groups, Counter(), labels.gpu_product)
        (records if isinstance(record, PodRecord) else rejected).append(record)  # type: ignore[arg-type]
    records, outliers, _, calendar_warning = keep_to_calendar(records, ())
    rejected.extend(outliers)
    observed_at = options.observed([datetime.fromtimestamp(end, UTC)])
    built = build_workloads(records, groups, Options(observed_at, options.tenant_label, options.pending_duration_s,
                                                     options.level_of, AllocationKeys.parse(options.label_keys)))
    if gpu_series:
        pod_workloads = {(o.pod.namespace, o.pod.name): o.workload_id for o in built.outcomes if o.workload_id}
        means, unmatched = workload_utilization(gpu_series, pod_workloads)
        rejected.extend(unmatched)
        built.rows = [replace(row, gpu_utilization=means.get(row.workload_id)) for row in built.rows]
    result = ImportResult("prometheus", [*paths, *(nodes or []), *([kueue] if kueue else [])], built, node_rows,
                          rejected + node_rejected, observed_at, kueue_import,
                          warnings=[calendar_warning] if calendar_warning else [], input_pods=len(objects))
    return result


def _step(series: list[Series]) -> float:
    gaps = [b[0] - a[0] for s in series for a, b in zip(s.samples, s.samples[1:], strict=False) if b[0] > a[0]]
    return min(gaps, default=60.0)


def _merge_missing_uid(pods: dict[tuple[str, str, str], _Pod]) -> dict[tuple[str, str, str], _Pod]:
    """A series without a uid belongs to the one pod of that name that has one, if there is one."""
    with_uid: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for key in pods:
        if key[2]:
            with_uid.setdefault(key[:2], []).append(key)
    merged = dict(pods)
    for key, pod in pods.items():
        candidates = with_uid.get(key[:2], [])
        if not key[2] and len(candidates) == 1:
            target = merged[candidates[0]]
            for metric, found in pod.series.items():
                target.series.setdefault(metric, []).extend(found)
            del merged[key]
    return merged


def _time(pod: _Pod, metric: str) -> str | None:
    found = pod.first(metric)
    if found is None or found.last <= 0:
        return None
    return kube.iso(datetime.fromtimestamp(found.last, UTC))


def _pod_object(pod: _Pod, end: float, step: float, keys: tuple[str, ...]) -> dict[str, Any]:
    """The Pod object the API would have printed, from the pod's series. ``keys``: the label
    and annotation keys to read back from their sanitised names. Metrics carry no node
    selector: the pod may run on any GPU model."""
    requests: dict[str, float] = {}
    for s in pod.series.get("kube_pod_container_resource_requests", []):
        resource = RESOURCE_NAMES.get(s.labels.get("resource", ""))
        if resource:
            requests[resource] = requests.get(resource, 0.0) + s.last
    label_series = pod.first("kube_pod_labels")
    annotation_series = pod.first("kube_pod_annotations")
    labels = {key: label_series.labels[sanitise(key, "label_")] for key in keys
              if label_series and sanitise(key, "label_") in label_series.labels}
    annotations = {key: annotation_series.labels[sanitise(key, "annotation_")] for key in keys
                   if annotation_series and sanitise(key, "annotation_") in annotation_series.labels}
    owners = pod.series.get("kube_pod_owner", [])
    owner = next((s for s in owners if s.labels.get("owner_is_controller") == "true"), owners[0] if owners else None)
    info = pod.first("kube_pod_info")
    phase_series = [s for s in pod.series.get("kube_pod_status_phase", []) if s.last == 1]
    phase = phase_series[-1].labels.get("phase", "Unknown") if phase_series else "Unknown"
    last_seen = max(s.samples[-1][0] for found in pod.series.values() for s in found)
    first_seen = min(s.samples[0][0] for found in pod.series.values() for s in found)
    created = _time(pod, "kube_pod_created") or kube.iso(datetime.fromtimestamp(first_seen, UTC))
    started, completed = _time(pod, "kube_pod_start_time"), _time(pod, "kube_pod_completion_time")
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid,
                                "creationTimestamp": created, "labels": labels, "annotations": annotations}
    if owner is not None and owner.labels.get("owner_kind") not in (None, "", "<none>"):
        metadata["ownerReferences"] = [{"kind": owner.labels["owner_kind"], "name": owner.labels.get("owner_name", ""),
                                        "controller": owner.labels.get("owner_is_controller") == "true"}]
    status: dict[str, Any] = {"phase": phase}
    if started:
        status["startTime"] = started
    if completed:
        status["containerStatuses"] = [{"name": "main", "state": {"terminated": {"startedAt": started,
                                                                                 "finishedAt": completed}}}]
        if phase not in ("Succeeded", "Failed"):
            status["phase"] = "Succeeded"
    elif started and last_seen < end - 1.5 * step:  # gone before the end of the range: deleted then
        metadata["deletionTimestamp"] = kube.iso(datetime.fromtimestamp(last_seen, UTC))
    restarts = pod.series.get("kube_pod_container_status_restarts_total", [])
    if restarts:
        status.setdefault("containerStatuses", [{"name": "main", "state": {}}])[0]["restartCount"] = int(
            sum(s.last for s in restarts))
    resources = {k: _quantity(v, k) for k, v in requests.items()}
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": resources, "limits": {}}}]}
    if info is not None and info.labels.get("node"):
        spec["nodeName"] = info.labels["node"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def _quantity(value: float, resource: str) -> str:
    if resource == "memory":
        return str(int(value))  # bytes
    return repr(round(value, 3)) if not float(value).is_integer() else str(int(value))


def _nodes_from_metrics(node_series: dict[str, dict[str, list[Series]]], labels) -> tuple[list[NodeRow], list[Rejected]]:
    rows: list[NodeRow] = []
    rejected: list[Rejected] = []
    known_node_keys = (*labels.gpu_product, *kube.ZONE_LABELS, *labels.block, *labels.rack, *kube.CAPACITY_LABELS,
                       kube.HOSTNAME_LABEL)
    for name, metrics in sorted(node_series.items()):
        first = next(s for found in metrics.values() for s in found)
        allocatable: dict[str, str] = {}
        for metric in ("kube_node_status_capacity", "kube_node_status_allocatable"):  # allocatable wins
            for s in metrics.get(metric, []):
                resource = RESOURCE_NAMES.get(s.labels.get("resource", ""))
                if resource:
                    allocatable[resource] = _quantity(s.last, resource)
        label_series = metrics.get("kube_node_labels", [])
        node_labels = {key: label_series[-1].labels[sanitise(key, "label_")] for key in known_node_keys
                       if label_series and sanitise(key, "label_") in label_series[-1].labels}
        obj = SourceObject(first.source, first.row, {"kind": "Node", "metadata": {"name": name, "labels": node_labels},
                                                     "status": {"allocatable": allocatable}})
        row = node_row(obj, labels)
        (rows if isinstance(row, NodeRow) else rejected).append(row)  # type: ignore[arg-type]
    return rows, rejected
