"""Tiny generated scenarios with a known answer for `advise preemption` (docs/preemption.md)."""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

COLUMNS = ("workload_id", "submit_time", "duration_s", "pods", "gpus_per_pod", "gpu_model", "tenant", "priority",
           "kind", "checkpoint_interval_s")
PRICES = "gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\nA100,4,3,1.5\n"
# gang-v1.37 with DRA preemption (KEP-5690) so the scheduler preempts, and ties among the best
# nodes drawn by the seed, so the seeds differ where upstream's choice is arbitrary.
PREEMPTING_PROFILE = """name = "gang-v1.37-preempting"
unit = "pod_group"
[extension_points]
post_filter = ["WorkloadPreemption"]
[behaviour]
group_device_claim = true
dra_preemption = true
tie_break = "random"
"""
HOUR = 3600.0


def _job(wid: str, at: float, duration: float, *, pods: int = 1, priority: int, kind: str,
         checkpoint: float | None = None) -> dict[str, Any]:
    return {"workload_id": wid, "submit_time": at, "duration_s": duration, "pods": pods, "gpus_per_pod": 8,
            "gpu_model": "A100", "tenant": kind, "priority": priority, "kind": kind,
            "checkpoint_interval_s": "" if checkpoint is None else checkpoint}


def _write(folder: Path, nodes: int, rows: list[dict[str, Any]]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "trace.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    (folder / "cluster.csv").write_text("node,gpu_model,gpus\n" + "".join(f"n{i},A100,8\n" for i in range(1, nodes + 1)))
    (folder / "prices.csv").write_text(PRICES)
    (folder / "profile.toml").write_text(PREEMPTING_PROFILE)
    return {"trace": folder / "trace.csv", "cluster": folder / "cluster.csv", "prices": folder / "prices.csv",
            "profile": folder / "profile.toml"}


def cascade_case(folder: Path) -> dict[str, Path]:
    """Four 8-GPU nodes. Priority 0: one-node batch jobs of 1 h every 20 min, more than the cluster runs beside the rest (no checkpoints).
    Priority 100: a two-node training gang of 6 h every 12 h (no checkpoints; its controller
    restarts the whole gang when it loses a pod). Priority 1000: a one-node urgent job of 1 h
    every 4 h. An urgent job planned on a training node restarts the gang, which then preempts
    batch jobs: class 1000's preemptions cascade into class 100's."""
    rows = [_job(f"train-{i}", i * 12 * HOUR, 6 * HOUR, pods=2, priority=100, kind="training") for i in range(4)]
    rows += [_job(f"urgent-{i:02d}", (1 + 4 * i) * HOUR, HOUR, priority=1000, kind="inference") for i in range(12)]
    rows += [_job(f"batch-{i:03d}", 60 + i * 1200, HOUR, priority=0, kind="batch") for i in range(144)]
    return _write(folder, 4, sorted(rows, key=lambda r: (r["submit_time"], r["workload_id"])))


def steady_rate_case(folder: Path, mean_gap_h: float = 4.0, seed: int = 7) -> dict[str, Path]:
    """One 8-GPU node. A 100-hour priority-0 training job (no checkpoints today) and 10-minute
    priority-1000 urgent jobs arriving as a Poisson process (mean gap `mean_gap_h`): each one
    preempts the training job, which resumes from its last checkpoint when the node is free."""
    draw = random.Random(seed)
    rows = [_job("train", 0, 100 * HOUR, priority=0, kind="training")]
    at = 0.0
    for i in range(400):
        at += draw.expovariate(1 / (mean_gap_h * HOUR))
        if at > 400 * HOUR:
            break
        rows.append(_job(f"urgent-{i:03d}", round(at), 600, priority=1000, kind="inference"))
    return _write(folder, 1, rows)
