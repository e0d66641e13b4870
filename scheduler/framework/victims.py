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

from scheduler.state.cluster_state import ClusterState, Holding, PodKey


@dataclass(frozen=True, slots=True)
class RunningGroup:
    """One preemption victim as group preemption sees it: a running (or reserved) workload
    whose disruption mode is All, a CompositePodGroup's started children, or, under the
    default disruption mode Single, one pod of a workload (`pod`)."""

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
    # Disruption mode Single: the one pod of `workload_id` this victim is (None: the whole group).
    pod: int | None = None


@dataclass(frozen=True, slots=True)
class NodeVictims:
    """Per-pod preemption's answer: evict these pods and the preemptor fits on `node`."""

    node: int
    pods: tuple[PodKey, ...]


class ReprievePlan(Protocol):
    """The preemptor's proposed assignment, made with every potential victim gone, and the
    reprieves decided against it (`GroupPreemptionQuery.without`).

    - `fits`: the preemptor fits with every potential victim gone (else nothing is asked).
    - `could_keep(group)`: with `group` put back too, do the free GPUs the preemptor could
      use still cover its request? (A necessary condition: when false, `group` is a victim.)
    - `reprieve(group)`: put `group` back; True when the proposed assignment still passes the
      filters on every node `group` holds (upstream's `reprieveVictim`: the assignment is
      fixed, not planned again), else `group` stays removed (a victim).
    - `close()`: leave the state as it was found."""

    @property
    def fits(self) -> bool: ...

    def could_keep(self, group: RunningGroup) -> bool: ...

    def reprieve(self, group: RunningGroup) -> bool: ...

    def close(self) -> None: ...


@runtime_checkable
class GroupPreemptionQuery(Protocol):
    """Workload-aware preemption for one pending pod group.

    `running` holds the lower-priority groups (the only possible victims); `matters(group)`:
    could the preemptor ever use the GPUs `group` holds (its models)? `without(potential)`
    plans the preemptor with every group of `potential` gone and answers the reprieves
    (see `ReprievePlan`); the plugin decides the order they are asked in."""

    @property
    def priority(self) -> int: ...

    @property
    def running(self) -> Sequence[RunningGroup]: ...

    def matters(self, group: RunningGroup) -> bool: ...

    def without(self, potential: Sequence[RunningGroup]) -> ReprievePlan: ...


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
