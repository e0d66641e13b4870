"""The one function every executor runs for a scenario: the replay the CLI's ``replay`` runs.

`run_task` replays into ``task.run_dir`` (local workers share the file system).
`run_shipped` is its form for a cluster that shares none (Ray): the inputs arrive as bytes and
are written under their own names into a temporary folder, and the run directory goes back as
bytes. The file names, the profile and the seed are the same either way, so the event logs are
byte-identical whichever executor ran them.
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    timeout_s: float | None = None  # the scenario time limit; None: none

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


DEFAULT_TIMEOUT_S = 6 * 3600.0
"""A scenario's time limit unless the sweep says otherwise: hours past the largest preset's
replay (bench-1m), minutes for any of the others; a replay that never ends stops there."""


class ScenarioTimedOut(BaseException):
    """The scenario ran past its time limit. A BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` inside the replay takes it for a failure of its own: the replay removes
    its temporary folder and the previous run stays."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `ScenarioTimedOut` in this (the worker's main) thread after ``seconds`` of wall time."""
    if not seconds:
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise ScenarioTimedOut(f"timed out after {seconds:g} s (the scenario time limit: --scenario-timeout, "
                               "or [sweep] scenario_timeout_s)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_task(task: ScenarioTask) -> TaskResult:
    """Replay one scenario into ``task.run_dir`` (written atomically by the replay), within its
    time limit (`ScenarioTimedOut` past it; the run folder is then as it was)."""
    from scheduler.commands import replay

    began = time.perf_counter()
    with time_limit(task.timeout_s):
        result = replay(task.trace, task.cluster, task.run_dir, profile=task.profile, seed=task.seed,
                        start=task.start, queues=task.queues, trace_format=task.trace_format, run_id=task.run_id)
    return TaskResult(task.name, result.run_id, result.workloads, result.events, result.rejected_rows,
                      result.horizon_s, time.perf_counter() - began, sha256_file(task.run_dir / "events.parquet"),
                      socket.gethostname(), os.getpid())


def run_shipped(task: dict[str, Any], trace: bytes, cluster: bytes, queues: bytes | None,
                profile: bytes | None) -> tuple[TaskResult | str, dict[str, bytes]]:
    """`run_task` on inputs sent as bytes; returns the result and the run directory's files,
    or, past the time limit, the one-line message and no files (Ray would wrap the exception)."""
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
        try:
            result = run_task(local)
        except ScenarioTimedOut as timed_out:
            return str(timed_out), {}
        files = {p.name: p.read_bytes() for p in sorted(local.run_dir.iterdir()) if p.is_file()}
    return result, files


def task_fields(task: ScenarioTask) -> dict[str, Any]:
    """The task as plain values (paths as text), for a process or machine that unpickles it."""
    fields = asdict(task)
    return {k: str(v) if isinstance(v, Path) else v for k, v in fields.items()}
