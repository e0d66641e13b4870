"""What one scheduling attempt reads, and the only things it may do to the replay.

An attempt (`scheduler/cycle/attempt.py`) is handed a `CycleContext`: the cluster state it
plans on, the framework that runs the profile's plugins, the indexes preemption reads, and
`actions`, the replay's life cycle as a small protocol. The cycle never imports the replay
(`scheduler/runner.py` builds the context and imports the cycle, not the reverse).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from scheduler.emitter import EventEmitter
from scheduler.framework.profile import Profile
from scheduler.framework.runtime import Framework
from scheduler.sim import Environment
from scheduler.state.cluster_state import ClusterState
from scheduler.state.holding_index import HoldingIndex
from scheduler.state.level_views import LevelViews
from scheduler.verify import Verifier
from scheduler.workload_run import WorkloadRun


class ReplayActions(Protocol):
    """What a scheduling attempt may do to the replay. Each writes its own event rows."""

    def place(self, run: WorkloadRun, pod: int, node: int, *, reserve: bool, allocated: bool = False) -> None:
        """Commit pod `pod` to `node`: `reserved` (held at the gang barrier) or `started`.
        `allocated`: it holds its GPUs there already (a plan committed as made)."""

    def start_reserved(self, run: WorkloadRun) -> None:
        """The Permit barrier opened: every reserved pod of `run` starts now."""

    def maybe_start_progress(self, run: WorkloadRun) -> None:
        """Once min_count pods run together the group makes progress (and will finish)."""

    def arm_deadline(self, run: WorkloadRun, timeout_s: float, reason: str) -> None:
        """Start the group's one shared wait deadline, unless it runs already."""

    def release_gang(self, run: WorkloadRun, reason: str, message: str, backoff_s: float = 0.0) -> None:
        """The group's wait ended without it completing: release every pod, requeue it."""

    def evict(self, run: WorkloadRun, preemptor: WorkloadRun, *, message: str | None = None) -> None:
        """Preempt every pod of `run` to make room for `preemptor`."""

    def evict_pods(self, run: WorkloadRun, pods: list[int], preemptor: WorkloadRun) -> None:
        """Preempt only `pods` of `run` (disruption mode Single); its controller's
        `on_pod_loss` says what happens to the rest."""

    def capacity_released(self) -> None:
        """GPUs were given back: the queue should look again."""


@dataclass
class CycleContext:
    env: Environment  # the simulated clock (read `now` only)
    state: ClusterState
    framework: Framework
    profile: Profile
    runs: Mapping[str, WorkloadRun]
    holdings: HoldingIndex
    emitter: EventEmitter  # for `pending` rows
    actions: ReplayActions
    # CompositePodGroups: parent name -> child groups in arrival order; parents whose quorum started.
    composites: Mapping[str, list[WorkloadRun]] = field(default_factory=dict)
    composites_started: set[str] = field(default_factory=set)
    # Gangs that got pods this cycle without reaching min_count (reported at its end).
    waiting_gangs: dict[str, WorkloadRun] = field(default_factory=dict)
    # `replay --verify`: every fast path is checked against the plain computation.
    verifier: Verifier | None = None
    # The cluster without lower-priority pods, per preemptor priority (made at the first search).
    views: LevelViews | None = None

    @property
    def now(self) -> float:
        return self.env.now
