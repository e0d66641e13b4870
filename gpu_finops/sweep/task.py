"""The one function every executor runs for a scenario: the replay the CLI's ``replay`` runs.

`run_task` replays into ``task.run_dir`` (local workers share the file system).
`run_shipped` is its form for a cluster that shares none (Ray): the inputs arrive as bytes and
are written under their own names into a temporary folder, and the run directory goes back as
bytes. The file names, the profile and the seed are the same either way, so the event logs are
byte-identical whichever executor ran them.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from scheduler.eventlog.writes import sha256_file


@dataclass(frozen=True)
class ScenarioTask:
    name: str
    run_id: str
    trace: Path
    cluster: Path
    queues: Path | None
    profile: str  # a shipped profile's name, or the path of a profile TOML
    seed: int
    start: str | None
    trace_format: str
    run_dir: Path

    @property
    def profile_path(self) -> Path | None:
        return Path(self.profile) if self.profile.endswith(".toml") else None


@dataclass(frozen=True)
class TaskResult:
    name: str
    run_id: str
    workloads: int
    events: int
    rejected_rows: int
    horizon_s: float
    seconds: float
    events_sha256: str
    host: str
    pid: int


def run_task(task: ScenarioTask) -> TaskResult:
    """Replay one scenario into ``task.run_dir`` (written atomically by the replay)."""
    from scheduler.commands import replay

    began = time.perf_counter()
    result = replay(task.trace, task.cluster, task.run_dir, profile=task.profile, seed=task.seed, start=task.start,
                    queues=task.queues, trace_format=task.trace_format, run_id=task.run_id)
    return TaskResult(task.name, result.run_id, result.workloads, result.events, result.rejected_rows,
                      result.horizon_s, time.perf_counter() - began, sha256_file(task.run_dir / "events.parquet"),
                      socket.gethostname(), os.getpid())


def run_shipped(task: dict[str, Any], trace: bytes, cluster: bytes, queues: bytes | None,
                profile: bytes | None) -> tuple[TaskResult, dict[str, bytes]]:
    """`run_task` on inputs sent as bytes; returns the result and the run directory's files."""
    spec = ScenarioTask(**{**task, "trace": Path(task["trace"]), "cluster": Path(task["cluster"]),
                           "queues": Path(task["queues"]) if task["queues"] else None,
                           "run_dir": Path(task["run_dir"])})
    with tempfile.TemporaryDirectory(prefix="gpu-finops-sweep-") as folder:
        here = Path(folder)
        inputs = here / "inputs"
        inputs.mkdir()
        (inputs / spec.trace.name).write_bytes(trace)
        (inputs / spec.cluster.name).write_bytes(cluster)
        local = replace(spec, trace=inputs / spec.trace.name, cluster=inputs / spec.cluster.name,
                        run_dir=here / spec.run_dir.name)
        if spec.queues is not None and queues is not None:
            (inputs / spec.queues.name).write_bytes(queues)
            local = replace(local, queues=inputs / spec.queues.name)
        if spec.profile_path is not None and profile is not None:
            (inputs / spec.profile_path.name).write_bytes(profile)
            local = replace(local, profile=str(inputs / spec.profile_path.name))
        result = run_task(local)
        files = {p.name: p.read_bytes() for p in sorted(local.run_dir.iterdir()) if p.is_file()}
    return result, files


def task_fields(task: ScenarioTask) -> dict[str, Any]:
    """The task as plain values (paths as text), for a process or machine that unpickles it."""
    fields = asdict(task)
    return {k: str(v) if isinstance(v, Path) else v for k, v in fields.items()}
