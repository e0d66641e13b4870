"""Extension points as small Protocols with long contracts (kube-scheduler framework style).

A profile (TOML, see `profile.py`) names which plugins run at each point; the registry
(`registry.py`) builds them; the runtime (`runtime.py`) runs them. A plugin may implement
several points (kube-scheduler names plugins after their concern, not their point). Plugins
never change cluster state themselves: the cycle (`scheduler/cycle/`) does, and it can roll
back through `ClusterState`'s journal.

Units of scheduling: a profile schedules pods one by one (`Unit.POD`: kube-default,
coscheduling, gang-v1.35) or whole pod groups in one cycle (`Unit.POD_GROUP`: gang-v1.37).
PostFilter plugins say which unit they make room for.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from scheduler.framework.status import Status
from scheduler.framework.victims import (
    GroupPreemptionQuery,
    NodeVictims,
    PodPreemptionQuery,
    RunningGroup,
)
from scheduler.state.cluster_state import ClusterState, PodRequest


class Unit(StrEnum):
    """What a profile queues and schedules: one pod, or one pod group, per attempt."""

    POD = "pod"
    POD_GROUP = "pod_group"


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Orders the active queue. Called once per queued entity when it is filed.

    `created_s` is when the workload (pod group) was created; `queued_s` when its pods were
    last added to the queue: created, admitted by Kueue (which creates them), or sent back
    after a failure (time-out, rejection, eviction). `sort_key` must be deterministic; the
    queue appends the workload's arrival sequence and the pod index as the last
    tie-breakers. Only one queue sort plugin may be enabled in a profile.
    """

    name: str

    def sort_key(self, priority: int, created_s: float, queued_s: float) -> tuple[float, ...]: ...


@runtime_checkable
class FilterPlugin(Protocol):
    """Says whether one pod fits one node right now.

    Called for every candidate node of every pod attempt, so it must be cheap and must not
    change state. It must read the `state` it is passed, never a copy of its own: preemption
    asks it about states with victims removed. Return `Status.success()` or an
    unschedulable status whose first reason is a short kube-scheduler style phrase
    ("Insufficient nvidia.com/gpu"): the runtime counts reasons over nodes to build the
    "0/64 nodes are available: …" message. `Code.UNRESOLVABLE` tells preemption that
    removing pods from this node cannot help, so the node is not even tried.
    """

    name: str

    def filter(self, state: ClusterState, request: PodRequest, node: int) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Ranks the nodes that passed every filter; higher is better, range 0..100.

    Scores of several plugins are combined by the weights in the profile. Ties fall by the
    profile's `tie_break` (the heap's order, a seeded key per node, or the lowest node
    index), so a replay stays deterministic; a plugin that wants randomness
    draws from the seeded generator it was given at construction. A plugin whose score
    orders the nodes of one (GPU model, GPU count) class by used GPUs alone may say so with
    `index_order = "least" | "most"`: under the `random` and `lowest_index` rules with every
    node scored the runtime then walks the state's usage index instead of every node, and
    finds the same node.
    """

    name: str

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float: ...


@dataclass(frozen=True, slots=True)
class GroupRejection:
    """A Permit plugin's decision to reject a whole waiting group at once."""

    backoff_s: float  # the group stays out of the queue this long
    why: str  # the rule that fired, for the message ("> 10%")


@runtime_checkable
class PermitPlugin(Protocol):
    """The gang barrier of pod-by-pod profiles: may a reserved pod's group run yet?

    Called after each pod of a group that has not reached its quorum is reserved (it holds
    its GPUs without running). `permit` returns `Status.success()` when the group may run
    (every reserved pod starts at once) or a `Code.WAIT` status: the pods keep waiting, and
    the group's one shared deadline of `timeout_s` seconds starts at its first reservation;
    when it expires every reserved pod is released (`timed_out` rows) and the group goes
    back to the queue.

    `reject_on_failure` is asked when another pod of a waiting group could not be placed:
    None keeps the reservations until the deadline; a `GroupRejection` releases the whole
    group now and keeps it out of the queue for its backoff (scheduler-plugins
    Coscheduling's optimistic rejection and podGroupBackoffSeconds).
    """

    name: str

    @property
    def timeout_s(self) -> float: ...

    def permit(self, reserved: int, min_count: int) -> Status: ...

    def reject_on_failure(self, unassigned: int, min_count: int) -> GroupRejection | None: ...


@runtime_checkable
class GroupPostFilterPlugin(Protocol):
    """Workload-aware preemption (PostFilter) for a pod group that fits nowhere.

    Called only when the group's plan failed and preemption could help at all. It chooses
    whole lower-priority groups whose removal lets the preemptor fit, reading the state
    only through `query` (see `GroupPreemptionQuery`), and returns them, or None when no
    set of victims makes room. It must leave the state as it found it (journal mark and
    rollback); the cycle evicts the victims. `needs_loss`: the query's running groups must
    carry `loss_gpu_s` (costly to compute, so only plugins that read it ask).
    `plans_by_removal`: `query.without` is asked about a part of the lower priorities (the
    plan is then made on the state without them, not on the view without every lower level).
    """

    name: str
    unit: Unit
    needs_loss: bool
    plans_by_removal: bool

    def select_group_victims(self, query: GroupPreemptionQuery) -> list[RunningGroup] | None: ...


@runtime_checkable
class PodPostFilterPlugin(Protocol):
    """Per-pod preemption (PostFilter) for a single pod that fits nowhere.

    Chooses one node and the lower-priority pods on it whose removal lets the pod fit
    (see `PodPreemptionQuery`), or None. It must leave the state as it found it; the cycle
    evicts the victims' whole workloads (a distributed job does not survive losing one
    worker) and places the pod on that node.
    """

    name: str
    unit: Unit

    def select_pod_victims(self, query: PodPreemptionQuery) -> NodeVictims | None: ...


PostFilterPlugin = GroupPostFilterPlugin | PodPostFilterPlugin
"""A PostFilter plugin makes room for one unit of scheduling (its `unit`)."""
