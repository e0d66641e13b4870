"""What-if placement of a pod group: which node each pending pod would get, then roll back.

A plan is made on the live state inside a journal mark and always rolled back; committing
it means placing the same pods on the same nodes in the same order, which allocates the same
devices. A group with a topology constraint (required or preferred) is planned per domain of
its level (zone, block, rack), and a profile that shares one device claim per group
(DRA, `group_device_claim`) plans per GPU model; the best-ranked domain wins
(`plugins/topology.py`: more pods placed, then the tightest fit, then the name).
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.cycle.context import CycleContext
from scheduler.framework.pod_room import PLAN_COUNT_CHECK
from scheduler.framework.runtime import Diagnosis, failing_plan
from scheduler.framework.status import Code
from scheduler.model.workload import MILLI
from scheduler.plugins import topology
from scheduler.plugins.gang import placement_feasible
from scheduler.verify import Verifier
from scheduler.workload_run import WorkloadRun

Rank = tuple[int, int, str]


@dataclass(init=False)
class Plan:
    """A what-if placement of a group's pending pods: pod → node, and why the rest failed."""

    placed: list[tuple[int, int]]
    diagnosis: Diagnosis | None
    topology_note: str | None  # set when a required topology could not be met
    # Pods placed: len(placed), or what a plan that cannot succeed would place, counted
    # without its searches (`pod_room.failing_plan`; `placed` is then empty).
    count: int
    # The placed pods already hold their GPUs: the plan was committed as made, not rolled
    # back (`place_group(keep=True)`), and binding it must not allocate them again.
    kept: bool

    # Written out: mypyc compiles it, the dataclasses module's would run interpreted.
    def __init__(self, placed: list[tuple[int, int]] | None = None, diagnosis: Diagnosis | None = None,
                 topology_note: str | None = None, count: int | None = None, kept: bool = False) -> None:
        self.placed = [] if placed is None else placed
        self.diagnosis = diagnosis
        self.topology_note = topology_note
        self.count = len(self.placed) if count is None else count
        self.kept = kept


def plan_group(ctx: CycleContext, run: WorkloadRun, needed: int, explain: bool = True, keep: bool = False) -> Plan:
    """Plan the group, honouring its topology constraint (required or preferred) and, when
    the profile shares one device claim per group, one GPU model for all its pods.

    `keep`: the caller binds a plan that places `needed` pods right away, so a plan made on
    the whole cluster that does is committed as made instead of rolled back (`Plan.kept`)."""
    spec, state = run.spec, ctx.state
    level = spec.topology_required or spec.topology_preferred
    per_model = ctx.profile.group_device_claim and len(state.candidate_models(spec.gpu_models)) > 1
    if not level and not per_model:
        return whole_cluster(ctx, run, needed, explain, keep)
    candidates = topology.domains(state, spec.gpu_models, level, per_model=per_model, selector=run.request.selector)
    if run.holding:  # a satisfied elastic group grows inside the domain it already uses
        held = [state.holdings[(spec.workload_id, p)].node for p in run.holding]
        mine = topology.domain_of(state, held, level, per_model=per_model)
        candidates = [d for d in candidates if d.value == mine]
    fullest = Plan()  # the domain that came closest, for the pending message
    tried: dict[int, Plan] = {}
    best = best_domain(ctx, run, needed, candidates, explain, tried)
    if best is None and explain and (spec.topology_required or per_model):
        fullest = closest_domain(ctx, run, needed, candidates, tried)
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
        for domain in topology.domains(state, spec.gpu_models, None, per_model=True, selector=run.request.selector):
            placed, diagnosis = place_in(ctx, run, needed, domain, explain)
            if len(placed) >= needed:
                return Plan(placed, diagnosis)
        return Plan([], fullest.diagnosis)
    if level:  # preferred topology, no claim: fall back to the whole cluster
        return whole_cluster(ctx, run, needed, True, keep)
    return Plan([], fullest.diagnosis)  # one claim per group, no model had room


def whole_cluster(ctx: CycleContext, run: WorkloadRun, needed: int, explain: bool, keep: bool = False) -> Plan:
    """The group planned on the whole cluster; a plan that cannot succeed is counted from the
    free GPUs instead where the framework can (`runtime.failing_plan`, `pod_room.py`).
    `keep`: a plan that places `needed` pods stays committed (`plan_group`)."""
    counted = failing_plan(ctx.framework, ctx.state, run.request, len(run.pending), needed, explain)
    if counted is None:
        kept = keep and ctx.state.dra is None
        placed, diagnosis = place_group(ctx, run, needed, explain=explain, keep=kept)
        return Plan(placed, diagnosis, kept=kept and len(placed) >= needed)
    plan = Plan([], counted[1], count=counted[0])
    if ctx.verifier:
        _verify_counted(ctx, ctx.verifier, run, needed, explain, plan)
    return plan


