"""One scheduling attempt for one queued entity: a pod group or a single pod.

`attempt` returns an `Outcome`: PLACED when the entity needs no further attempt (placed,
or gone); FAILED_GPU when it failed for GPU reasons alone, so that every entity of the same
`gpu_shape` would fail the same way until GPUs are released; FAILED otherwise (e.g. CPU or
memory). Every failure leaves a reason.

Pod-group cycle (profiles with unit = "pod_group", gang-v1.37):
  1. Fast reject: fewer free GPUs of an accepted model than the gang needs.
  2. Try the pending pods one by one against the live state under a journal mark
     (filter → score → assume); stop early once min_count is out of reach.
  3. Enough placed: keep them and bind (pods start together). Not enough: roll back.
  4. Workload-aware preemption (PostFilter): choose whole lower-priority groups whose
     removal lets the gang fit, evict them, and place the gang on the freed GPUs.
  5. Otherwise record why the group is pending.

Pod cycle (unit = "pod": kube-default, gang-v1.35):
  1. Filter → score → one node for this pod, or per-pod preemption on one node.
  2. With a gang Permit the pod is reserved and waits until min_count are reserved
     (one shared deadline); without it the pod starts at once, and if its group never
     completes the training framework's rendezvous gives up after a time-out.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from enum import Enum

from scheduler.eventlog.schema import PendingReason, last_checkpoint_s
from scheduler.framework.runtime import Diagnosis
from scheduler.framework.status import Code
from scheduler.model.workload import MILLI
from scheduler.plugins import topology
from scheduler.plugins.gang import placement_feasible
from scheduler.plugins.gpu_fit import INSUFFICIENT_CPU, INSUFFICIENT_MEMORY
from scheduler.plugins.preemption import DefaultPreemption, RunningGroup, WorkloadPreemption
from scheduler.runner import Replay
from scheduler.state import PodKey
from scheduler.workload_run import GROUP, WorkloadRun


class Outcome(Enum):
    PLACED = "placed"
    FAILED_GPU = "failed for GPU reasons alone"
    FAILED = "failed"


def gpu_shape(run: WorkloadRun, pod: int) -> Hashable:
    """Everything that decides an attempt's outcome except CPU and memory.

    Two entities with equal shapes, tried on the same cluster state, fail alike when the
    failure is about GPUs alone. Whoever adds an input to an attempt (topology, composite
    groups, nomination, …) must add it here too."""
    request, spec = run.request, run.spec
    if pod != GROUP:
        return ("pod", request.milli, request.models, spec.priority)
    return ("group", request.milli, request.models, spec.priority, _needed(run), len(run.pending),
            spec.topology_required, spec.topology_preferred, spec.parent_group)


def _failure(diagnosis: Diagnosis | None) -> Outcome:
    if diagnosis is not None and (diagnosis.reasons.get(INSUFFICIENT_CPU) or diagnosis.reasons.get(INSUFFICIENT_MEMORY)):
        return Outcome.FAILED
    return Outcome.FAILED_GPU


def attempt(replay: Replay, run: WorkloadRun, pod: int) -> Outcome:
    if run.done:
        return Outcome.PLACED
    if pod == GROUP:
        return _attempt_group(replay, run) if run.pending else Outcome.PLACED
    if pod not in run.pending:
        return Outcome.PLACED
    return _attempt_pod(replay, run, pod)


# -- pod groups ------------------------------------------------------------------------


def _needed(run: WorkloadRun) -> int:
    """Pods that must fit in this cycle: the rest of min_count, or 1 once satisfied."""
    if run.satisfied:
        return 1
    return max(1, run.min_count - len(run.holding))


@dataclass
class Plan:
    """A what-if placement of a group's pending pods: pod → node, and why the rest failed."""

    placed: list[tuple[int, int]] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    topology_note: str | None = None  # set when a required topology could not be met


