"""CompositePodGroup (KEP-6012 shape): child pod groups scheduled together, top-down.

No child starts until `min_groups` children (each with its own min_count) fit at once,
within one domain of the parent's topology level when it has one. Once the quorum has
started, the remaining children are placed like any group.
"""

from __future__ import annotations

from scheduler.cycle.context import CycleContext
from scheduler.cycle.group_preemption import preempt_for_composite
from scheduler.cycle.outcome import Outcome
from scheduler.cycle.planning import Rank, place_group
from scheduler.eventlog.schema import PendingReason
from scheduler.plugins import topology
from scheduler.workload_run import WorkloadRun

ChildPlans = list[tuple[WorkloadRun, list[tuple[int, int]]]]


def schedule_composite(ctx: CycleContext, parent: str, run: WorkloadRun) -> Outcome:
    children = ctx.composites[parent]
    first = children[0].spec
    min_groups = first.parent_min_groups or len(children)
    level = next((c.spec.parent_topology_required for c in children if c.spec.parent_topology_required), None)
    waiting = [c for c in children if c.arrived and not c.done and c.pending]
    # 1. PreEnqueue: the quorum of child groups must have arrived.
    if len(waiting) < min_groups:
        for child in waiting:
            ctx.emitter.pending(child, PendingReason.WAITING_FOR_GANG,
                                f"composite pod group {parent} waits for quorum: {len(waiting)} of {min_groups} "
                                "child groups have arrived")
        return Outcome.FAILED
    # 2. Plan every child in each candidate domain, siblings assumed together; roll back.
    best = _best_plans(ctx, waiting, min_groups, level)
    # 3. PostFilter: workload-aware preemption for the quorum, unless its victims still terminate.
    awaiting = max(child.awaiting_victims_until for child in children)
    if best is None and awaiting <= ctx.now:
        def planner() -> list[tuple[WorkloadRun, int, int]] | None:
            plans = _best_plans(ctx, waiting, min_groups, level)
            return None if plans is None else [(child, pod, node) for child, placed in plans for pod, node in placed]

        priority = max(child.spec.priority for child in waiting)
        if preempt_for_composite(ctx, parent, priority, planner):
            best = _best_plans(ctx, waiting, min_groups, level)
            awaiting = max(child.awaiting_victims_until for child in children)
    if best is None and awaiting > ctx.now:
        for child in waiting:
            ctx.emitter.pending(child, PendingReason.WAITING_FOR_PREEMPTED,
                                f"composite pod group {parent}: waiting for the pods of the workloads it preempted "
                                f"to terminate (grace period ends at t={awaiting:g}s)")
        return Outcome.FAILED_GPU
    # 4. Unschedulable: every waiting child says why.
    if best is None:
        where = f" within one {level}" if level else ""
        for child in waiting:
            ctx.emitter.pending(child, PendingReason.GANG_NOT_SATISFIABLE,
                                f"composite pod group {parent}: fewer than {min_groups} of {len(waiting)} child groups "
                                f"fit together{where}")
        return Outcome.FAILED_GPU
    # 5. Bind: the quorum starts together.
    ctx.composites_started.add(parent)
    for child, placed in best:
        for pod, node in placed:
            ctx.actions.place(child, pod, node, reserve=False)
        ctx.actions.maybe_start_progress(child)
    return Outcome.PLACED if not run.pending else Outcome.FAILED_GPU


def _best_plans(ctx: CycleContext, waiting: list[WorkloadRun], min_groups: int, level: str | None) -> ChildPlans | None:
    state = ctx.state
    domains: list[topology.Domain | None] = list(topology.domains(state, (), level)) if level else [None]
    best: tuple[Rank, ChildPlans] | None = None
    for domain in domains:
        nodes = domain.nodes if domain else None
        mark = state.mark()
        try:
            plans: ChildPlans = []
            for child in waiting:  # siblings share the domain: keep each child's plan assumed
                needed = child.pods_needed
                placed, _ = place_group(ctx, child, needed, nodes)
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
    return best[1] if best else None