def best_domain(ctx: CycleContext, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                explain: bool, tried: dict[int, Plan] | None = None) -> tuple[Rank, Plan] | None:
    """The best-ranked domain where the group fits, as trying every domain would find it,
    trying them best bound first and stopping once no untried domain can rank better.

    On a large cluster a topology-aware group has hundreds of domains, and trying each
    one scans its nodes: most are full (their free GPUs cannot hold `needed` pods) or, on
    an empty cluster, all alike, so the first one tried is the answer. `tried` receives
    each domain's plan by candidate index (for `closest_domain`, when none fits)."""
    state, milli, pods = ctx.state, run.request.milli, len(run.pending)
    bounded = sorted((topology.best_possible_rank(state, domain, pods, milli), index)
                     for index, domain in enumerate(candidates))
    best: tuple[Rank, Plan] | None = None
    for bound, index in bounded:
        if -bound[0] < needed or (best is not None and bound > best[0]):
            break  # every domain left holds too few pods, or ranks below the best found
        domain = candidates[index]
        placed, diagnosis = place_in(ctx, run, needed, domain, explain)
        if tried is not None:
            tried[index] = Plan(placed, diagnosis)
        if len(placed) >= needed:
            rank = topology.placement_rank(state, domain, len(placed), milli)
            if best is None or rank < best[0]:
                best = (rank, Plan(placed, diagnosis))
    if ctx.verifier:
        _verify_best_domain(ctx, ctx.verifier, run, needed, candidates, explain, best)
    return best


def every_domain(ctx: CycleContext, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                 explain: bool) -> tuple[tuple[Rank, Plan] | None, Plan]:
    """Every domain tried (the plain way): the best-ranked where the group fits, and the
    first, in candidate order, of those where most of its pods fit (for the message)."""
    best: tuple[Rank, Plan] | None = None
    fullest = Plan()
    for domain in candidates:
        placed, diagnosis = place_in(ctx, run, needed, domain, explain)
        if len(placed) >= needed:
            rank = topology.placement_rank(ctx.state, domain, len(placed), run.request.milli)
            if best is None or rank < best[0]:
                best = (rank, Plan(placed, diagnosis))
        elif fullest.diagnosis is None or len(placed) > len(fullest.placed):
            fullest = Plan(placed, diagnosis)
    return best, fullest


def closest_domain(ctx: CycleContext, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                   tried: dict[int, Plan] | None = None) -> Plan:
    """When no domain holds the group: the first domain, in candidate order, of those where
    planning places the most pods, and its plan and diagnosis, as `every_domain` finds it.

    Domains are tried by their bound on pods (`best_possible_rank`), most first, until no
    untried domain can beat the most placed; then the first domain in candidate order that
    could tie is looked for among those whose bound reaches it. Placing is greedy and
    stops once `needed` is out of reach, so no domain places more than its bound.

    `tried`: the plans `best_domain` made (explained) on the same state, reused rather than
    made again. Plans roll back and keep the search start, so a plan made twice is the same
    plan, but a scorer that draws random numbers would draw again: its profile re-plans."""
    state, milli, pods = ctx.state, run.request.milli, len(run.pending)
    made = dict(tried) if tried and not ctx.framework.draws_scores else {}
    bounds = [-topology.best_possible_rank(state, domain, pods, milli)[0] for domain in candidates]
    counts = {index: len(plan.placed) for index, plan in made.items()}
    most = max(counts.values(), default=0)
    for index in sorted(range(len(candidates)), key=lambda i: (-bounds[i], i)):
        if index in counts:
            continue
        if counts and bounds[index] <= most:
            break
        counts[index] = len(place_in(ctx, run, needed, candidates[index], explain=False)[0])
        most = max(most, counts[index])
    fullest = Plan()
    for index, domain in enumerate(candidates):
        if bounds[index] < most:
            continue
        count = counts.get(index)
        if count is None:
            count = len(place_in(ctx, run, needed, domain, explain=False)[0])
        if count == most:
            fullest = made[index] if index in made else Plan(*place_in(ctx, run, needed, domain, explain=True))
            break
    if ctx.verifier:
        walked = every_domain(ctx, run, needed, candidates, True)[1]
        ctx.verifier.same(ctx.now, "closest topology domain from a bounded search",
                          (fullest.placed, fullest.diagnosis), (walked.placed, walked.diagnosis), run.spec.workload_id)
    return fullest