def _plan_group(replay: Replay, run: WorkloadRun, needed: int, explain: bool = True) -> Plan:
    """Plan the group, honouring its topology constraint (required or preferred) and, when
    the profile shares one device claim per group, one GPU model for all its pods."""
    spec, state = run.spec, replay.state
    level = spec.topology_required or spec.topology_preferred
    per_model = replay.profile.group_device_claim and len(state.candidate_models(spec.gpu_models)) > 1
    if not level and not per_model:
        return Plan(*_place_group(replay, run, needed, explain=explain))
    candidates = topology.domains(state, spec.gpu_models, level, per_model=per_model)
    if run.holding:  # a satisfied elastic group grows inside the domain it already uses
        held = [state.holdings[(spec.workload_id, p)].node for p in run.holding]
        mine = topology.domain_of(state, held, level, per_model=per_model)
        candidates = [d for d in candidates if d.value == mine]
    best: tuple[tuple[int, int, str], Plan] | None = None
    fullest = Plan()  # the domain that came closest, for the pending message
    if explain and (spec.topology_required or per_model):
        # The message names the domain that came closest: every domain is tried.
        for domain in candidates:
            placed, diagnosis = _place_in(replay, run, needed, domain, explain)
            if len(placed) >= needed:
                rank = topology.placement_rank(state, domain, len(placed), run.request.milli)
                if best is None or rank < best[0]:
                    best = (rank, Plan(placed, diagnosis))
            elif fullest.diagnosis is None or len(placed) > len(fullest.placed):
                fullest = Plan(placed, diagnosis)
    else:
        best = _best_domain(replay, run, needed, candidates, explain)
    if best is not None:
        return best[1]
    if spec.topology_required:
        where = f"{level}" if not per_model else f"{level} of one GPU model"
        note = (
            f"no {where} can hold {needed} pods x {spec.gpus_per_pod:g} GPUs "
            f"({spec.gpu_model_label or 'any model'}) together; the best of {len(candidates)} "
            f"{level}s fits {len(fullest.placed)}"
        )
        return Plan([], None, note)
    if level and per_model:  # preferred topology: fall back to one GPU model anywhere
        for domain in topology.domains(state, spec.gpu_models, None, per_model=True):
            placed, diagnosis = _place_in(replay, run, needed, domain, explain)
            if len(placed) >= needed:
                return Plan(placed, diagnosis)
        return Plan([], fullest.diagnosis)
    if level:  # preferred topology, no claim: fall back to the whole cluster
        return Plan(*_place_group(replay, run, needed))
    return Plan([], fullest.diagnosis)  # one claim per group, no model had room


def _best_domain(replay: Replay, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                 explain: bool) -> tuple[tuple[int, int, str], Plan] | None:
    """The best-ranked domain where the group fits, as trying every domain would find it,
    trying them best bound first and stopping once no untried domain can rank better.

    On a large cluster a topology-aware group has hundreds of domains, and trying each
    one scans its nodes: most are full (their free GPUs cannot hold `needed` pods) or, on
    an empty cluster, all alike, so the first one tried is the answer."""
    state, milli, pods = replay.state, run.request.milli, len(run.pending)
    bounded = sorted((topology.best_possible_rank(state, domain, pods, milli), index)
                     for index, domain in enumerate(candidates))
    best: tuple[tuple[int, int, str], Plan] | None = None
    for bound, index in bounded:
        if -bound[0] < needed or (best is not None and bound > best[0]):
            break  # every domain left holds too few pods, or ranks below the best found
        domain = candidates[index]
        placed, diagnosis = _place_in(replay, run, needed, domain, explain)
        if len(placed) >= needed:
            rank = topology.placement_rank(state, domain, len(placed), milli)
            if best is None or rank < best[0]:
                best = (rank, Plan(placed, diagnosis))
    if __debug__ and _CHECK_INDEX:
        _assert_same_best_domain(replay, run, needed, candidates, explain, best)
    return best


def _assert_same_best_domain(replay: Replay, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                             explain: bool, best: tuple[tuple[int, int, str], Plan] | None) -> None:
    """Tests: the bounded search found what trying every domain finds."""
    state = replay.state
    walked = None
    for domain in candidates:
        free = sum(state.nodes[n].gpus * MILLI - state.used_milli(n) for n in domain.nodes)
        assert topology.domain_free_milli(state, domain) == free, (domain.value, free)
        placed, _ = _place_in(replay, run, needed, domain, explain)
        if len(placed) >= needed:
            rank = topology.placement_rank(state, domain, len(placed), run.request.milli)
            if walked is None or rank < walked[0]:
                walked = (rank, placed)
    assert (walked is None) == (best is None), (walked, best)
    assert walked is None or best is None or (walked[0], walked[1]) == (best[0], best[1].placed), (walked, best)


