"""A fluent builder for tiny run directories that follow scheduler/eventlog/schema.py exactly.

    run = (RunBuilder(start="2026-11-02T00:00:00Z", horizon_s=7200)
           .node("n1", "A100", 8)
           .workload("w1", pods=2, gpus_per_pod=4)
           .event(0, "submitted", "w1")
           .event(10, "started", "w1", pod=0, node="n1", gpus=4))
    run_dir = run.write(tmp_path)

`seq` is assigned in the order events are added; events must be added in time order.
`.cluster_queue(...)` rows go to `cluster_queues.parquet` (written only when there are some).
Nodes model no CPU or memory unless given (`cpu_milli`, `memory_mib`), so the default price
book's CPU and memory rows only cost the nodes of the scenarios that ask for them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.eventlog.schema import (
    ADDED_IN_1_2,
    CLUSTER_SCHEMA,
    DEVICE_ALLOCATION_SCHEMA,
    DEVICE_SCHEMA,
    EVENT_SCHEMA,
    METADATA_KEY,
    QUEUE_SCHEMA,
    SCHEMA_VERSION,
    WORKLOAD_COLUMNS_ADDED_IN_1_3,
    WORKLOAD_COLUMNS_ADDED_IN_1_4,
    WORKLOAD_SCHEMA,
)

DEFAULT_PRICES = {
    "A100": (2.0, 1.5, 0.8),
    "H100": (4.0, 3.0, 1.25),
    "T4": (0.5, 0.4, 0.2),
}
# per core-hour and per GiB-hour, for every node that models CPU or memory (the default row)
DEFAULT_CPU_MEMORY_PRICES = {
    ("cpu", ""): (0.04, 0.03, 0.01),
    ("memory", ""): (0.005, 0.004, 0.002),
}


def write_prices(
    path: Path,
    prices: dict[str, tuple[float, float, float]] | None = None,
    other: dict[tuple[str, str], tuple[float, float, float]] | None = None,
) -> Path:
    """A price book: GPU rows per model, then `other` rows keyed by (resource, gpu_model).

    With `prices` given and `other` not, the book has GPU rows only (the original format).
    """
    if other is None:
        other = DEFAULT_CPU_MEMORY_PRICES if prices is None else {}
    rows = ["resource,gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour"]
    for model, (list_price, contracted, spot) in (prices or DEFAULT_PRICES).items():
        rows.append(f"gpu,{model},{list_price},{contracted},{spot}")
    for (resource, model), (list_price, contracted, spot) in other.items():
        rows.append(f"{resource},{model},{list_price},{contracted},{spot}")
    path.write_text("\n".join(rows) + "\n")
    return path


class RunBuilder:
    def __init__(
        self,
        start: str = "2026-11-02T00:00:00Z",
        horizon_s: float = 7200.0,
        run_id: str = "test-run",
        profile: str = "kube-default",
        seed: int = 1,
    ) -> None:
        self.start = start
        self.horizon_s = horizon_s
        self.run_id = run_id
        self.profile = profile
        self.seed = seed
        self.nodes: list[dict] = []
        self.workloads: dict[str, dict] = {}
        self.events: list[dict] = []
        self.queues: list[dict] = []
        self.devices: list[dict] = []
        self.allocations: list[dict] = []

    def device(self, node: str, device: str, gpu_unit: int, share_milli: int, partition: bool,
               profile: str | None = None) -> RunBuilder:
        """A device a DRA ResourceSlice publishes on `node` (devices.parquet)."""
        self.devices.append({"node": node, "driver": "gpu.nvidia.com", "pool": node, "device": device,
                             "gpu_unit": gpu_unit, "share_milli": share_milli, "partition": partition,
                             "profile": profile})
        return self

    def takes(self, device: str, share_milli: int, partition: bool, profile: str | None = None, *,
              gpu_unit: int = 0, claim: str | None = "mig", request: str = "mig") -> RunBuilder:
        """The pod of the last event row (its reserved or started row) took `device` through DRA
        (device_allocations.parquet)."""
        event = self.events[-1]
        self.allocations.append({
            "seq": event["seq"], "time_s": event["time_s"], "event": event["event"],
            "workload_id": event["workload_id"], "pod_index": event["pod_index"], "node": event["node"],
            "driver": "gpu.nvidia.com", "pool": event["node"], "device": device, "gpu_unit": gpu_unit,
            "share_milli": share_milli, "partition": partition, "profile": profile,
            "claim_kind": "ResourceClaimTemplate" if claim else "count", "claim": claim, "request": request,
            "allocated_by_pod": event["pod_index"], "in_pod_gpus": True})
        return self

    def node(
        self,
        name: str,
        gpu_model: str | None = "A100",
        gpus: int = 8,
        pricing_category: str = "Standard",
        zone: str = "z1",
        block: str = "b1",
        rack: str = "r1",
        cpu_milli: int = 0,
        memory_mib: int = 0,
    ) -> RunBuilder:
        self.nodes.append(
            {
                "node": name,
                "gpu_model": gpu_model,
                "gpus": gpus,
                "cpu_milli": cpu_milli,
                "memory_mib": memory_mib,
                "zone": zone,
                "block": block,
                "rack": rack,
                "pricing_category": pricing_category,
            }
        )
        return self

    def workload(
        self,
        workload_id: str,
        pods: int = 1,
        gpus_per_pod: float = 1.0,
        min_count: int | None = None,
        gpu_model: str | None = None,
        tenant: str = "team-a",
        queue: str | None = "lq-a",
        priority: int = 0,
        checkpoint_interval_s: float | None = None,
        submit_time_s: float = 0.0,
        duration_s: float = 3600.0,
        kind: str = "training",
        cpu_milli_per_pod: int = 0,
        memory_mib_per_pod: int = 0,
        gpu_utilization: float | None = None,
        labels: dict[str, str] | None = None,
    ) -> RunBuilder:
        self.workloads[workload_id] = {
            "workload_id": workload_id,
            "submit_time_s": submit_time_s,
            "duration_s": duration_s,
            "pods": pods,
            "min_count": pods if min_count is None else min_count,
            "gpus_per_pod": gpus_per_pod,
            "gpu_model": gpu_model,
            "cpu_milli_per_pod": cpu_milli_per_pod,
            "memory_mib_per_pod": memory_mib_per_pod,
            "tenant": tenant,
            "queue": queue,
            "priority": priority,
            "checkpoint_interval_s": checkpoint_interval_s,
            "topology_required": None,
            "topology_preferred": None,
            "parent_group": None,
            "kind": kind,
            "gpu_utilization": gpu_utilization,
            "labels": sorted(labels.items()) if labels else None,
        }
        return self

    def event(
        self,
        time_s: float,
        event: str,
        workload_id: str,
        pod: int | None = None,
        node: str | None = None,
        gpus: float | None = None,
        reason: str | None = None,
        message: str | None = None,
        cluster_queue: str | None = None,
        flavor: str | None = None,
        preemptor: str | None = None,
        queue_position: int | None = None,
        queue_length: int | None = None,
    ) -> RunBuilder:
        workload = self.workloads[workload_id]
        self.events.append(
            {
                "seq": len(self.events),
                "time_s": float(time_s),
                "event": event,
                "workload_id": workload_id,
                "pod_index": pod,
                "node": node,
                "gpus": gpus,
                "gpu_model": workload["gpu_model"],
                "tenant": workload["tenant"],
                "queue": workload["queue"],
                "cluster_queue": cluster_queue,
                "priority": workload["priority"],
                "reason": reason,
                "message": message,
                "flavor": flavor,
                "preemptor": preemptor,
                "queue_position": queue_position,
                "queue_length": queue_length,
            }
        )
        return self

    def cluster_queue(
        self,
        name: str,
        flavor: str,
        nominal_quota: float,
        borrowing_limit: float | None = None,
        cohort: str | None = "cohort-1",
        lending_limit: float | None = None,
        resource: str = "nvidia.com/gpu",
    ) -> RunBuilder:
        self.queues.append(
            {
                "cluster_queue": name,
                "cohort": cohort,
                "flavor": flavor,
                "resource": resource,
                "nominal_quota": nominal_quota,
                "borrowing_limit": borrowing_limit,
                "lending_limit": lending_limit,
                "fair_sharing_weight": None,
            }
        )
        return self

    def tables(self, schema_version: str = SCHEMA_VERSION) -> dict[str, pa.Table]:
        """The run's tables; `schema_version` "1.1" writes an event log without 1.2's columns,
        "1.1" and "1.2" workloads without 1.3's, "1.3" without 1.4's."""
        metadata = {METADATA_KEY: schema_version.encode()}
        events = pa.Table.from_pylist(self.events, schema=EVENT_SCHEMA)
        if schema_version == "1.1":
            events = events.drop_columns(list(ADDED_IN_1_2))
        queues = (
            {"cluster_queues.parquet": pa.Table.from_pylist(self.queues, schema=QUEUE_SCHEMA)}
            if self.queues
            else {}
        )
        workloads = pa.Table.from_pylist(list(self.workloads.values()), schema=WORKLOAD_SCHEMA)
        if schema_version in ("1.1", "1.2"):
            workloads = workloads.drop_columns(list(WORKLOAD_COLUMNS_ADDED_IN_1_3))
        if schema_version in ("1.1", "1.2", "1.3"):
            workloads = workloads.drop_columns(list(WORKLOAD_COLUMNS_ADDED_IN_1_4))
        devices = ({"devices.parquet": pa.Table.from_pylist(self.devices, schema=DEVICE_SCHEMA)}
                   if self.devices else {})
        if self.allocations:
            devices["device_allocations.parquet"] = pa.Table.from_pylist(self.allocations,
                                                                         schema=DEVICE_ALLOCATION_SCHEMA)
        return queues | devices | {
            "events.parquet": events,
            "workloads.parquet": workloads,
            "cluster.parquet": pa.Table.from_pylist(self.nodes, schema=CLUSTER_SCHEMA),
        } | {"_metadata": metadata}  # type: ignore[dict-item]

    def write(self, parent: Path, name: str | None = None, schema_version: str = SCHEMA_VERSION) -> Path:
        run_dir = Path(parent) / (name or self.run_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        tables = self.tables(schema_version)
        metadata = tables.pop("_metadata")
        for file_name, table in tables.items():
            pq.write_table(table.replace_schema_metadata(metadata), run_dir / file_name)
        run_json = {
            "run_id": self.run_id,
            "schema_version": schema_version,
            "seed": self.seed,
            "profile": self.profile,
            "start": self.start,
            "horizon_s": self.horizon_s,
            "inputs": {},
            "counts": {
                "workloads": len(self.workloads),
                "pods": sum(w["pods"] for w in self.workloads.values()),
                "events": len(self.events),
                "rejected_rows": 0,
            },
        }
        (run_dir / "run.json").write_text(json.dumps(run_json, indent=2))
        return run_dir
