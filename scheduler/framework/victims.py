"""What a PostFilter (preemption) plugin is asked and what it answers.

A PostFilter plugin only *chooses* victims; the cycle evicts them. It reads the cluster
through a query object that the cycle builds for one preemptor: one query type per unit of
scheduling (a single pod, or a whole pod group), each a small protocol whose methods answer
"would the preemptor fit now?" on the live `ClusterState`, inside the plugin's own journal
mark. Plugins never see the replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from scheduler.state import ClusterState, Holding, PodKey


@dataclass(frozen=True, slots=True)
class RunningGroup:
    """A running (or reserved) workload as group preemption sees it."""

    workload_id: str
    priority: int
    started_at_s: float
    holdings: tuple[tuple[PodKey, Holding], ...]
    loss_gpu_s: float = 0.0  # GPU-seconds since its last checkpoint: what evicting it throws away
    models: frozenset[str] = frozenset()  # GPU models of the nodes it holds
    # A gang (min_count > 1: its pods are disrupted together) or a single pod; upstream's
    # victim ordering prefers to spare gangs, and larger ones (`moreImportantVictim`).
    is_gang: bool = False
    # The workloads evicted together: the group itself, or every started child of a
    # CompositePodGroup (whose quorum would break without any one of them).
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeVictims:
    """Per-pod preemption's answer: evict these pods and the preemptor fits on `node`."""

    node: int
    pods: tuple[PodKey, ...]


@runtime_checkable
class GroupPreemptionQuery(Protocol):
    """Workload-aware preemption for one pending pod group.

    `running` holds the lower-priority groups (the only possible victims). The methods are
    exact shortcuts the plugin may use to skip work; each answers for the live state:

    - `fits(restored)`: does the preemptor fit now? The first call (`restored` None), with
      every potential victim removed, fixes the preemptor's proposed assignment; each
      later call asks whether the assignment still fits with the group `restored` put back
      (only the nodes it holds can change the answer). It leaves the state as it found it.
    - `matters(group)`: could the preemptor ever use the GPUs `group` holds (its models)?
    - `enough_free(withheld)`: with `withheld` more milli-GPUs taken, do the free GPUs the
      preemptor could use still cover its request?
    - `usable_milli(group)`: milli-GPUs `group` holds on nodes the preemptor could use.
    - `keeps_plan(group)`: putting `group` back cannot touch the proposed assignment (its
      nodes are not the assignment's), so `fits` would say yes without reading the state.
    """

    @property
    def state(self) -> ClusterState: ...

    @property
    def priority(self) -> int: ...

    @property
    def running(self) -> Sequence[RunningGroup]: ...

    def fits(self, restored: RunningGroup | None) -> bool: ...

    def matters(self, group: RunningGroup) -> bool: ...

    def enough_free(self, withheld: int) -> bool: ...

    def usable_milli(self, group: RunningGroup) -> int: ...

    def keeps_plan(self, group: RunningGroup) -> bool: ...


@runtime_checkable
class PodPreemptionQuery(Protocol):
    """kube-scheduler's per-pod preemption for one pending pod: victims on one node.

    `nodes` are the candidate nodes (those where removing pods could help), in cluster
    order; `fits_on(node)` runs every filter for the preemptor on the live state."""

    @property
    def state(self) -> ClusterState: ...

    @property
    def priority(self) -> int: ...

    @property
    def nodes(self) -> Sequence[int]: ...

    def priority_of(self, key: PodKey) -> int: ...

    def terminating(self, key: PodKey) -> bool:
        """The pod is already being preempted: it is no victim for anyone else."""

    def started_at(self, key: PodKey) -> float: ...

    def fits_on(self, node: int) -> bool: ...
