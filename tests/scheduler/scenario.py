"""Small hand-built replays for golden-timeline tests.

`replay_rows(tmp_path, nodes, workloads, profile)` writes the cluster and trace as CSV,
runs the real `replay` command and returns the event rows, so each test reads like a
story: these nodes, these workloads, this profile → exactly these events.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from scheduler.commands import replay

NODE_COLUMNS = ("node", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block", "rack", "pricing_category")
TRACE_COLUMNS = (
    "workload_id", "submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "gpu_model",
    "tenant", "queue", "priority", "checkpoint_interval_s",
)


def node(name: str, gpus: int = 8, model: str = "A100", rack: str = "r1") -> dict[str, Any]:
    return {"node": name, "gpu_model": model, "gpus": gpus, "cpu_milli": 0, "memory_mib": 0,
            "zone": "z1", "block": "b1", "rack": rack, "pricing_category": "Standard"}


def job(wid: str, at: float, duration: float, pods: int = 1, gpus: float = 8, *, min_count: int | None = None,
        priority: int = 0, model: str = "", checkpoint: float | None = None, tenant: str = "t") -> dict[str, Any]:
    return {"workload_id": wid, "submit_time": at, "duration_s": duration, "pods": pods,
            "min_count": pods if min_count is None else min_count, "gpus_per_pod": gpus, "gpu_model": model,
            "tenant": tenant, "queue": "", "priority": priority, "checkpoint_interval_s": checkpoint or ""}


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def replay_rows(tmp_path: Path, nodes: list[dict[str, Any]], workloads: list[dict[str, Any]],
                profile: str, seed: int = 1) -> list[dict[str, Any]]:
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, nodes)
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, workloads)
    out = tmp_path / f"run-{profile}"
    replay(trace, cluster, out, profile=profile, seed=seed)
    return pq.read_table(out / "events.parquet").to_pylist()


def story(rows: list[dict[str, Any]], *, events: tuple[str, ...] | None = None) -> list[tuple[Any, ...]]:
    """(time, event, workload, pod, node) tuples: the golden timeline's shape."""
    return [
        (r["time_s"], r["event"], r["workload_id"], r["pod_index"], r["node"])
        for r in rows
        if events is None or r["event"] in events
    ]
