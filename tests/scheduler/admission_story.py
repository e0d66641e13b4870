"""Small hand-built replays through the Kueue admission layer, for golden timelines.

`kueue_rows(tmp_path, nodes, jobs, queues_yaml, profile)` writes the cluster, the trace
(each job names its LocalQueue) and the Kueue manifests, runs the real `replay` command
with `--queues`, and returns the event rows. `queues(...)` builds the manifests of the
usual story: one A100 flavor, ClusterQueues with a GPU quota, one LocalQueue per queue.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from scheduler.commands import replay
from tests.scheduler.scenario import NODE_COLUMNS, TRACE_COLUMNS, job, node

__all__ = ["cluster_queue", "job_in", "kueue_rows", "node", "pending_reasons", "queues", "timeline"]

FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec: {nodeLabels: {nvidia.com/gpu.product: A100}}
"""


def cluster_queue(name: str, gpus: float, *, cohort: str | None = None, borrowing_limit: float | None = None,
                  strategy: str = "BestEffortFIFO", preemption: str = "{}", weight: float | None = None) -> str:
    limit = "" if borrowing_limit is None else f", borrowingLimit: {borrowing_limit:g}"
    cohort_line = f"  cohortName: {cohort}\n" if cohort else ""
    weight_line = f"  fairSharing: {{weight: {weight:g}}}\n" if weight is not None else ""
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
        f"{cohort_line}{weight_line}  queueingStrategy: {strategy}\n  preemption: {preemption}\n"
        f"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
        f"    - name: a100\n      resources: [{{name: nvidia.com/gpu, nominalQuota: {gpus:g}{limit}}}]\n"
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        f"metadata: {{name: {name}, namespace: {name}}}\nspec: {{clusterQueue: {name}}}\n"
    )


def queues(*documents: str) -> str:
    return "---\n".join((FLAVOR, *documents))


def job_in(queue: str, wid: str, at: float, duration: float, pods: int = 1, gpus: float = 8, **kw: Any) -> dict[str, Any]:
    return {**job(wid, at, duration, pods, gpus, tenant=queue, **kw), "queue": queue}


def kueue_rows(tmp_path: Path, nodes: list[dict[str, Any]], jobs: list[dict[str, Any]], queues_yaml: str,
               profile: str = "gang-v1.37") -> list[dict[str, Any]]:
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, nodes)
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, jobs)
    manifests = tmp_path / "queues.yaml"
    manifests.write_text(queues_yaml)
    out = tmp_path / f"run-{profile}"
    replay(trace, cluster, out, profile=profile, seed=1, queues=manifests)
    return pq.read_table(out / "events.parquet").to_pylist()


def timeline(rows: list[dict[str, Any]], *events: str) -> list[tuple[Any, ...]]:
    """(time, event, workload, reason) for whole-workload rows of the given kinds."""
    return [(r["time_s"], r["event"], r["workload_id"], r["reason"]) for r in rows
            if r["event"] in events and r["pod_index"] is None]


def pending_reasons(rows: list[dict[str, Any]], workload: str) -> list[tuple[float, str, str]]:
    return [(r["time_s"], r["reason"], r["message"]) for r in rows if r["workload_id"] == workload and r["event"] == "pending"]


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path
