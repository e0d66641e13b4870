"""The cluster without its lower-priority pods, kept per preemptor priority level.

Workload-aware preemption plans the preemptor on the cluster as it would be with every
possible victim gone. Taking hundreds of running groups off the state, planning, and
putting them back was most of a saturated replay's time. A level's view is a second
`ClusterState` that holds only the pods of that priority or higher: the same devices
(the same `Holding` objects), so free GPUs, CPU, memory and shared devices on every node
are those the state has once every pod below the level is released, and the same
planner, run on it, makes the same plan.

A view is built at its level's first question from the state's holdings; afterwards the
state notes, per level, which pods of that level or higher changed (`LevelChanges`), and the
view applies the net change when next asked: first every holding that went away or was
replaced, then every new one. What-ifs that rolled back leave entries that are already
true. The view shares what depends only on the fixed cluster (its node, selector and
topology-domain caches), the nominations, the priorities and the counter of shared-device
ids (so a device the plan opens gets the id it would get on the state).
"""

from __future__ import annotations

from scheduler.state.cluster_state import ClusterState, Holding, PodKey


class LevelViews:
    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self._views: dict[int, ClusterState] = {}

    def without_below(self, priority: int) -> ClusterState:
        """The cluster with every pod below `priority` gone, up to date."""
        view = self._views.get(priority)
        pending = self._state.level_changes.pending
        if view is None:
            view = self._views[priority] = _empty_view(self._state)
            pending[priority] = {}
            priority_of = self._state.priority_of
            for key, holding in self._state.holdings.items():
                if priority_of.get(key[0], 0) >= priority:
                    view.restore(key, holding)
            return view
        _bring_up_to_date(view, pending[priority])
        return view


def _empty_view(state: ClusterState) -> ClusterState:
    view = ClusterState(state.cluster)
    view.nominations = state.nominations
    view.priority_of = state.priority_of
    view.next_shared_id = state.next_shared_id
    if state.dra is not None:  # the same devices, none allocated: the view restores its holdings
        view.dra = state.dra.fresh()
    view.domains_cache = state.domains_cache
    view.candidates = state.candidates  # the same nodes, labels and taints: its caches hold for both
    return view


def _bring_up_to_date(view: ClusterState, pending: dict[PodKey, Holding | None]) -> None:
    if not pending:
        return
    holdings = view.holdings
    for key, holding in pending.items():
        held = holdings.get(key)
        if held is not None and held is not holding:
            view.release(key)
    for key, holding in pending.items():
        if holding is not None and holdings.get(key) is not holding:
            view.restore(key, holding)
    pending.clear()
