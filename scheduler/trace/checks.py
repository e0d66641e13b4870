"""Checks of a trace against a cluster, before the replay, and the rejected-rows file.

`check_against_cluster` quarantines workloads that can never run on the cluster, so the
scheduler does not keep them pending forever:

- ``UnknownGpuModel:`` the row asks for GPU models the cluster has none of;
- ``LargerThanCluster:`` the gang can never be placed even on an empty cluster: a pod needs
  more GPUs (or CPU, memory) than any allowed node has, or fewer than ``min_count`` pods fit
  on all allowed nodes together. A fractional pod (gpus_per_pod < 1) needs one device,
  shared, so ``floor(1 / gpus_per_pod)`` of them fit on each GPU.

Reasons start with the code (`PendingReason` vocabulary) and a colon, then the numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from scheduler.eventlog.schema import PendingReason
from scheduler.model.cluster import Cluster, Node
from scheduler.model.workload import MILLI, Workload
from scheduler.trace.generic import RejectedRow
from scheduler.trace.io import atomic_write_text, csv_text, neutralise_formula

REJECTED_COLUMNS = ("row", "workload_id", "field", "reason")


def check_against_cluster(
    workloads: Iterable[Workload], cluster: Cluster
) -> tuple[list[Workload], list[RejectedRow]]:
    """Split workloads into (runnable, rejected); order is kept in both lists."""
    accepted: list[Workload] = []
    rejected: list[RejectedRow] = []
    # Nodes that look alike to a request are checked once, weighted by how many there are:
    # a trace of 100,000 workloads on 10,000 nodes must not cost 10^9 comparisons.
    alike = Counter(
        Node(n.gpu_model, n.gpu_model, n.gpus, n.cpu_milli, n.memory_mib) for n in cluster.nodes if n.gpus > 0
    )
    gpu_nodes = list(alike)
    answers: dict[tuple[object, ...], tuple[str, PendingReason, str] | None] = {}
    for workload in workloads:
        if workload.claims_devices:  # devices decide, not counts: the DynamicResources filter says why
            accepted.append(workload)
            continue
        signature = (workload.gpu_models, workload.gpu_milli_per_pod, workload.cpu_milli_per_pod,
                     workload.memory_mib_per_pod, workload.min_count, workload.pods)
        if signature not in answers:
            answers[signature] = _why_never_runs(workload, gpu_nodes, cluster, alike)
        problem = answers[signature]
        if problem is None:
            accepted.append(workload)
        else:
            field, code, message = problem
            rejected.append(RejectedRow(workload.source_row, workload.workload_id, field, f"{code}: {message}",
                                        code=code, message=message))
    return accepted, rejected


def _why_never_runs(
    workload: Workload, gpu_nodes: list[Node], cluster: Cluster, count: Counter[Node]
) -> tuple[str, PendingReason, str] | None:
    """(field at fault, reason code, sentence) when the workload can never run here."""
    if workload.gpu_models and not any(m in cluster.gpu_models for m in workload.gpu_models):
        known = ", ".join(sorted(cluster.gpu_models)) or "none"
        return "gpu_model", PendingReason.UNKNOWN_GPU_MODEL, (
            f"asks for {workload.gpu_model_label}; the cluster has {known}"
        )
    allowed = [n for n in gpu_nodes if workload.accepts_model(n.gpu_model)]
    models = "|".join(m for m in workload.gpu_models if m in cluster.gpu_models) or "any model"
    total_gpus = sum(n.gpus * count[n] for n in allowed)
    max_per_node = max((n.gpus for n in allowed), default=0)
    fitting_pods = sum(_pods_per_node(workload, node) * count[node] for node in allowed)
    if fitting_pods >= workload.min_count:
        return None
    per_pod = _show(workload.gpus_per_pod)
    requested = _show(workload.total_gpus)
    quorum_gpus = _show(workload.min_count * workload.gpus_per_pod)
    detail = (
        f"needs {workload.pods} pods x {per_pod} GPUs of "
        f"{models} = {requested} GPUs with min_count {workload.min_count}"
        f" ({quorum_gpus} GPUs); cluster has {total_gpus} {models} GPUs, "
        f"max {max_per_node} per node"
    )
    cpu_or_memory = _largest_pod_resource_gap(workload, allowed)
    if cpu_or_memory:
        return cpu_or_memory[0], PendingReason.LARGER_THAN_CLUSTER, f"{detail}; {cpu_or_memory[1]}"
    field = "gpus_per_pod" if workload.gpus_per_pod > max_per_node else "min_count"
    return field, PendingReason.LARGER_THAN_CLUSTER, f"{detail}; only {fitting_pods} such pods fit"


def _pods_per_node(workload: Workload, node: Node) -> int:
    """How many of the workload's pods an empty node holds."""
    milli = workload.gpu_milli_per_pod
    # A sharing pod takes a slice of one device and never spans two.
    fit = node.gpus * (MILLI // milli) if workload.shares_device else (node.gpus * MILLI) // milli
    # 0 on a node means "not modelled": no constraint from that resource.
    if node.cpu_milli and workload.cpu_milli_per_pod:
        fit = min(fit, node.cpu_milli // workload.cpu_milli_per_pod)
    if node.memory_mib and workload.memory_mib_per_pod:
        fit = min(fit, node.memory_mib // workload.memory_mib_per_pod)
    return fit


def _largest_pod_resource_gap(workload: Workload, nodes: list[Node]) -> tuple[str, str] | None:
    """Name CPU or memory when a pod is larger than every allowed node in that resource."""
    checks = (
        ("cpu_milli_per_pod", workload.cpu_milli_per_pod, [n.cpu_milli for n in nodes], "CPU millicores"),
        ("memory_mib_per_pod", workload.memory_mib_per_pod, [n.memory_mib for n in nodes], "MiB memory"),
    )
    for field, need, capacities, unit in checks:
        modelled = [c for c in capacities if c]
        if need and modelled and len(modelled) == len(capacities) and need > max(modelled):
            return field, f"a pod needs {need} {unit}, the largest node has {max(modelled)}"
    return None


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def write_rejected_csv(rows: Iterable[RejectedRow], path: Path) -> None:
    """Write ``row, workload_id, field, reason`` atomically; text a spreadsheet would run
    as a formula (starting with = + - @) is prefixed with a single quote."""
    body = csv_text(
        REJECTED_COLUMNS,
        (
            [r.row, neutralise_formula(r.workload_id), neutralise_formula(r.field), neutralise_formula(r.reason)]
            for r in rows
        ),
    )
    atomic_write_text(Path(path), body)
