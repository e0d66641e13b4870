"""kube-state-metrics series as Prometheus' /api/v1/query_range answers them, for the
Prometheus importer tests: one answer per query, samples every 5 minutes from 08:00 to 12:00
UTC on 2026-03-02, labels sanitised the way kube-state-metrics writes them.

Pods: a JobSet ``train`` of two workers (8 GPUs each, 08:10 → 08:20 → 10:20, Kueue queue
``main``); ``solo`` (2 GPUs, 09:00 → 09:30, completed); ``serve`` (1 GPU, running at the end of
the range); ``gone`` (4 GPUs, started 08:30, deleted at 09:40 without a completion time);
``waiting`` (created 11:00, never started); ``cpu-only`` (no GPU). Nodes: two H100 nodes, one of
them spot, and a CPU node. One series has no ``__name__`` and another is a metric the
importer does not read.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC).timestamp()
END = datetime(2026, 3, 2, 12, 0, tzinfo=UTC).timestamp()
STEP = 300.0


def at(clock: str) -> float:
    hours, minutes = (int(p) for p in clock.split(":"))
    return datetime(2026, 3, 2, hours, minutes, tzinfo=UTC).timestamp()


def series(name: str, labels: dict[str, str], value: float, first: float = START, last: float = END) -> dict[str, Any]:
    samples, moment = [], START
    while moment <= END:
        if first <= moment <= last:
            samples.append([moment, repr(float(value)) if not float(value).is_integer() else str(int(value))])
        moment += STEP
    return {"metric": {"__name__": name, "job": "kube-state-metrics", "instance": "10.8.0.5:8080", **labels},
            "values": samples}


def answer(result: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


PODS = {
    # name: (gpus, created, started, completed, seen until, labels, owner, phase)
    "train-workers-0-0": (8, "08:10", "08:20", "10:20", "10:25",
                          {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                           "batch.kubernetes.io/job-completion-index": "0", "kueue.x-k8s.io/queue-name": "main"},
                          ("Job", "train-workers-0"), "Succeeded"),
    "train-workers-0-1": (8, "08:10", "08:20", "10:20", "10:25",
                          {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                           "batch.kubernetes.io/job-completion-index": "1", "kueue.x-k8s.io/queue-name": "main"},
                          ("Job", "train-workers-0"), "Succeeded"),
    "solo": (2, "08:55", "09:00", "09:30", "09:35", {}, None, "Succeeded"),
    "serve": (1, "08:00", "08:05", None, "12:00", {}, ("ReplicaSet", "serve-6b8d9"), "Running"),
    "gone": (4, "08:25", "08:30", None, "09:40", {}, None, "Running"),
    "waiting": (8, "11:00", None, None, "12:00", {}, None, "Pending"),
    "cpu-only": (0, "08:00", "08:01", None, "12:00", {}, None, "Running"),
}


def _pod_labels(name: str) -> dict[str, str]:
    return {"namespace": "ml", "pod": name, "uid": f"uid-{name}"}


def write_export(folder: Path) -> list[Path]:
    """One JSON file per query, as `curl .../api/v1/query_range?query=...` would save them."""
    folder.mkdir(parents=True, exist_ok=True)
    queries: dict[str, list[dict[str, Any]]] = {name: [] for name in (
        "kube_pod_created", "kube_pod_start_time", "kube_pod_completion_time",
        "kube_pod_container_resource_requests", "kube_pod_labels", "kube_pod_owner", "kube_pod_info",
        "kube_pod_status_phase", "kube_node_status_allocatable", "kube_node_labels", "node_load1")}
    for name, (gpus, created, started, completed, seen, labels, owner, phase) in PODS.items():
        base = _pod_labels(name)
        first, last = at(created), at(seen)
        queries["kube_pod_created"].append(series("kube_pod_created", base, at(created), first, last))
        if started:
            queries["kube_pod_start_time"].append(series("kube_pod_start_time", base, at(started), at(started), last))
        if completed:
            queries["kube_pod_completion_time"].append(
                series("kube_pod_completion_time", base, at(completed), at(completed), last))
        for resource, unit, amount in (("nvidia_com_gpu", "integer", gpus), ("cpu", "core", 4),
                                       ("memory", "byte", 32 * 2**30)):
            if amount:
                queries["kube_pod_container_resource_requests"].append(series(
                    "kube_pod_container_resource_requests",
                    {**base, "container": "main", "node": "h100-a", "resource": resource, "unit": unit},
                    amount, first, last))
        sanitised = {"label_" + "".join(c if c.isalnum() else "_" for c in k): v for k, v in labels.items()}
        queries["kube_pod_labels"].append(series("kube_pod_labels", {**base, **sanitised}, 1, first, last))
        if owner:
            queries["kube_pod_owner"].append(series("kube_pod_owner", {**base, "owner_kind": owner[0],
                                                                       "owner_name": owner[1],
                                                                       "owner_is_controller": "true"}, 1, first, last))
        queries["kube_pod_info"].append(series("kube_pod_info", {**base, "node": "h100-a" if started else "",
                                                                 "priority_class": ""}, 1, first, last))
        for each in ("Pending", "Running", "Succeeded", "Failed"):
            queries["kube_pod_status_phase"].append(series("kube_pod_status_phase", {**base, "phase": each},
                                                           1 if each == phase else 0, first, last))
    for node, spot in (("h100-a", False), ("h100-b", True)):
        for resource, unit, amount in (("nvidia_com_gpu", "integer", 8), ("cpu", "core", 207.5),
                                       ("memory", "byte", 1800 * 2**30)):
            queries["kube_node_status_allocatable"].append(series(
                "kube_node_status_allocatable", {"node": node, "resource": resource, "unit": unit}, amount))
        node_labels = {"node": node, "label_nvidia_com_gpu_product": "NVIDIA-H100-80GB-HBM3",
                       "label_topology_kubernetes_io_zone": "europe-west4-b"}
        if spot:
            node_labels["label_cloud_google_com_gke_spot"] = "true"
        queries["kube_node_labels"].append(series("kube_node_labels", node_labels, 1))
    queries["kube_node_status_allocatable"].append(series(
        "kube_node_status_allocatable", {"node": "cpu-a", "resource": "cpu", "unit": "core"}, 15.5))
    queries["node_load1"].append(series("node_load1", {"instance": "cpu-a"}, 0.5))
    paths = []
    for name, result in queries.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(answer(result)))
        paths.append(path)
    # An aggregation without __name__ in a file whose name is the metric: read under that name.
    unnamed = answer([{"metric": {"namespace": "ml", "pod": "solo", "uid": "uid-solo"},
                       "values": [[at("09:30"), "0"]]}])
    (folder / "kube_pod_container_status_restarts_total.json").write_text(json.dumps(unnamed))
    paths.append(folder / "kube_pod_container_status_restarts_total.json")
    return paths


def dcgm_series(metric: str, pod: str | None, gpu: int, value: Any, first: str = "08:00", last: str = "12:00",
                node: str = "h100-a", namespace: str = "ml") -> dict[str, Any]:
    """One GPU's series as NVIDIA dcgm-exporter labels it (``value`` may be a list, one per step,
    to put bad samples in); ``pod=None``: a GPU no pod held (the exporter leaves pod empty)."""
    labels = {"__name__": metric, "gpu": str(gpu), "UUID": f"GPU-{node}-{gpu}", "device": f"nvidia{gpu}",
              "modelName": "NVIDIA H100 80GB HBM3", "Hostname": node, "DCGM_FI_DRIVER_VERSION": "550.54.15",
              "container": "main", "namespace": namespace if pod else "", "pod": pod or "",
              "job": "dcgm-exporter", "instance": "10.8.0.9:9400"}
    moments = []
    moment = at(first)
    while moment <= at(last):
        moments.append(moment)
        moment += STEP
    values = value if isinstance(value, list) else [value] * len(moments)
    return {"metric": labels, "values": [[m, v if not isinstance(v, float | int) else str(v)]
                                         for m, v in zip(moments, values, strict=False)]}


ACTIVE, UTIL = "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL"


def research_pod() -> list[dict]:
    """A second team: namespace research, pod eval (4 GPUs on h100-b, 08:10 -> 09:10)."""
    base = {"namespace": "research", "pod": "eval", "uid": "uid-eval"}
    first, last = at("08:00"), at("09:15")
    return [
        series("kube_pod_created", base, at("08:00"), first, last),
        series("kube_pod_start_time", base, at("08:10"), at("08:10"), last),
        series("kube_pod_completion_time", base, at("09:10"), at("09:10"), last),
        series("kube_pod_container_resource_requests",
               {**base, "container": "main", "node": "h100-b", "resource": "nvidia_com_gpu", "unit": "integer"},
               4, first, last),
        series("kube_pod_info", {**base, "node": "h100-b", "priority_class": ""}, 1, first, last),
        *(series("kube_pod_status_phase", {**base, "phase": phase}, 1 if phase == "Succeeded" else 0, first, last)
          for phase in ("Pending", "Running", "Succeeded", "Failed")),
    ]


def write_export_with_dcgm(folder: Path) -> list[Path]:
    """`write_export`, a second team's pod (research.json) and dcgm-exporter series (dcgm.json):
    the train workers at 0.9 and 0.7, solo at 30 % (GPU_UTIL), eval at 0.25."""
    paths = write_export(folder)
    (folder / "research.json").write_text(json.dumps(answer(research_pod())))
    dcgm = [dcgm_series(ACTIVE, "train-workers-0-0", g, 0.9, "08:20", "10:20") for g in range(8)]
    dcgm += [dcgm_series(ACTIVE, "train-workers-0-1", g, 0.7, "08:20", "10:20", node="h100-b") for g in range(8)]
    dcgm += [dcgm_series(UTIL, "solo", g, 30, "09:00", "09:30") for g in range(2)]  # percent
    dcgm += [dcgm_series(ACTIVE, "eval", g, 0.25, "08:10", "09:10", node="h100-b", namespace="research")
             for g in range(4)]
    (folder / "dcgm.json").write_text(json.dumps(answer(dcgm)))
    return [*paths, folder / "research.json", folder / "dcgm.json"]