def _place_in(replay: Replay, run: WorkloadRun, needed: int, domain: topology.Domain,
              explain: bool = True) -> tuple[list[tuple[int, int]], Diagnosis | None]:
    """Place within one domain. A whole-model domain is a model constraint, not a node
    list, so the usage index can answer instead of a scan of the domain's nodes."""
    if domain.level == "gpu_model":
        return _place_group(replay, run, needed, models=(domain.value,), explain=explain)
    return _place_group(replay, run, needed, domain.nodes, explain=explain)


def _place_group(
    replay: Replay, run: WorkloadRun, needed: int, nodes: list[int] | None = None,
    models: tuple[str, ...] | None = None, explain: bool = True,
) -> tuple[list[tuple[int, int]], Diagnosis | None]:
    """Plan pod → node for the pending pods on the live state, then roll back.

    The plan is a what-if: committing it means placing the same pods on the same nodes in
    the same order, which allocates the same devices. `nodes` restricts the candidates
    (one topology domain)."""
    state, framework = replay.state, replay.framework
    wid = run.spec.workload_id
    request = run.request if models is None else replace(run.request, models=models)
    pods = sorted(run.pending)
    placed: list[tuple[int, int]] = []
    first_failure: Diagnosis | None = None
    mark = state.mark()
    try:
        for tried, pod in enumerate(pods, start=1):
            node, diagnosis = framework.find_node(state, request, nodes, explain and first_failure is None)
            if node is not None:
                state.allocate((wid, pod), node, run.request)
                placed.append((pod, node))
            elif first_failure is None:
                first_failure = diagnosis
            if placement_feasible(needed, len(placed), len(pods) - tried).code is Code.UNSCHEDULABLE:
                break  # early rejection: min_count can no longer be reached
    finally:
        state.rollback(mark)
    return placed, first_failure


def _attempt_group(replay: Replay, run: WorkloadRun) -> Outcome:
    spec = run.spec
    if spec.parent_group and spec.parent_group not in replay.composites_started:
        return _attempt_composite(replay, spec.parent_group, run)
    needed = _needed(run)
    shortfall = needed * run.request.milli - replay.state.free_milli(spec.gpu_models)
    plan = Plan()
    if shortfall <= 0:
        plan = _plan_group(replay, run, needed)
    if len(plan.placed) < needed and _preempt_for_group(replay, run, needed):
        plan = _plan_group(replay, run, needed)
    if len(plan.placed) >= needed:
        for pod, node in plan.placed:
            replay.place(run, pod, node, reserve=False)
        replay.maybe_start_progress(run)
        if not run.pending:
            return Outcome.PLACED
        # An elastic group got min_count and more; the rest did not fit (for now).
        return _failure(plan.diagnosis)
    if plan.topology_note is not None:
        replay.pending(run, PendingReason.TOPOLOGY_UNSATISFIABLE, f"topology {spec.topology_required} required: {plan.topology_note}")
        return Outcome.FAILED_GPU
    _group_pending(replay, run, needed, len(plan.placed), plan.diagnosis, shortfall)
    return _failure(plan.diagnosis)


def _group_pending(replay: Replay, run: WorkloadRun, needed: int, placed: int, diagnosis: Diagnosis | None, shortfall: int) -> None:
    spec = run.spec
    models = spec.gpu_model_label or "any model"
    if shortfall > 0:
        free = replay.state.free_milli(spec.gpu_models) / MILLI
        detail = (
            f"needs {needed} pods x {spec.gpus_per_pod:g} GPUs ({models}) = "
            f"{needed * spec.gpus_per_pod:g} GPUs, {free:g} free in the cluster"
        )
    else:
        detail = diagnosis.message() if diagnosis else "no placement found"
    if run.min_count > 1 or needed > 1:
        reason = PendingReason.GANG_NOT_SATISFIABLE
        message = (
            f"gang not satisfiable: {placed} of {needed} required pods placed, "
            f"{len(run.pending) - placed} remaining (min_count {run.min_count}); {detail}"
        )
    else:
        reason, message = PendingReason.UNSCHEDULABLE, detail
    replay.pending(run, reason, message)


