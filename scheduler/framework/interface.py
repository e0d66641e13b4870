"""Extension points as small Protocols with long contracts (kube-scheduler framework style).

A profile (TOML, see `profile.py`) names which plugin runs at each point. Plugins never
mutate cluster state themselves: the cycle (`scheduler/cycle.py`) does, and it can roll
back through `ClusterState`'s journal.
"""

from __future__ import annotations

from typing import Protocol

from scheduler.framework.status import Status
from scheduler.state import ClusterState, PodRequest


class QueueSortPlugin(Protocol):
    """Orders the active queue. Called once per queued entity per cycle.

    `sort_key` must be total and deterministic: entities with equal keys would otherwise
    be tried in an order that depends on set iteration. The cycle appends a unique
    sequence number as the last tie-breaker.
    """

    name: str

    def sort_key(self, priority: int, enqueue_time_s: float) -> tuple[float, ...]: ...


class FilterPlugin(Protocol):
    """Says whether one pod fits one node right now.

    Called for every candidate node of every pod attempt, so it must be cheap and must not
    change state. Return `Status.success()` or an unschedulable status whose first reason
    is a short kube-scheduler style phrase ("Insufficient nvidia.com/gpu"): the cycle
    counts reasons over nodes to build the "0/64 nodes are available: …" message.
    `Code.UNRESOLVABLE` tells preemption that removing pods from this node cannot help.
    """

    name: str

    def filter(self, state: ClusterState, request: PodRequest, node: int) -> Status: ...


class ScorePlugin(Protocol):
    """Ranks the nodes that passed every filter; higher is better, range 0..100.

    Scores of several plugins are combined by the weights in the profile. Ties go to the
    lowest node index, so a replay stays deterministic; a plugin that wants randomness
    draws from the seeded generator it was given at construction.
    """

    name: str

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float: ...
