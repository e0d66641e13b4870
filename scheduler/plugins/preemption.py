"""PostFilter: preemption when a pod or pod group does not fit.

Both plugins work on the live `ClusterState` inside a journal mark and always roll back:
they only *choose* victims; the cycle evicts them. Principles from KEP-5710 and
kube-scheduler's DefaultPreemption: never preempt when the preemptor fits without it;
only strictly lower priorities are victims; remove every potential victim, check that
the preemptor then fits, and put victims back ("reprieve") from the most important down
while the preemptor still fits, so no more is evicted than needed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from scheduler.framework.interface import Unit
from scheduler.framework.victims import (
    GroupPreemptionQuery,
    NodeVictims,
    PodPreemptionQuery,
    RunningGroup,
)
from scheduler.plugins import names


class VictimOrder(StrEnum):
    """Which lower-priority groups workload-aware preemption spares first."""

    PRIORITY = "priority"  # most important first: priority, then longest running
    CHEAPEST_LOSS = "cheapest_loss"  # within a priority, the group whose eviction loses most work


def _importance(group: RunningGroup) -> tuple[int, bool, int, float, str, int]:
    """kube-scheduler's MoreImportantVictim (preemption/util.go), most important first:
    higher priority; then a pod group's victim before a lone pod's (a Single-mode pod of a
    gang is its group's type, `NewPodVictim`); then more pods; then the earlier start. The
    workload id and pod make the order total (upstream: the pods' UIDs)."""
    size = len(group.holdings) if group.is_gang else 0
    pod = -1 if group.pod is None else group.pod
    return (-group.priority, not group.is_gang, -size, group.started_at_s, group.workload_id, pod)


def _importance_by_loss(group: RunningGroup) -> tuple[int, float, str, int]:
    # The project's option, not upstream's: within a priority, the victim whose eviction
    # loses the most work is the most important, so the victims are those that lose least.
    return (-group.priority, -group.loss_gpu_s, group.workload_id, -1 if group.pod is None else group.pod)


class WorkloadPreemption:
    """v1.37 workload-aware preemption: the domain is the whole cluster; the victim unit is
    what the cycle offers (`RunningGroup`): a whole pod group under disruption mode All, one
    pod under Single (the default)."""

    name = names.WORKLOAD_PREEMPTION
    unit = Unit.POD_GROUP
    plans_by_removal = False  # every lower priority is a potential victim: the view plans it

    def __init__(self, victim_order: VictimOrder = VictimOrder.PRIORITY) -> None:
        self._key: Callable[[RunningGroup], tuple[Any, ...]] = (
            _importance_by_loss if victim_order is VictimOrder.CHEAPEST_LOSS else _importance)
        self.needs_loss = victim_order is VictimOrder.CHEAPEST_LOSS  # callers compute losses only then

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> WorkloadPreemption:
        order = str(args.get("victim_order", VictimOrder.PRIORITY))
        if order not in set(VictimOrder):
            raise ValueError(f"victim_order must be {' or '.join(VictimOrder)}, got {order!r}")
        return cls(VictimOrder(order))

    def select_group_victims(self, query: GroupPreemptionQuery) -> list[RunningGroup] | None:
        """Victims that let the preemptor fit, or None if preemption cannot help.

        Remove every potential victim, check that the preemptor fits, then reprieve from
        the most important down while it still fits. A group whose GPUs the preemptor could
        never use (`matters` false: other GPU models) is no potential victim; once the free
        GPUs the preemptor could use would no longer cover its request, a reprieve cannot
        stand, and is not tried (`could_keep`)."""
        potential = sorted((g for g in query.running if g.priority < query.priority and query.matters(g)), key=self._key)
        if not potential:
            return None
        return self._reprieved(query, potential)

    @staticmethod
    def _reprieved(query: GroupPreemptionQuery, potential: list[RunningGroup]) -> list[RunningGroup] | None:
        """Remove `potential`, plan, reprieve the most important first (`potential`'s order)."""
        plan = query.without(potential)
        try:
            if not plan.fits:
                return None
            # Reprieve the most important first.
            return [group for group in potential if not (plan.could_keep(group) and plan.reprieve(group))]
        finally:
            plan.close()


class PriorityLevelSearchPreemption(WorkloadPreemption):
    """NOT upstream behaviour: KEP-5710's search for the lowest priority level whose removal
    suffices, a proposal upstream dropped from the algorithm it shipped (v1.37's
    `podgrouppreemption.go` plans once with every lower priority removed). Off in every
    shipped profile; a profile enables it by naming it in `post_filter` (a sweep's
    `preemption = "priority_search"`), so a reader can see what the one-shot plan costs.

    The levels are the distinct priorities of the potential victims, lowest first; the
    preemptor is planned with the victims at or below a level removed, and the lowest level
    at which it fits is found by binary search (removing more never hurts a plan: fitting is
    monotone in the level). Its victims are then reprieved as `WorkloadPreemption` does, so
    a priority-1000 preemptor takes priority-100 gangs only when priority-0 pods alone do not
    make room."""

    name = names.PRIORITY_LEVEL_SEARCH
    plans_by_removal = True

    def select_group_victims(self, query: GroupPreemptionQuery) -> list[RunningGroup] | None:
        potential = sorted((g for g in query.running if g.priority < query.priority and query.matters(g)), key=self._key)
        if not potential:
            return None
        levels = sorted({g.priority for g in potential})

        def up_to(level: int) -> list[RunningGroup]:
            return [g for g in potential if g.priority <= level]

        def fits(level: int) -> bool:
            plan = query.without(up_to(level))
            try:
                return plan.fits
            finally:
                plan.close()

        low, high = 0, len(levels) - 1
        if not fits(levels[high]):
            return None
        while low < high:  # the lowest index whose level fits
            middle = (low + high) // 2
            if fits(levels[middle]):
                high = middle
            else:
                low = middle + 1
        return self._reprieved(query, up_to(levels[low]))


# kube-scheduler's DefaultPreemptionArgs defaults: the dry run stops once it has found
# max(10 % of the potential nodes, 100) candidate nodes, starting at a random offset.
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
_PRIORITY_OFFSET = 2**31  # math.MaxInt32 + 1: every victim's priority counts as >= 0 in sums


class DefaultPreemption:
    """kube-scheduler's per-pod preemption: victims are lower-priority pods on ONE node.

    It knows nothing of gangs, so it may evict pods for a pod whose own gang never
    completes: the waste gang scheduling exists to avoid.

    Source: pkg/scheduler/framework/preemption/preemption.go and defaultpreemption:
    candidate nodes are tried from a random offset (`DryRunPreemption`) until enough are
    found (`calculateNumCandidates`); on each, every lower-priority pod is removed and the
    pods are reprieved most important first (`SelectVictimsOnNode`: higher priority, then
    earlier start); the node is chosen by `pickOneNodeForPreemption`."""

    name = names.DEFAULT_PREEMPTION
    unit = Unit.POD

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def select_pod_victims(self, query: PodPreemptionQuery) -> NodeVictims | None:
        nodes = query.nodes
        if not nodes:
            return None
        wanted = candidates_to_find(len(nodes))
        offset = self._rng.randrange(len(nodes))
        candidates: list[tuple[NodeVictims, tuple[int, ...]]] = []
        for i in range(len(nodes)):
            found = _victims_on(query, nodes[(offset + i) % len(nodes)])
            if found is not None:
                candidates.append(found)
                if len(candidates) >= wanted:
                    break
        if not candidates:
            return None
        # pickOneNodeForPreemption; ties after every rule: the first candidate found.
        best = min(range(len(candidates)), key=lambda index: (candidates[index][1], index))
        return candidates[best][0]


def candidates_to_find(potential_nodes: int) -> int:
    """kube-scheduler's calculateNumCandidates."""
    wanted = potential_nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100
    return min(max(wanted, MIN_CANDIDATE_NODES_ABSOLUTE), potential_nodes)


def _victims_on(query: PodPreemptionQuery, node: int) -> tuple[NodeVictims, tuple[int, ...]] | None:
    """SelectVictimsOnNode, and the node's rank for pickOneNodeForPreemption (smaller wins):
    lowest highest victim priority; lowest sum of (priority + 2^31), so fewer victims win
    before raw priorities count; fewest victims; latest start of its highest-priority
    victims. (PodDisruptionBudgets, the first rule, are not modelled: none is violated.)"""
    state, priority_of = query.state, query.priority_of
    potential = [k for k in state.pods_on_node[node] if priority_of(k) < query.priority and not query.terminating(k)]
    if not potential:
        return None
    potential.sort(key=lambda k: (-priority_of(k), query.started_at(k), k))  # most important first
    mark = state.mark()
    try:
        holdings = {k: state.release(k) for k in potential}
        if not query.fits_on(node):
            return None
        victims = []
        for key in potential:
            state.restore(key, holdings[key])
            if not query.fits_on(node):
                state.release(key)
                victims.append(key)
    finally:
        state.rollback(mark)
    if not victims:
        return None
    priorities = [priority_of(k) for k in victims]
    highest = max(priorities)
    earliest_top_start = min(query.started_at(k) for k in victims if priority_of(k) == highest)
    rank = (highest, sum(p + _PRIORITY_OFFSET for p in priorities), len(victims), -round(earliest_top_start * 1e9))
    return NodeVictims(node, tuple(victims)), rank