# -- composite pod groups ---------------------------------------------------------------


def _attempt_composite(replay: Replay, parent: str, run: WorkloadRun) -> Outcome:
    """CompositePodGroup (KEP-6012 shape): the children are scheduled together, top-down.

    No child starts until `min_groups` children (each with its own min_count) fit at once,
    within one domain of the parent's topology level when it has one. Once the quorum has
    started, the remaining children are placed like any group."""
    children = replay.composites[parent]
    first = children[0].spec
    min_groups = first.parent_min_groups or len(children)
    level = next((c.spec.parent_topology_required for c in children if c.spec.parent_topology_required), None)
    waiting = [c for c in children if c.arrived and not c.done and c.pending]
    if len(waiting) < min_groups:
        for child in waiting:
            replay.pending(child, PendingReason.WAITING_FOR_GANG,
                           f"composite pod group {parent} waits for quorum: {len(waiting)} of {min_groups} "
                           "child groups have arrived")
        return Outcome.FAILED
    state = replay.state
    domains = topology.domains(state, (), level) if level else [None]
    best: tuple[tuple[int, int, str], list[tuple[WorkloadRun, list[tuple[int, int]]]]] | None = None
    for domain in domains:
        nodes = domain.nodes if domain else None
        mark = state.mark()
        try:
            plans = []
            for child in waiting:  # siblings share the domain: keep each child's plan assumed
                needed = _needed(child)
                placed, _ = _place_group(replay, child, needed, nodes)
                if len(placed) >= needed:
                    for pod, node in placed:
                        state.allocate((child.spec.workload_id, pod), node, child.request)
                    plans.append((child, placed))
        finally:
            state.rollback(mark)
        if len(plans) >= min_groups:
            placed_pods = sum(len(p) for _, p in plans)
            rank = (-len(plans), -placed_pods, domain.value if domain else "")
            if best is None or rank < best[0]:
                best = (rank, plans)
    if best is None:
        where = f" within one {level}" if level else ""
        for child in waiting:
            replay.pending(child, PendingReason.GANG_NOT_SATISFIABLE,
                           f"composite pod group {parent}: fewer than {min_groups} of {len(waiting)} child groups "
                           f"fit together{where}")
        return Outcome.FAILED_GPU
    replay.composites_started.add(parent)
    for child, placed in best[1]:
        for pod, node in placed:
            replay.place(child, pod, node, reserve=False)
        replay.maybe_start_progress(child)
    return Outcome.PLACED if not run.pending else Outcome.FAILED_GPU


def _running_groups(replay: Replay, preemptor: WorkloadRun, with_loss: bool) -> list[RunningGroup]:
    """Running groups of lower priority than the preemptor: the only possible victims.

    Each run keeps its group between calls (dropped when it places, starts or releases a
    pod): on a large cluster thousands of groups are candidates for every preemption, and
    rebuilding their holdings each time cost more than choosing among them."""
    groups = []
    nodes = replay.state.nodes
    for level, runs in replay.holding_by_priority.items():
        if level >= preemptor.spec.priority:
            continue
        for wid, other in runs.items():
            group = other.running_group
            if group is None:
                holdings = tuple(((wid, p), replay.state.holdings[(wid, p)]) for p in other.holding)
                models = frozenset(nodes[h.node].gpu_model for _, h in holdings)
                group = RunningGroup(wid, level, min(other.started.values(), default=replay.env.now), holdings, models=models)
                if other.started:  # reserved only: its start time is "now", which moves on
                    other.running_group = group
            if with_loss:
                group = replace(group, loss_gpu_s=_loss_gpu_s(replay, other))
            groups.append(group)
    return groups


