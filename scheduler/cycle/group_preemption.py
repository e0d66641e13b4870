"""PostFilter for a pod group: workload-aware preemption (v1.37), as the cycle drives it.

The plugin (`plugins/preemption.py` WorkloadPreemption) chooses victims through a
`GroupVictimSearch`, the query object this module builds for one preemptor; the cycle then
evicts them. Shortcuts keep this cheap on a large cluster, each exact and checked by
`replay --verify`:

- "could preemption help at all?": free GPUs plus every lower-priority GPU of an accepted
  model must cover the request, read from `ClusterState.held_below`, then the virtual free
  counts per node (`scheduler/state/virtual_free.py`);
- a preemption that found nothing is not retried until `HoldingIndex.version` changes;
- the preemptor is planned on the view of the cluster without lower-priority pods
  (`scheduler/state/level_views.py`) and reprieves are decided on the plan's nodes
  (`victim_plans.ViewPlan`), instead of taking every potential victim off the state;
- what each potential victim holds of the preemptor's GPU models is summed once per search
  (`sum_usable`), not each time a plan asks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from scheduler.cycle.context import CycleContext
from scheduler.cycle.planning import plan_group
from scheduler.cycle.pod_loss import evict_group, lose_pods
from scheduler.cycle.victim_plans import Assignment, RemovalPlan, ViewPlan
from scheduler.dra.state import ClaimedDevicesKept
from scheduler.eventlog.schema import last_checkpoint_s
from scheduler.framework.victims import RunningGroup
from scheduler.model.workload import DisruptionMode, OnPodLoss
from scheduler.state.cluster_state import ClusterState, Holding, PodKey
from scheduler.state.level_views import LevelViews
from scheduler.workload_run import GROUP, WorkloadRun

Planner = Callable[[], Assignment | None]  # a what-if plan on the current state, or None
ViewPlanner = Callable[[ClusterState], Assignment | None]  # the same plan on a view of the cluster


class How(Enum):
    """How a search plans the preemptor without its potential victims (`victim_plans.py`)."""

    VIEW = "on the view without lower priorities"
    REMOVAL = "by removing them from the state"
    ONE_BY_ONE = "by removing them, every reprieve put back at once"


@dataclass
class GroupVictimSearch:
    """The `GroupPreemptionQuery` of one pending group, or of a CompositePodGroup's quorum
    (see its contract). `planner` plans the preemptor on the current state (`view_planner`
    on a view; `How.VIEW` needs it); `models` and `needed_milli` feed the free-GPU test (an
    empty `needed_milli` disables it); `terminating` are the lower-priority pods already
    being preempted (they stay where they are)."""

    ctx: CycleContext
    priority: int
    planner: Planner
    running: list[RunningGroup]
    models: tuple[str, ...] = ()
    needed_milli: int = 0
    how: How = How.REMOVAL
    view_planner: ViewPlanner | None = None
    terminating: list[tuple[PodKey, Holding]] = field(default_factory=list)
    plan: Assignment = field(default_factory=list)  # the proposed assignment, once planned
    # What each potential victim holds that the preemptor could use, by the group's id():
    # summed once per search in `without` (the plans ask it up to three times a victim).
    # The groups are alive in `running` for as long as the search, so their ids are stable.
    usable_by_group: dict[int, int] = field(default_factory=dict)

    def matters(self, group: RunningGroup) -> bool:
        return not self.models or not group.models.isdisjoint(self.models)

    def free_milli(self) -> int:
        return self.ctx.state.free_milli(self.models)

    def usable_milli(self, group: RunningGroup) -> int:
        """Milli-GPUs `group` holds on nodes of the preemptor's models (the sum of this search)."""
        usable = self.usable_by_group.get(id(group))
        if usable is None:
            return usable_of(self.models, self.ctx.state, group)
        if self.ctx.verifier:
            self.ctx.verifier.same(self.ctx.now, "usable GPUs of a victim summed once per search", usable,
                                   usable_of(self.models, self.ctx.state, group), group.workload_id)
        return usable

    def without(self, potential: Sequence[RunningGroup]) -> RemovalPlan | ViewPlan:
        ctx = self.ctx
        self.usable_by_group = sum_usable(self.models, ctx.state, potential)
        plan: RemovalPlan | ViewPlan
        if self.how is How.VIEW and self.view_planner is not None:
            if ctx.views is None:
                ctx.views = LevelViews(ctx.state)
            plan = ViewPlan(self, ctx.views.without_below(self.priority), ctx.framework, self.view_planner,
                            potential, self.terminating)
        else:
            plan = RemovalPlan(self, ctx.state, ctx.framework, self.planner, potential, self.how is How.REMOVAL)
        self.plan = plan.assignment
        return plan


