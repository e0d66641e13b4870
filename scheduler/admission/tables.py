"""`cluster_queues.parquet`: the ClusterQueues' quotas, for quota-use marts downstream.

One row per ClusterQueue × flavor × resource, in file order, quantities in the resource's
unit (GPUs, CPU cores, MiB of memory); see `scheduler.eventlog.schema.QUEUE_SCHEMA`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.admission.objects import QueueConfig
from scheduler.admission.workloads import in_base_unit
from scheduler.eventlog.columns import arrow_table
from scheduler.eventlog.schema import QUEUE_SCHEMA


def queue_table(config: QueueConfig) -> pa.Table:
    rows: dict[str, list[object]] = {name: [] for name in QUEUE_SCHEMA.names}
    for name, queue in config.cluster_queues.items():
        for group in queue.resource_groups:
            for flavor in group.flavors:
                for quota in flavor.resources:
                    resource = quota.resource
                    rows["cluster_queue"].append(name)
                    rows["cohort"].append(queue.cohort)
                    rows["flavor"].append(flavor.flavor)
                    rows["resource"].append(resource)
                    rows["nominal_quota"].append(in_base_unit(resource, quota.nominal_milli))
                    rows["borrowing_limit"].append(_optional(resource, quota.borrowing_limit_milli))
                    rows["lending_limit"].append(_optional(resource, quota.lending_limit_milli))
                    rows["fair_sharing_weight"].append(queue.fair_sharing_weight)
    return arrow_table(rows, QUEUE_SCHEMA)


def write_queue_table(config: QueueConfig, path: Path) -> Path:
    """Written under a temporary name and renamed into place."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    pq.write_table(queue_table(config), tmp)
    os.replace(tmp, path)
    return path


def _optional(resource: str, milli: int | None) -> float | None:
    return None if milli is None else in_base_unit(resource, milli)