def _loss_gpu_s(replay: Replay, run: WorkloadRun) -> float:
    """GPU-seconds an eviction now would throw away: progress since the last checkpoint."""
    if run.progress_start_s is None:
        return 0.0
    now = replay.env.now
    checkpoint = last_checkpoint_s(run.progress_start_s, now, run.spec.checkpoint_interval_s)
    return sum(run.spec.gpus_per_pod * (now - max(start, checkpoint)) for start in run.started.values())


_CHECK_INDEX = False  # tests turn it on: each index and bounded search against a walk over everything


def _preemption_could_help(replay: Replay, run: WorkloadRun, needed: int) -> bool:
    """Cheap necessary condition: free GPUs plus all lower-priority GPUs of accepted models
    cover the gang's request. Victim selection only runs when this holds."""
    state, models, priority = replay.state, run.spec.gpu_models, run.spec.priority
    reclaimable = state.held_below(priority, models)  # the run's own pods are at its priority
    if __debug__ and _CHECK_INDEX:
        walked = sum(state.holdings[(wid, pod)].milli for wid, other in replay.holding_runs.items()
                     if other.spec.priority < priority for pod in other.holding
                     if not models or state.nodes[state.holdings[(wid, pod)].node].gpu_model in models)
        assert walked == reclaimable, (walked, reclaimable)
    return state.free_milli(models) + reclaimable >= needed * run.request.milli


def _preempt_for_group(replay: Replay, run: WorkloadRun, needed: int) -> bool:
    plugin = next((p for p in replay.framework.post_filter if isinstance(p, WorkloadPreemption)), None)
    version = replay.preemption_version(run.spec.priority, run.spec.gpu_models)
    if plugin is None or run.preemption_failed_at == version:
        return False
    if not _preemption_could_help(replay, run, needed):
        run.preemption_failed_at = version
        return False
    groups = _running_groups(replay, run, plugin.needs_loss)

    plan_nodes: set[int] = set()

    def fits(restored: RunningGroup | None) -> bool:
        # A reprieve on nodes the last fitting plan does not use leaves that plan valid:
        # the preemptor still fits, and no placement needs recomputing.
        if restored is not None and plan_nodes and not any(h.node in plan_nodes for _, h in restored.holdings):
            return True
        plan = _plan_group(replay, run, needed, explain=False)
        if len(plan.placed) < needed:
            return False
        plan_nodes.clear()
        plan_nodes.update(node for _, node in plan.placed)
        return True

    models = run.spec.gpu_models
    state = replay.state

    def matters(group: RunningGroup) -> bool:
        return not models or not group.models.isdisjoint(models)

    def enough_free(withheld: int) -> bool:
        return state.free_milli(models) - withheld >= needed * run.request.milli

    def usable_milli(group: RunningGroup) -> int:
        return sum(h.milli for _, h in group.holdings if not models or state.nodes[h.node].gpu_model in models)

    def keeps_plan(group: RunningGroup) -> bool:
        return bool(plan_nodes) and not any(h.node in plan_nodes for _, h in group.holdings)

    def choose(defer: bool) -> list[RunningGroup] | None:
        plan_nodes.clear()
        return plugin.select_victims(state, run.spec.priority, groups, fits, matters, enough_free, usable_milli,
                                     keeps_plan if defer else lambda group: False)

    victims = choose(defer=True)
    if __debug__ and _CHECK_INDEX:  # deferred reprieves choose what putting each back at once chooses
        undeferred = choose(defer=False)
        assert [g.workload_id for g in victims or []] == [g.workload_id for g in undeferred or []], (victims, undeferred)
    if not victims:
        run.preemption_failed_at = version
        return False
    for victim in victims:
        replay.evict(replay.runs[victim.workload_id], run)
    replay.capacity_released()
    return True


# -- single pods -----------------------------------------------------------------------