def _verify_counted(ctx: CycleContext, verifier: Verifier, run: WorkloadRun, needed: int, explain: bool,
                    plan: Plan) -> None:
    """A failing plan counted (`pod_room.failing_plan`) against the plan made: the pods it
    places, where it leaves the search start and its first failure's diagnosis."""
    framework = ctx.framework
    start = framework.search_start
    with framework.unobserved():
        placed, diagnosis = place_group(ctx, run, needed, explain=explain)
        walked_start = framework.search_start
    verifier.same(ctx.now, PLAN_COUNT_CHECK, (plan.count, start, _facts(plan.diagnosis)),
                  (len(placed), walked_start, _facts(diagnosis) if explain else None), run.spec.workload_id)


def _facts(diagnosis: Diagnosis | None) -> tuple[object, ...] | None:
    if diagnosis is None:
        return None
    return diagnosis.message(), sorted(diagnosis.unresolvable), sorted(diagnosis.short_of)


def _verify_best_domain(ctx: CycleContext, verifier: Verifier, run: WorkloadRun, needed: int, candidates: list[topology.Domain],
                        explain: bool, best: tuple[Rank, Plan] | None) -> None:
    """The bounded search found what trying every domain finds; running sums are sums."""
    state = ctx.state
    walked: tuple[Rank, list[tuple[int, int]]] | None = None
    for domain in candidates:
        free = sum(state.nodes[n].gpus * MILLI - state.used_milli(n) for n in domain.nodes)
        verifier.same(ctx.now, "free GPUs of a topology domain from running sums",
                      topology.domain_free_milli(state, domain), free)
        placed, _ = place_in(ctx, run, needed, domain, explain)
        if len(placed) >= needed:
            rank = topology.placement_rank(state, domain, len(placed), run.request.milli)
            if walked is None or rank < walked[0]:
                walked = (rank, placed)
    found = None if best is None else (best[0], best[1].placed)
    verifier.same(ctx.now, "best topology domain from a bounded search", found, walked, run.spec.workload_id)


def place_in(ctx: CycleContext, run: WorkloadRun, needed: int, domain: topology.Domain,
             explain: bool = True) -> tuple[list[tuple[int, int]], Diagnosis | None]:
    """Place within one domain. A whole-model domain is a model constraint, not a node
    list, so the usage index can answer instead of a scan of the domain's nodes. Whatever
    the order domains are tried in, each starts its node search at the same index."""
    with ctx.framework.search_start_kept():
        if domain.level == "gpu_model":
            return place_group(ctx, run, needed, models=(domain.value,), explain=explain)
        return place_group(ctx, run, needed, domain.nodes, explain=explain)


def place_group(
    ctx: CycleContext, run: WorkloadRun, needed: int, nodes: list[int] | None = None,
    models: tuple[str, ...] | None = None, explain: bool = True, keep: bool = False,
) -> tuple[list[tuple[int, int]], Diagnosis | None]:
    """Plan pod → node for the pending pods on the live state, then roll back.

    `nodes` restricts the candidates (one topology domain), `models` the GPU models.
    `keep` (never under DRA): a plan that places `needed` pods is committed instead, for a
    caller that binds it at once. Binding after a rollback allocates, from the state the plan
    started from, the same pods on the same nodes in the same order: the same devices and the
    same index moves the plan made, so committing skips the undo and the redo. What binding
    does besides (nominations dropped, the holders' index, the rows) reads nothing an
    allocation changes, and nothing runs between the plan and its binding."""
    state, framework = ctx.state, ctx.framework
    wid = run.spec.workload_id
    request = run.request if models is None else run.request.with_models(models)
    pods = sorted(run.pending)
    placed: list[tuple[int, int]] = []
    first_failure: Diagnosis | None = None
    mark = state.mark()
    committed = False
    try:
        for tried, pod in enumerate(pods, start=1):
            nominated = state.nominations.node_of(wid, pod) if state.nominations else None
            node, diagnosis = framework.find_node(state, request, nodes, explain and first_failure is None, (wid, pod),
                                                  nominated)
            if node is not None:
                state.allocate((wid, pod), node, run.request)
                placed.append((pod, node))
            elif first_failure is None:
                first_failure = diagnosis
            if placement_feasible(needed, len(placed), len(pods) - tried).code is Code.UNSCHEDULABLE:
                break  # early rejection: min_count can no longer be reached
        committed = keep and len(placed) >= needed
    finally:
        if committed:
            state.commit(mark)
        else:
            state.rollback(mark)
    return placed, first_failure