def usable_of(models: tuple[str, ...], state: ClusterState, group: RunningGroup) -> int:
    """Milli-GPUs `group` holds on nodes of `models` (every node when `models` is empty)."""
    nodes = state.nodes
    return sum(h.milli for _, h in group.holdings if not models or nodes[h.node].gpu_model in models)


def sum_usable(models: tuple[str, ...], state: ClusterState, potential: Sequence[RunningGroup]) -> dict[int, int]:
    """`usable_of` for every potential victim of one search, by the group's id(). A group
    whose models (`RunningGroup.models`, those of the nodes it holds) all count sums its
    holdings without looking at their nodes."""
    accepted = frozenset(models)
    usable: dict[int, int] = {}
    for group in potential:
        if not models or (group.models and group.models <= accepted):
            usable[id(group)] = sum(h.milli for _, h in group.holdings)
        else:
            usable[id(group)] = usable_of(models, state, group)
    return usable


def preempt_for_group(ctx: CycleContext, run: WorkloadRun, needed: int) -> bool:
    """Evict lower-priority victims so that `run` fits; True when some were evicted. Under
    DRA-claimed GPUs without `dra_preemption` nothing can be freed (v1.35-v1.37); a workload
    whose priority class says `preemptionPolicy: Never` preempts no one."""
    framework = ctx.framework
    if (not framework.group_post_filters or not ctx.profile.preemption_frees_gpus_for(run.request.claims)
            or not run.spec.may_preempt):
        return False
    version = (*ctx.holdings.version(run.spec.priority, run.spec.gpu_models, run.request.selector),
               ctx.state.nominations.generation)  # nominations kept for others matter as releases do
    kept = ClaimedDevicesKept(ctx.state.dra, not ctx.profile.dra_preemption)  # victims keep claimed devices
    if run.preemption_failed_at == version:
        if ctx.verifier:  # the skipped search would find nothing again
            with ctx.framework.unobserved(), kept:
                found = _victims(ctx, run, needed)[0] or None
            ctx.verifier.same(ctx.now, "group preemption skipped as unchanged", None, found, run.spec.workload_id)
        return False
    if not preemption_could_help(ctx, run, needed) or not _enough_pods_could_fit(ctx, run, needed):
        run.preemption_failed_at = version
        return False
    with kept:
        victims, plan = _victims(ctx, run, needed)
    if not victims:
        run.preemption_failed_at = version
        return False
    evict_victims(ctx, victims, run)
    # The proposed assignment's GPUs are kept for the group while its victims terminate.
    ctx.state.nominate((run.spec.workload_id, GROUP), run.spec.priority,
                       [(node, planned.request.milli) for planned, _, node in plan],
                       [(pod, node) for planned, pod, node in plan if planned is run])
    return True


def evict_victims(ctx: CycleContext, victims: list[RunningGroup], preemptor: WorkloadRun) -> None:
    """Evict every member of every victim (a composite's started children together); pods
    preempted alone (disruption mode Single) go as their workload's policy says
    (`scheduler/cycle/pod_loss.py`)."""
    pods_of: dict[str, list[int]] = {}
    for victim in victims:
        if victim.pod is not None:
            pods_of.setdefault(victim.workload_id, []).append(victim.pod)
            continue
        for member in victim.members or (victim.workload_id,):
            evict_group(ctx, ctx.runs[member], preemptor)
    lose_pods(ctx, pods_of, preemptor)
    ctx.actions.capacity_released()


def _group_search(ctx: CycleContext, run: WorkloadRun, needed: int, running: list[RunningGroup],
                  terminating: list[tuple[PodKey, Holding]], how: How) -> GroupVictimSearch:
    def planner() -> Assignment | None:
        return view_planner(ctx.state)

    def view_planner(state: ClusterState) -> Assignment | None:
        on = ctx if state is ctx.state else replace(ctx, state=state)
        plan = plan_group(on, run, needed, explain=False)
        return [(run, pod, node) for pod, node in plan.placed] if plan.count >= needed else None

    return GroupVictimSearch(ctx, run.spec.priority, planner, running, run.spec.gpu_models,
                             needed * run.request.milli, how, view_planner, terminating)