def _attempt_pod(replay: Replay, run: WorkloadRun, pod: int) -> Outcome:
    state, framework = replay.state, replay.framework
    node, diagnosis = framework.find_node(state, run.request)
    if node is None:
        node = _preempt_for_pod(replay, run, diagnosis)
    if node is None:
        held = len(run.holding)
        gang = f"; {held} of {run.min_count} pods of the group placed" if run.min_count > 1 else ""
        detail = diagnosis.message() if diagnosis else "no node fits"
        replay.pending(run, PendingReason.UNSCHEDULABLE, f"pod {pod}: {detail}{gang}")
        _maybe_reject_group(replay, run)
        return _failure(diagnosis)
    permit = replay.gang_permit
    if permit is not None and not run.satisfied and run.min_count > 1:
        replay.place(run, pod, node, reserve=True)
        if permit.permit(len(run.holding), run.min_count).ok:
            replay.start_reserved(run)
        else:
            replay.arm_deadline(run, permit.timeout_s, "GangPermitTimeout")
            replay.waiting_gangs[run.spec.workload_id] = run
        return Outcome.PLACED
    replay.place(run, pod, node, reserve=False)
    if not run.satisfied:
        replay.maybe_start_progress(run)
        if not run.satisfied:
            replay.arm_deadline(run, replay.profile.rendezvous_timeout_s, "RendezvousTimeout")
            replay.waiting_gangs[run.spec.workload_id] = run
    return Outcome.PLACED


def _maybe_reject_group(replay: Replay, run: WorkloadRun) -> None:
    """Coscheduling's PostFilter: when one pod of a gang fails and more than
    `reject_percentage` % of min_count is still unassigned, reject the whole group now
    ("optimistic rejection") instead of holding its reservations until the Permit times out."""
    permit = replay.gang_permit
    if permit is None or permit.reject_percentage is None or run.satisfied or not run.reserved:
        return
    unassigned = run.min_count - len(run.holding)
    if unassigned * 100 > permit.reject_percentage * run.min_count:
        replay.release_gang(
            run,
            "GangRejected",
            f"GangRejected: a pod could not be placed with {unassigned} of {run.min_count} required "
            f"pods unassigned (> {permit.reject_percentage:g}%); released {len(run.holding)} reserved pods",
            backoff_s=permit.group_backoff_s,
        )


def _preempt_for_pod(replay: Replay, run: WorkloadRun, diagnosis: Diagnosis | None) -> int | None:
    plugin = next((p for p in replay.framework.post_filter if isinstance(p, DefaultPreemption)), None)
    version = replay.preemption_version(run.spec.priority, run.spec.gpu_models)
    if plugin is None or run.preemption_failed_at == version:
        return None
    if not any(o.spec.priority < run.spec.priority for o in replay.holding_runs.values()):
        run.preemption_failed_at = version
        return None
    state, framework = replay.state, replay.framework
    unresolvable = diagnosis.unresolvable if diagnosis else set()
    nodes = [n for n in state.candidate_nodes(run.request.models) if n not in unresolvable]

    def priority_of(key: PodKey) -> int:
        return replay.runs[key[0]].spec.priority

    def started_at(key: PodKey) -> float:
        return replay.runs[key[0]].started.get(key[1], replay.env.now)

    choice = plugin.select_victims(
        state, run.spec.priority, priority_of, started_at, nodes,
        lambda node: framework.feasible(state, run.request, node),
    )
    if choice is None:
        run.preemption_failed_at = version
        return None
    # A distributed job cannot lose one worker and go on: evicting any of its pods
    # evicts the whole workload (its controller restarts it from the last checkpoint).
    for wid in sorted({key[0] for key in choice.pods}):
        replay.evict(replay.runs[wid], run)
    replay.capacity_released()
    return choice.node


def report_waiting_gangs(replay: Replay) -> None:
    """After a pod cycle: say why each gang that got pods but not min_count still waits.

    Written once per cycle rather than per pod, so a gang whose pods all land in the same
    cycle never shows a passing "1 of 4" state."""
    for run in replay.waiting_gangs.values():
        if run.done or run.satisfied or not run.holding:
            continue
        if run.reserved:
            message = (f"waiting at the Permit barrier: {len(run.holding)} of {run.min_count} "
                       "pods reserved, holding their GPUs")
        else:
            message = (f"partially placed: {len(run.started)} of {run.min_count} pods running; "
                       "the job cannot make progress until all are")
        replay.pending(run, PendingReason.WAITING_FOR_GANG, message)
    replay.waiting_gangs.clear()
