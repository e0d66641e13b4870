"""Pods preempted alone (disruption mode Single) whose workload goes on without them.

`scheduler/cycle/pod_loss.py` decides, by the workload's `on_pod_loss`, whether a
preemption takes the whole group or only the victim pods; this is the second case, as the
life cycle carries it out. The victim pods terminate for the profile's grace period,
holding their GPUs (no one's victims meanwhile, `WorkloadRun.terminating_pods`), then give
them back with a `preempted` row each; the rest of the group keeps running and its
progress goes on. `replace_pod`: the lost pods are pending again and placed one by one
(the group's quorum was met). `keep_running`: they are gone for this attempt. A group
left with no pod at all is requeued whole, as any preempted group.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.dispatch import Dispatcher
from scheduler.emitter import EventEmitter
from scheduler.eventlog.schema import EventType
from scheduler.framework.profile import Profile
from scheduler.model.workload import OnPodLoss
from scheduler.sim import Environment, Phase
from scheduler.state.cluster_state import ClusterState
from scheduler.state.holding_index import HoldingIndex
from scheduler.workload_run import WorkloadRun

# (run, preemptor, message, grace): every pod of the run is gone, requeue it (`Lifecycle._terminated`)
WholeGroupGone = Callable[[WorkloadRun, WorkloadRun, str | None, float], None]


class PodLoss:
    def __init__(self, env: Environment, state: ClusterState, profile: Profile, emitter: EventEmitter,
                 holdings: HoldingIndex, dispatcher: Dispatcher, whole_group_gone: WholeGroupGone) -> None:
        self._env, self._state, self._profile, self._emitter = env, state, profile, emitter
        self._holdings, self._dispatcher, self._whole_group_gone = holdings, dispatcher, whole_group_gone

    def evict_pods(self, run: WorkloadRun, pods: list[int], preemptor: WorkloadRun) -> None:
        """Preempt `pods` of `run` for `preemptor`; the other pods keep running."""
        pods = [pod for pod in pods if pod not in run.terminating_pods]
        if run.terminating or not pods:
            return
        grace = self._profile.termination_grace_s
        if grace <= 0:
            self._terminated(run, pods, preemptor, grace, run.attempt)
            return
        run.terminating_pods.update(pods)
        run.running_victims = None
        done_at = self._env.now + grace
        preemptor.awaiting_victims_until = max(preemptor.awaiting_victims_until, done_at)
        attempt = run.attempt
        self._env.at(done_at, Phase.FINISH, lambda: self._terminated(run, pods, preemptor, grace, attempt))

    def _terminated(self, run: WorkloadRun, pods: list[int], preemptor: WorkloadRun, grace: float,
                    attempt: int) -> None:
        if attempt != run.attempt or run.done:
            return  # the group finished, or gave all its pods back, during the grace period
        held = [pod for pod in pods if pod in run.started or pod in run.reserved]
        if len(held) == len(run.holding):
            run.terminating_pods.difference_update(pods)
            self._whole_group_gone(run, preemptor, None, grace)
            return
        by, policy = preemptor.spec.workload_id, run.spec.pod_loss_policy
        terminated = f"; terminated after a {grace:g}s grace period" if grace > 0 else ""
        then = "it is created again" if policy is OnPodLoss.REPLACE_POD else "the group goes on without it"
        message = (f"Preempted to accommodate workload {by} (priority {preemptor.spec.priority} > "
                   f"{run.spec.priority}){terminated}; the rest of the group keeps running and {then} "
                   f"(on_pod_loss {policy.value})")
        self._holdings.count_release(run, held)
        run.terminating_pods.difference_update(pods)
        for pod in held:
            holding = self._state.release((run.spec.workload_id, pod))
            self._emitter.emit_pod(run, EventType.PREEMPTED, pod, holding.node, reason=f"preempted-by:{by}",
                                   message=message, preemptor=by)
            run.started.pop(pod, None)
            run.reserved.discard(pod)
        run.running_victims = None
        if policy is OnPodLoss.REPLACE_POD:
            run.pending.update(held)
            run.queued_s = self._env.now
            self._dispatcher.dequeue(run)
            self._dispatcher.enqueue(run)
        self._dispatcher.capacity_released()
