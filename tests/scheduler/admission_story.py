"""Small hand-built replays through the Kueue admission layer, for golden timelines.

`kueue_rows(tmp_path, nodes, workloads, objects, profile)` writes the cluster, the trace and
the Kueue manifests (all built with `tests.scheduler.builders`), runs the real `replay`
command with `--queues`, and returns the event rows. Every ClusterQueue gets a LocalQueue of
its own name in the namespace of its name, unless the objects give one; a workload names it
with ``.queue("team-a")``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from scheduler.commands import replay
from scheduler.model.cluster import Node
from scheduler.model.workload import Workload
from tests.scheduler.admission_state import with_local_queues
from tests.scheduler.builders import cluster_rows, make_flavor, manifests_yaml, trace_rows
from tests.scheduler.scenario import NODE_COLUMNS, TRACE_COLUMNS

A100 = make_flavor("a100").gpu_model("A100")


def kueue_files(tmp_path: Path, nodes: list[Node], workloads: list[Workload],
                objects: list[dict[str, Any]]) -> tuple[Path, Path, Path]:
    """The trace, cluster and queues files of a story: (trace, cluster, queues)."""
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, cluster_rows(nodes))
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, trace_rows(workloads))
    manifests = tmp_path / "queues.yaml"
    manifests.write_text(manifests_yaml(*with_local_queues(objects)))
    return trace, cluster, manifests


def kueue_rows(tmp_path: Path, nodes: list[Node], workloads: list[Workload], objects: list[dict[str, Any]],
               profile: str = "gang-v1.37") -> list[dict[str, Any]]:
    """`profile` is a shipped name or a TOML text (written to a file for the replay)."""
    trace, cluster, manifests = kueue_files(tmp_path, nodes, workloads, objects)
    out = tmp_path / f"run-{profile}"
    if "\n" in profile:
        (tmp_path / "profile.toml").write_text(profile)
        profile = str(tmp_path / "profile.toml")
        out = tmp_path / "run-profile"
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