def _victims(ctx: CycleContext, run: WorkloadRun, needed: int) -> tuple[list[RunningGroup] | None, Assignment]:
    """The victims and the preemptor's proposed assignment (planned with them gone)."""
    running = running_groups(ctx, run.spec.priority, ctx.framework.post_filter_needs_loss)
    terminating = terminating_below(ctx, run.spec.priority)
    # A plugin that plans without only part of the lower priorities plans by removal: the view
    # is the cluster without every lower priority.
    # The views hold no victim's devices: while victims keep claimed devices, by removal.
    how = How.REMOVAL if ctx.framework.post_filter_plans_by_removal or (
        ctx.state.dra is not None and ctx.state.dra.keep_devices) else How.VIEW
    search = _group_search(ctx, run, needed, running, terminating, how)
    start = ctx.framework.search_start
    victims = ctx.framework.run_post_filter(search)
    if ctx.verifier:  # planned on the view as by removal; deferred reprieves as one by one
        wid = run.spec.workload_id
        with ctx.framework.unobserved(search_start=start):  # each twin from where the search started
            removal = _group_search(ctx, run, needed, running, terminating, How.REMOVAL)
            removed = ctx.framework.run_post_filter(removal)
        with ctx.framework.unobserved(search_start=start):
            one_by_one = ctx.framework.run_post_filter(
                _group_search(ctx, run, needed, running, terminating, How.ONE_BY_ONE))
        ctx.verifier.same(ctx.now, "victims with deferred reprieves", _ids(removed), _ids(one_by_one), wid)
        ctx.verifier.same(ctx.now, "victims planned on the view without lower priorities",
                          (_ids(victims), [(pod, node) for _, pod, node in search.plan]),
                          (_ids(removed), [(pod, node) for _, pod, node in removal.plan]), wid)
    return victims, search.plan


def _ids(groups: list[RunningGroup] | None) -> list[str]:
    return [g.workload_id if g.pod is None else f"{g.workload_id}/{g.pod}" for g in groups or []]


def terminating_below(ctx: CycleContext, priority: int) -> list[tuple[PodKey, Holding]]:
    """The pods of lower-priority workloads already being preempted: no one's victims, they
    keep their devices until they are gone."""
    holdings = ctx.state.holdings
    return [((wid, pod), holdings[(wid, pod)]) for _, runs in ctx.holdings.below(priority)
            for wid, other in runs.items() if other.terminating or other.terminating_pods
            for pod in other.holding if other.terminating or pod in other.terminating_pods]


def preemption_could_help(ctx: CycleContext, run: WorkloadRun, needed: int) -> bool:
    """Cheap necessary condition: free GPUs plus all lower-priority GPUs of accepted models
    cover the gang's request. Victim selection only runs when this holds."""
    state, models, priority = ctx.state, run.spec.gpu_models, run.spec.priority
    reclaimable = state.held_below(priority, models)  # the run's own pods are at its priority
    if ctx.verifier:
        walked = sum(state.holdings[(wid, pod)].milli for wid, other in ctx.holdings.runs.items()
                     if other.spec.priority < priority for pod in other.holding
                     if not models or state.nodes[state.holdings[(wid, pod)].node].gpu_model in models)
        ctx.verifier.same(ctx.now, "GPUs held below a priority from the index", reclaimable, walked,
                          run.spec.workload_id)
    return state.free_milli(models) + reclaimable >= needed * run.request.milli


def _enough_pods_could_fit(ctx: CycleContext, run: WorkloadRun, needed: int) -> bool:
    """Necessary for the search to find victims: with every lower-priority pod gone, the
    nodes of accepted models have room for `needed` pods by their free milli-GPUs alone
    (Σ ⌊virtual free ÷ request⌋, `scheduler/state/virtual_free.py`). Settles most failed
    attempts on a saturated cluster without taking anything off the state."""
    milli = run.request.milli
    if milli <= 0:
        return True
    could = ctx.state.virtual_free.pods_at_most(run.spec.priority, run.spec.gpu_models, milli, needed) >= needed
    if ctx.verifier and not could:  # the search this settles finds nothing either
        with ctx.framework.unobserved():
            found = _victims(ctx, run, needed)[0] or None
        ctx.verifier.same(ctx.now, "group preemption ruled out by virtual free counts", None,
                          _ids(found) if found else None, run.spec.workload_id)
    return could


