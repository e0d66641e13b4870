"""The pod-group cycle (profiles with unit = pod_group: gang-v1.37), in named phases.

As kube-scheduler's schedule_one reads, for a whole group in one cycle:

  1. PreFilter: fewer free GPUs of an accepted model than the gang needs fails fast.
  2. Filter + Score: plan the pending pods one by one on a what-if of the live state
     (filter → score → assume), stopping early once min_count is out of reach; the plan is
     rolled back (`planning.py`).
  3. PostFilter: if too few pods fit, workload-aware preemption evicts whole lower-priority
     groups whose removal lets the gang fit, and the group is planned again.
  4. Reserve + Bind: enough pods fit: they are placed as planned and start together.
  5. Unschedulable: otherwise the group says why it is pending.

A child of a CompositePodGroup whose parent's quorum has not started yet is scheduled
with its siblings instead (`composite.py`).
"""

from __future__ import annotations

from scheduler.cycle.composite import schedule_composite
from scheduler.cycle.context import CycleContext
from scheduler.cycle.group_preemption import preempt_for_group
from scheduler.cycle.outcome import Outcome, failure_of
from scheduler.cycle.planning import Plan, plan_group
from scheduler.eventlog.schema import PendingReason
from scheduler.framework.runtime import Diagnosis
from scheduler.model.workload import MILLI
from scheduler.workload_run import WorkloadRun


def schedule_group(ctx: CycleContext, run: WorkloadRun) -> Outcome:
    spec = run.spec
    if spec.parent_group and spec.parent_group not in ctx.composites_started:
        return schedule_composite(ctx, spec.parent_group, run)
    needed = run.pods_needed
    # 1. PreFilter
    shortfall = needed * run.request.milli - ctx.state.free_milli(spec.gpu_models)
    # 2. Filter + Score, on a what-if
    plan = plan_group(ctx, run, needed, keep=True) if shortfall <= 0 else Plan()
    # 3. PostFilter (not while the victims of its last preemption still terminate)
    if plan.count < needed:
        if run.awaiting_victims_until <= ctx.now:
            if preempt_for_group(ctx, run, needed):
                plan = plan_group(ctx, run, needed, keep=True)
            elif ctx.state.nominations:  # nothing to preempt: upstream clears the nominated nodes
                ctx.state.drop_nominations(run.spec.workload_id)
        if plan.count < needed and run.awaiting_victims_until > ctx.now:
            ctx.emitter.pending(run, PendingReason.WAITING_FOR_PREEMPTED,
                                "waiting for the pods of the workloads it preempted to terminate "
                                f"(grace period ends at t={run.awaiting_victims_until:g}s)")
            return Outcome.FAILED_GPU
    # 4. Reserve + Bind
    if plan.count >= needed:
        return _bind(ctx, run, plan)
    # 5. Unschedulable
    if plan.topology_note is not None:
        ctx.emitter.pending(run, PendingReason.TOPOLOGY_UNSATISFIABLE,
                            f"topology {spec.topology_required} required: {plan.topology_note}")
        return Outcome.FAILED_GPU
    _say_pending(ctx, run, needed, plan.count, plan.diagnosis, shortfall)
    return failure_of(plan.diagnosis)


def _bind(ctx: CycleContext, run: WorkloadRun, plan: Plan) -> Outcome:
    for pod, node in plan.placed:
        ctx.actions.place(run, pod, node, reserve=False, allocated=plan.kept)
    ctx.actions.maybe_start_progress(run)
    if not run.pending:
        return Outcome.PLACED
    # An elastic group got min_count and more; the rest did not fit (for now).
    return failure_of(plan.diagnosis)


def _say_pending(ctx: CycleContext, run: WorkloadRun, needed: int, placed: int, diagnosis: Diagnosis | None,
                 shortfall: int) -> None:
    spec = run.spec
    models = spec.gpu_model_label or "any model"
    if shortfall > 0:
        free = ctx.state.free_milli(spec.gpu_models) / MILLI
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
    ctx.emitter.pending(run, reason, message)
