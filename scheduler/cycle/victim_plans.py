"""Workload-aware preemption's proposed assignment and its reprieves, two ways.

Both answer `ReprievePlan` (`framework/victims.py`) for the same question: plan the
preemptor with every potential victim gone, then say, victim by victim, whether putting it
back keeps the plan. They give the same answers (`replay --verify` runs both on every
search and compares victims and plans):

- `RemovalPlan`, the plain computation: every potential victim is taken off the live
  state, the preemptor planned, reprieves put back (those off the plan's nodes only once a
  later check reads the state), and the journal rolled back. Its cost is every holding of
  every potential victim, twice, on every search.
- `ViewPlan`: the plan is made on the level's view (`scheduler/state/level_views.py`), the
  cluster as it is with every pod below the preemptor's priority gone, so nothing is taken
  off. The view holds lower-priority pods that are already terminating (no one's victims,
  still on their nodes) only for the search. A reprieve is decided on the plan's nodes
  alone: the filters read one node, so only the reprieved group's holdings on the plan's
  nodes are put on the view, and a group with none there keeps the plan without a look.
  The free-GPU test is arithmetic: free GPUs with every potential victim gone (the state's
  free plus what they hold that the preemptor could use) less what the reprieved hold.

Why the view plans what removal plans: the planner reads only nodes of the preemptor's GPU
models (candidate nodes, their usage classes, domains and per-model sums), and there the
view and the state without the potential victims hold the same pods, the same `Holding`s.
A lower-priority group the preemptor could never use (`matters` false) holds only nodes of
other models, so removal leaves it and the view leaves it out, unread either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from scheduler.framework.runtime import Framework
from scheduler.framework.victims import RunningGroup
from scheduler.state.cluster_state import ClusterState, Holding, PodKey
from scheduler.workload_run import WorkloadRun

Assignment = list[tuple[WorkloadRun, int, int]]  # (run, pod, node) in placement order


class Preemptor(Protocol):
    """What both plans read of the preemptor (`GroupVictimSearch`)."""

    @property
    def priority(self) -> int: ...

    @property
    def needed_milli(self) -> int: ...

    def usable_milli(self, group: RunningGroup) -> int: ...

    def free_milli(self) -> int: ...


def _assignment_fits(state: ClusterState, framework: Framework, assignment: Assignment, touched: set[int]) -> bool:
    """Every pod of `assignment` proposed for a node of `touched` passes the filters there,
    with the pods before it on that node assumed; the state is left as it was."""
    mark = state.mark()
    try:
        for run, pod, node in assignment:
            if node in touched:
                if not framework.feasible(state, run.request, node):
                    return False
                state.allocate((run.spec.workload_id, pod), node, run.request)
        return True
    finally:
        state.rollback(mark)


class RemovalPlan:
    """The plain computation on the live state (see the module docstring). `defer` False puts
    every reprieve back at once (the one-by-one version `replay --verify` compares with)."""

    def __init__(self, preemptor: Preemptor, state: ClusterState, framework: Framework,
                 planner: Callable[[], Assignment | None], potential: Sequence[RunningGroup], defer: bool) -> None:
        self._preemptor, self._state, self._framework, self._defer = preemptor, state, framework, defer
        self._mark = state.mark()
        for group in potential:
            for key, _ in group.holdings:
                state.release(key)
        planned = planner()
        self.fits = planned is not None
        self.assignment: Assignment = planned or []
        self.nodes = {node for _, _, node in self.assignment}
        self._deferred: list[RunningGroup] = []  # reprieved, not yet put back on the state
        self._withheld = 0  # what they hold that the preemptor could use

    def could_keep(self, group: RunningGroup) -> bool:
        free = self._preemptor.free_milli() - self._withheld - self._preemptor.usable_milli(group)
        return free >= self._preemptor.needed_milli

    def keeps_plan(self, group: RunningGroup) -> bool:
        """Putting `group` back cannot touch the assignment (it holds none of its nodes)."""
        return self._defer and not any(h.node in self.nodes for _, h in group.holdings)

    def reprieve(self, group: RunningGroup) -> bool:
        if self.keeps_plan(group):
            self._deferred.append(group)
            self._withheld += self._preemptor.usable_milli(group)
            return True
        state = self._state
        for reprieved in self._deferred:
            for key, holding in reprieved.holdings:
                state.restore(key, holding)
        self._deferred, self._withheld = [], 0
        for key, holding in group.holdings:
            state.restore(key, holding)
        touched = {h.node for _, h in group.holdings} & self.nodes
        if touched and not _assignment_fits(state, self._framework, self.assignment, touched):
            for key, _ in group.holdings:
                state.release(key)
            return False
        return True

    def close(self) -> None:
        self._state.rollback(self._mark)


class ViewPlan:
    """The plan on the view without lower priorities (see the module docstring)."""

    def __init__(self, preemptor: Preemptor, view: ClusterState, framework: Framework,
                 planner: Callable[[ClusterState], Assignment | None], potential: Sequence[RunningGroup],
                 terminating: Sequence[tuple[PodKey, Holding]]) -> None:
        self._preemptor, self._view, self._framework = preemptor, view, framework
        self._mark = view.mark()
        for key, holding in terminating:  # no victims: they stay on their nodes
            view.restore(key, holding)
        priority_of, level = view.priority_of, preemptor.priority
        for group in potential:
            if group.members:  # a composite's children go together, whatever their own priorities
                for key, _ in group.holdings:
                    if priority_of.get(key[0], 0) >= level:
                        view.release(key)
        # Free GPUs the preemptor could use once every potential victim is gone.
        self._free = preemptor.free_milli() + sum(preemptor.usable_milli(g) for g in potential)
        planned = planner(view)
        self.fits = planned is not None
        self.assignment: Assignment = planned or []
        self.nodes = {node for _, _, node in self.assignment}
        self._kept = 0  # what the reprieved hold that the preemptor could use

    def could_keep(self, group: RunningGroup) -> bool:
        return self._free - self._kept - self._preemptor.usable_milli(group) >= self._preemptor.needed_milli

    def reprieve(self, group: RunningGroup) -> bool:
        on_plan = [(key, holding) for key, holding in group.holdings if holding.node in self.nodes]
        if on_plan:
            view = self._view
            put = view.mark()
            for key, holding in on_plan:
                view.restore(key, holding)
            if not _assignment_fits(view, self._framework, self.assignment, {h.node for _, h in on_plan}):
                view.rollback(put)
                return False
            view.commit(put)  # stays on the view until `close`
        self._kept += self._preemptor.usable_milli(group)
        return True

    def close(self) -> None:
        self._view.rollback(self._mark)