def running_groups(ctx: CycleContext, priority: int, with_loss: bool) -> list[RunningGroup]:
    """The victims preemption may choose among: everything running below the preemptor's
    priority, as upstream's `getCrossNodesVictims` groups it (preemption/types.go). A
    workload whose disruption mode is All is one victim, and the started children of an
    All CompositePodGroup are one victim, evicted together; under Single (the API default)
    each of its pods is a victim of its own. Pods already terminating are no one's victims.

    Each run keeps its victims between calls (dropped when it places, starts or releases a
    pod): on a large cluster thousands of groups are candidates for every preemption, and
    rebuilding their holdings each time cost more than choosing among them."""
    groups: list[RunningGroup] = []
    composites: dict[str, list[RunningGroup]] = {}
    for level, runs in ctx.holdings.below(priority):
        for other in runs.values():
            if other.terminating:
                continue  # already going: no victim for anyone else
            victims = other.running_victims
            if victims is None:
                victims = _victims_of(ctx, other, level)
                if other.started:  # reserved only: its start time is "now", which moves on
                    other.running_victims = victims
            if with_loss:
                victims = tuple(replace(v, loss_gpu_s=loss_gpu_s(ctx.now, other, v.pod)) for v in victims)
            parent = other.spec.parent_group
            if parent and parent in ctx.composites_started and other.spec.disruption_mode is DisruptionMode.ALL:
                composites.setdefault(parent, []).extend(victims)
            else:
                groups.extend(victims)
    for parent, children in composites.items():
        groups.append(RunningGroup(
            parent, min(c.priority for c in children), min(c.started_at_s for c in children),
            tuple(h for c in children for h in c.holdings), sum(c.loss_gpu_s for c in children),
            frozenset().union(*(c.models for c in children)), is_gang=True,
            members=tuple(c.workload_id for c in children)))
    return groups


def _victims_of(ctx: CycleContext, run: WorkloadRun, level: int) -> tuple[RunningGroup, ...]:
    state, wid, now = ctx.state, run.spec.workload_id, ctx.now
    is_gang = run.spec.min_count > 1
    pods = [p for p in run.holding if p not in run.terminating_pods]
    if run.spec.disruption_mode is DisruptionMode.ALL:
        holdings = tuple(((wid, p), state.holdings[(wid, p)]) for p in pods)
        models = frozenset(state.nodes[h.node].gpu_model for _, h in holdings)
        return (RunningGroup(wid, level, min(run.started.values(), default=now), holdings, models=models,
                             is_gang=is_gang),)
    victims = []
    for pod in pods:
        holding = state.holdings[(wid, pod)]
        victims.append(RunningGroup(wid, level, run.started.get(pod, now), (((wid, pod), holding),),
                                    models=frozenset((state.nodes[holding.node].gpu_model,)), is_gang=is_gang,
                                    pod=pod))
    return tuple(victims)


def preempt_for_composite(ctx: CycleContext, parent: str, priority: int, planner: Planner) -> bool:
    """Workload-aware preemption for a CompositePodGroup whose quorum fits nowhere: victims
    whose removal lets `min_groups` children fit together. True when some were evicted."""
    if not ctx.framework.group_post_filters or not ctx.profile.preemption_frees_gpus:
        return False
    if not all(child.spec.may_preempt for child in ctx.composites[parent]):
        return False  # a child under preemptionPolicy Never: the quorum cannot preempt together
    running = [g for g in running_groups(ctx, priority, ctx.framework.post_filter_needs_loss)
               if g.workload_id != parent]
    victims = ctx.framework.run_post_filter(GroupVictimSearch(ctx, priority, planner, running))
    if not victims:
        return False
    evict_victims(ctx, victims, ctx.composites[parent][0])
    return True


def loss_gpu_s(now: float, run: WorkloadRun, pod: int | None = None) -> float:
    """GPU-seconds an eviction now would throw away: progress since the last checkpoint, of
    the whole group, or of `pod` alone when its controller keeps the others running."""
    if run.progress_start_s is None:
        return 0.0
    checkpoint = last_checkpoint_s(run.progress_start_s, now, run.spec.checkpoint_interval_s)
    starts: Iterable[float] = run.started.values()
    if pod is not None and run.spec.pod_loss_policy is not OnPodLoss.RESTART_GROUP:
        starts = [run.started[pod]] if pod in run.started else []
    return sum(run.spec.gpus_per_pod * (now - max(start, checkpoint)) for start in starts)
