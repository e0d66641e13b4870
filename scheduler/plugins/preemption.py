"""PostFilter: preemption when a pod or pod group does not fit.

Both plugins work on the live `ClusterState` inside a journal mark and always roll back:
they only *choose* victims; the cycle evicts them. Principles from KEP-5710 and
kube-scheduler's DefaultPreemption: never preempt when the preemptor fits without it;
only strictly lower priorities are victims; remove every potential victim, check that
the preemptor then fits, and put victims back ("reprieve") from the most important down
while the preemptor still fits, so no more is evicted than needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scheduler.plugins import names
from scheduler.state import ClusterState, Holding, PodKey


@dataclass(frozen=True, slots=True)
class RunningGroup:
    """A running (or reserved) workload as preemption sees it."""

    workload_id: str
    priority: int
    started_at_s: float
    holdings: tuple[tuple[PodKey, Holding], ...]
    loss_gpu_s: float = 0.0  # GPU-seconds since its last checkpoint: what evicting it throws away
    models: frozenset[str] = frozenset()  # GPU models of the nodes it holds


def _importance(group: RunningGroup) -> tuple[float, float, str]:
    # Most important first: higher priority, then the one running longer (more work at
    # stake; kube-scheduler likewise prefers evicting the most recently started pods).
    return (-group.priority, group.started_at_s, group.workload_id)


def _importance_by_loss(group: RunningGroup) -> tuple[float, float, str]:
    # Within a priority, the group whose eviction loses the most work is the most
    # important, so the victims are the ones whose loss is cheapest.
    return (-group.priority, -group.loss_gpu_s, group.workload_id)


class WorkloadPreemption:
    """v1.37 workload-aware preemption: the victim unit is a whole pod group
    (disruption mode All), the domain is the whole cluster."""

    name = names.WORKLOAD_PREEMPTION

    def __init__(self, victim_order: str = "priority") -> None:
        if victim_order not in ("priority", "cheapest_loss"):
            raise ValueError(f"victim_order must be priority or cheapest_loss, got {victim_order!r}")
        self._key = _importance_by_loss if victim_order == "cheapest_loss" else _importance
        self.needs_loss = victim_order == "cheapest_loss"  # callers compute losses only then

    def select_victims(
        self,
        state: ClusterState,
        preemptor_priority: int,
        running: list[RunningGroup],
        fits: Callable[[RunningGroup | None], bool],
        matters: Callable[[RunningGroup], bool] = lambda group: True,
        enough_free: Callable[[int], bool] = lambda withheld: True,
        usable_milli: Callable[[RunningGroup], int] = lambda group: 0,
        keeps_plan: Callable[[RunningGroup], bool] = lambda group: False,
    ) -> list[RunningGroup] | None:
        """Victims that make `fits()` true, or None if preemption cannot help.

        `fits(restored)` says whether the preemptor fits on the current state, `restored`
        being the group just put back (None for the first check); it must leave the state
        as it found it (it runs under its own journal mark). Shortcuts that give the same
        answer:

        - a group whose GPUs the preemptor could never use (`matters` false: other GPU
          models) is always reprieved;
        - once the free GPUs the preemptor could use no longer cover its request, the
          reprieve just tried cannot stand: `enough_free(withheld)` answers for the state
          with `withheld` more milli-GPUs taken, and `usable_milli(group)` is what a group
          holds on nodes the preemptor could use;
        - a reprieve that `keeps_plan` (its nodes are not those of the last plan that
          fitted, so `fits` would say yes without reading the state) is not even put back
          on the state until a later check reads it: on a large cluster most of the
          hundreds of candidates are reprieved that way, and putting each back only for
          the final rollback to take it off again was most of the cost. Every check that
          reads the state sees it exactly as if each reprieve had been put back at once.
        """
        potential = sorted((g for g in running if g.priority < preemptor_priority and matters(g)), key=self._key)
        if not potential:
            return None
        mark = state.mark()
        try:
            for group in potential:
                for key, _ in group.holdings:
                    state.release(key)
            if not fits(None):
                return None
            victims: list[RunningGroup] = []
            deferred: list[RunningGroup] = []  # reprieved, not yet put back on the state
            withheld = 0  # what they hold that the preemptor could use
            for group in potential:  # reprieve the most important first
                if not matters(group):
                    deferred.append(group)
                    continue
                held = usable_milli(group)
                if not enough_free(withheld + held):
                    victims.append(group)  # put back, then taken off again: no change
                    continue
                if keeps_plan(group):
                    deferred.append(group)
                    withheld += held
                    continue
                for reprieved in deferred:
                    for key, holding in reprieved.holdings:
                        state.restore(key, holding)
                deferred, withheld = [], 0
                for key, holding in group.holdings:
                    state.restore(key, holding)
                if not fits(group):
                    for key, _ in group.holdings:
                        state.release(key)
                    victims.append(group)
            return victims
        finally:
            state.rollback(mark)


@dataclass(frozen=True, slots=True)
class NodeVictims:
    node: int
    pods: tuple[PodKey, ...]


class DefaultPreemption:
    """kube-scheduler's per-pod preemption: victims are lower-priority pods on ONE node.

    It knows nothing of gangs, so it may evict pods for a pod whose own gang never
    completes: the waste gang scheduling exists to avoid."""

    name = names.DEFAULT_PREEMPTION

    def select_victims(
        self,
        state: ClusterState,
        preemptor_priority: int,
        priority_of: Callable[[PodKey], int],
        started_at: Callable[[PodKey], float],
        nodes: list[int],
        fits_on: Callable[[int], bool],
    ) -> NodeVictims | None:
        best: tuple[tuple[int, int, int, int], NodeVictims] | None = None
        for node in nodes:
            potential = [k for k in state.pods_on_node[node] if priority_of(k) < preemptor_priority]
            if not potential:
                continue
            potential.sort(key=lambda k: (-priority_of(k), started_at(k), k))
            mark = state.mark()
            try:
                holdings = {k: state.release(k) for k in potential}
                if not fits_on(node):
                    continue
                victims = []
                for key in potential:
                    state.restore(key, holdings[key])
                    if not fits_on(node):
                        state.release(key)
                        victims.append(key)
            finally:
                state.rollback(mark)
            priorities = [priority_of(k) for k in victims]
            rank = (max(priorities), sum(priorities), len(victims), node)
            if best is None or rank < best[0]:
                best = (rank, NodeVictims(node, tuple(victims)))
        return best[1] if best else None
