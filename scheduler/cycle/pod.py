"""The pod cycle (profiles with unit = pod: kube-default, coscheduling, gang-v1.35).

  1. Filter + Score: one node for this pod (`Framework.find_node_for_pod`: the nominated node,
     OpportunisticBatching's hint, or the search).
  2. PostFilter: otherwise per-pod preemption frees one node, or the pod says why it is
     pending; with a gang Permit, a failed pod may reject its whole waiting group
     (coscheduling's optimistic rejection).
  3. Permit: in a gang profile the pod is reserved and waits until min_count pods are
     reserved (one shared deadline); the last one opens the barrier for all.
  4. Bind: without a Permit plugin the pod starts at once; if its group never completes,
     the training framework's rendezvous gives up after a time-out.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.cycle.context import CycleContext
from scheduler.cycle.outcome import Outcome, failure_of
from scheduler.cycle.pod_loss import lose_pods
from scheduler.dra.state import ClaimedDevicesKept
from scheduler.eventlog.schema import PendingReason
from scheduler.framework.runtime import Diagnosis
from scheduler.state.cluster_state import ClusterState, PodKey
from scheduler.workload_run import WorkloadRun


def schedule_pod(ctx: CycleContext, run: WorkloadRun, pod: int) -> Outcome:
    # 1. Filter + Score
    nominated = ctx.state.nominations.node_of(run.spec.workload_id, pod) if ctx.state.nominations else None
    node, diagnosis = ctx.framework.find_node_for_pod(ctx.state, run.request, (run.spec.workload_id, pod), nominated,
                                                      ctx.now)
    # 2. PostFilter (not while the victims of its last preemption still terminate)
    if node is None and run.awaiting_victims_until > ctx.now:
        ctx.emitter.pending(run, PendingReason.WAITING_FOR_PREEMPTED,
                            f"pod {pod}: waiting for the pods it preempted to terminate "
                            f"(grace period ends at t={run.awaiting_victims_until:g}s)")
        return failure_of(diagnosis)
    if node is None:
        node = _preempt_for_pod(ctx, run, pod, diagnosis)
        if node is None and ctx.state.nominations:  # upstream clears the nominated node then
            ctx.state.drop_nominations(run.spec.workload_id, pod)
        if node is not None and run.awaiting_victims_until > ctx.now:  # victims still terminate
            ctx.emitter.pending(run, PendingReason.WAITING_FOR_PREEMPTED,
                                f"pod {pod}: preempted workloads on its nominated node; waiting for their "
                                f"pods to terminate (grace period ends at t={run.awaiting_victims_until:g}s)")
            return failure_of(diagnosis)
    if node is None:
        detail = diagnosis.message() if diagnosis else "no node fits"
        run.unschedulable_detail = detail
        ctx.emitter.pending(run, PendingReason.UNSCHEDULABLE, unschedulable_message(run, pod, detail))
        _maybe_reject_group(ctx, run)
        return failure_of(diagnosis)
    # 3. Permit
    actions = ctx.actions
    if ctx.framework.has_permit and not run.satisfied and run.min_count > 1:
        actions.place(run, pod, node, reserve=True)
        if ctx.framework.run_permit(len(run.holding), run.min_count).ok:
            run.group_failed_s = None  # quorum reached: Permit's ClearPodGroupScheduleFailure
            actions.start_reserved(run)
        else:
            # GetWaitTimeDuration: the PodGroup's scheduleTimeoutSeconds, else the plugin's wait.
            wait_s = run.spec.schedule_timeout_s or ctx.framework.permit_timeout_s
            actions.arm_deadline(run, wait_s, "GangPermitTimeout")
            ctx.waiting_gangs[run.spec.workload_id] = run
        return Outcome.PLACED
    # 4. Bind
    actions.place(run, pod, node, reserve=False)
    if not run.satisfied:
        actions.maybe_start_progress(run)
        if not run.satisfied:
            actions.arm_deadline(run, ctx.profile.rendezvous_timeout_s, "RendezvousTimeout")
            ctx.waiting_gangs[run.spec.workload_id] = run
    return Outcome.PLACED


def unschedulable_message(run: WorkloadRun, pod: int, detail: str) -> str:
    """The Unschedulable row of `run`'s pod: the node diagnosis, then its own group's count."""
    gang = f"; {len(run.holding)} of {run.min_count} pods of the group placed" if run.min_count > 1 else ""
    return f"pod {pod}: {detail}{gang}"


def _maybe_reject_group(ctx: CycleContext, run: WorkloadRun) -> None:
    """When one pod of a waiting gang fails, a Permit plugin may reject the whole group now
    (coscheduling: more than `reject_percentage` % of min_count still unassigned) instead of
    holding its reservations until the deadline."""
    if not ctx.framework.has_permit or run.satisfied or run.min_count <= 1:
        return
    unassigned = run.min_count - len(run.holding)
    rejection = ctx.framework.reject_on_failure(unassigned, run.min_count)
    if rejection is None:
        return
    if not run.reserved:  # nothing to reject, but PostFilter marks the PodGroup failed all the same
        run.group_failed_s = ctx.now
        return
    ctx.actions.release_gang(
        run,
        "GangRejected",
        f"GangRejected: a pod could not be placed with {unassigned} of {run.min_count} required "
        f"pods unassigned ({rejection.why}); released {len(run.holding)} reserved pods",
        backoff_s=rejection.backoff_s,
    )


@dataclass
class PodVictimSearch:
    """The `PodPreemptionQuery` of one pending pod."""

    ctx: CycleContext
    run: WorkloadRun
    nodes: list[int]

    @property
    def state(self) -> ClusterState:
        return self.ctx.state

    @property
    def priority(self) -> int:
        return self.run.spec.priority

    def priority_of(self, key: PodKey) -> int:
        return self.ctx.runs[key[0]].spec.priority

    def terminating(self, key: PodKey) -> bool:
        run = self.ctx.runs[key[0]]
        return run.terminating or key[1] in run.terminating_pods

    def started_at(self, key: PodKey) -> float:
        return self.ctx.runs[key[0]].started.get(key[1], self.ctx.now)

    def fits_on(self, node: int) -> bool:
        return self.ctx.framework.feasible(self.ctx.state, self.run.request, node)


def _preempt_for_pod(ctx: CycleContext, run: WorkloadRun, pod: int, diagnosis: Diagnosis | None) -> int | None:
    if (not ctx.framework.pod_post_filters or not ctx.profile.preemption_frees_gpus_for(run.request.claims)
            or not run.spec.may_preempt):
        return None
    version = (*ctx.holdings.version(run.spec.priority, run.spec.gpu_models, run.request.selector),
               ctx.state.nominations.generation)  # nominations kept for others matter as releases do
    kept = ClaimedDevicesKept(ctx.state.dra, not ctx.profile.dra_preemption)  # victims keep claimed devices
    if run.preemption_failed_at == version:
        if ctx.verifier:  # the skipped search would find nothing again
            with ctx.framework.unobserved(), kept:
                found = ctx.framework.run_post_filter(_search(ctx, run, diagnosis))
            ctx.verifier.same(ctx.now, "pod preemption skipped as unchanged", None, found, run.spec.workload_id)
        return None
    if not ctx.holdings.any_below(run.spec.priority):
        run.preemption_failed_at = version
        return None
    with kept:
        choice = ctx.framework.run_post_filter(_search(ctx, run, diagnosis))
    if choice is None:
        run.preemption_failed_at = version
        return None
    # The victims' own controllers decide what losing a pod means (on_pod_loss).
    pods_of: dict[str, list[int]] = {}
    for wid, victim in choice.pods:
        pods_of.setdefault(wid, []).append(victim)
    lose_pods(ctx, pods_of, run)
    ctx.actions.capacity_released()
    # The pod's nominated node: its GPUs are kept for it while the victims terminate.
    ctx.state.nominate((run.spec.workload_id, pod), run.spec.priority, [(choice.node, run.request.milli)])
    return choice.node


def _search(ctx: CycleContext, run: WorkloadRun, diagnosis: Diagnosis | None) -> PodVictimSearch:
    unresolvable = diagnosis.unresolvable if diagnosis else set()
    nodes = [n for n in ctx.state.candidates.candidate_nodes(run.request.models, run.request.selector) if n not in unresolvable]
    return PodVictimSearch(ctx, run, nodes)


def report_waiting_gangs(ctx: CycleContext) -> None:
    """After a pod cycle: say why each gang that got pods but not min_count still waits.

    Written once per cycle rather than per pod, so a gang whose pods all land in the same
    cycle never shows a passing "1 of 4" state."""
    for run in ctx.waiting_gangs.values():
        if run.done or run.satisfied or not run.holding:
            continue
        if run.reserved:
            message = (f"waiting at the Permit barrier: {len(run.holding)} of {run.min_count} "
                       "pods reserved, holding their GPUs")
        else:
            message = (f"partially placed: {len(run.started)} of {run.min_count} pods running; "
                       "the job cannot make progress until all are")
        ctx.emitter.pending(run, PendingReason.WAITING_FOR_GANG, message)
    ctx.waiting_gangs.clear()
