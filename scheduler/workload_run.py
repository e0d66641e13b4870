"""A workload's mutable state during a replay: the run model every part of the replay shares.

`Workload` (scheduler/model) is the trace row, frozen; `WorkloadRun` is what happens to it:
which pods are pending, reserved or started, its gang quorum, its deadlines and backoff.
The replay's life cycle changes it; scheduling attempts and the admission layer read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from scheduler.model import Workload
from scheduler.plugins.preemption import RunningGroup
from scheduler.sim import Handle
from scheduler.state import PodRequest

GROUP = -1  # the pod_index of a queue key that stands for a whole pod group


@dataclass(eq=False)
class WorkloadRun:
    """Mutable scheduling state of one workload during the replay."""

    spec: Workload  # the trace row, narrowed to one GPU model while Kueue admits it (`narrow`)
    seq: int
    request: PodRequest  # what each pod asks of a node, narrowed alike
    cluster_queue: str | None
    remaining_s: float
    pending: set[int] = field(default_factory=set)
    reserved: set[int] = field(default_factory=set)
    started: dict[int, float] = field(default_factory=dict)
    progress_start_s: float | None = None
    finish_handle: Handle | None = None
    deadline_handle: Handle | None = None
    backoff_until_s: float = 0.0
    failures: int = 0
    last_pending: tuple[str, str, float] | None = None
    done: bool = False
    min_count: int = 0  # the group's current quorum: the trace's, until a resize changes it
    preemption_failed_at: tuple[object, ...] = ()  # `Replay.preemption_version` when preemption last could not help
    arrived: bool = False
    # What preemption sees of this run while it holds pods (built on demand, dropped
    # whenever a pod is placed, started or released: see `cycle._running_groups`).
    running_group: RunningGroup | None = None

    original_spec: Workload | None = None
    original_request: PodRequest | None = None

    def __post_init__(self) -> None:
        self.min_count = self.min_count or self.spec.min_count
        self.original_spec, self.original_request = self.spec, self.request

    def narrow(self, gpu_models: tuple[str, ...] | None) -> None:
        """Place the pods on nodes of `gpu_models` only (None: as the trace asks)."""
        assert self.original_spec is not None and self.original_request is not None
        if gpu_models is None:
            self.spec, self.request = self.original_spec, self.original_request
        else:
            self.spec = replace(self.original_spec, gpu_models=gpu_models)
            self.request = replace(self.original_request, models=gpu_models)

    @property
    def holding(self) -> list[int]:
        if not self.reserved:
            return sorted(self.started)
        return sorted(self.reserved | self.started.keys())

    @property
    def satisfied(self) -> bool:
        """The gang has reached min_count in this attempt (its progress has started)."""
        return self.progress_start_s is not None
