"""Small builders for workloads and clusters, shared by the scheduler tests.

`make_workload()` is a one-pod, one-GPU workload submitted at t = 0; override any field.
`make_cluster(nodes=2, gpus=8, model="A100")` is a uniform cluster of nodes named node-0..;
pass `racks=` to spread them over racks (node i in rack i * racks // nodes).
"""

from __future__ import annotations

from dataclasses import replace

from scheduler.model.cluster import Cluster, Node
from scheduler.model.workload import Workload

_BASE_WORKLOAD = Workload(
    workload_id="w-0",
    submit_time_s=0.0,
    duration_s=3600.0,
    pods=1,
    min_count=1,
    gpus_per_pod=1.0,
    source_row=2,
)


def make_workload(**overrides) -> Workload:
    """A valid workload; ``pods`` without ``min_count`` keeps the gang all-or-nothing."""
    if "pods" in overrides and "min_count" not in overrides:
        overrides["min_count"] = overrides["pods"]
    if isinstance(overrides.get("gpu_models"), str):
        overrides["gpu_models"] = tuple(overrides["gpu_models"].split("|"))
    return replace(_BASE_WORKLOAD, **overrides)


def make_cluster(
    nodes: int = 2,
    gpus: int = 8,
    model: str = "A100",
    *,
    racks: int | None = None,
    zone: str | None = "zone-a",
    prefix: str = "node",
    pricing_category: str = "Standard",
) -> Cluster:
    return Cluster(tuple(make_nodes(nodes, gpus, model, racks=racks, zone=zone, prefix=prefix, pricing_category=pricing_category)))


def make_nodes(
    count: int,
    gpus: int = 8,
    model: str = "A100",
    *,
    racks: int | None = None,
    zone: str | None = "zone-a",
    prefix: str = "node",
    pricing_category: str = "Standard",
) -> list[Node]:
    """Nodes to combine into a mixed cluster: ``Cluster((*make_nodes(2, model="H100", prefix="h"), ...))``."""
    return [
        Node(
            name=f"{prefix}-{i}",
            gpu_model=model,
            gpus=gpus,
            zone=zone,
            rack=f"{prefix}-rack-{i * racks // count}" if racks else None,
            pricing_category=pricing_category,
        )
        for i in range(count)
    ]
