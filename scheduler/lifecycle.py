"""The life cycle of every workload in a replay: arrive, admit, place, start, finish, or be
released and requeued.

`Lifecycle` is what the rest of the replay may change a workload through. It implements
the two small protocols its callers consume: `ReplayActions` (what a scheduling attempt may
do, `scheduler/cycle/context.py`) and `ReplayPort` (what the admission layer may do,
`scheduler/admission/port.py`); it calls the admission layer back through `AdmissionLayer`
below. Every transition writes its event rows through the `EventEmitter`.

    arrive ─▶ (admission layer) ─▶ admit ─▶ queued for placement ─▶ place ─▶ reserved ─┐
                                                                        └▶ started ◀──┘
    started, min_count together ─▶ progress ─▶ finish
    any time it holds pods: evict (preemption), time out (gang deadline), expire
    (waitForPodsReady) ─▶ every pod released ─▶ requeue (backoff) ─▶ placed again, or
    (Kueue's own evictions only) admitted again
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Protocol

from scheduler.dispatch import Dispatcher
from scheduler.emitter import EventEmitter
from scheduler.eventlog.schema import EventType, PendingReason, last_checkpoint_s
from scheduler.framework.profile import Profile
from scheduler.framework.runtime import Framework
from scheduler.pod_loss import PodLoss
from scheduler.sim import Environment, Phase
from scheduler.state.cluster_state import ClusterState, gpus_held
from scheduler.state.holding_index import HoldingIndex
from scheduler.workload_run import WorkloadRun

if TYPE_CHECKING:
    from scheduler.quiescence import Narrowing

# Exponents above this would overflow a float after thousands of failures (a gang that
# never fits), and 2^62 times any initial backoff is past every maximum anyway.
_MAX_BACKOFF_EXPONENT = 62


class AdmissionLayer(Protocol):
    """The Kueue-style layer in front of placement (`scheduler/admission/`).

    Contract: every workload goes through `submit` when it arrives. The layer decides
    when, calling the life cycle's `admit`, which writes the `admitted` row and queues the
    workload for placement; it schedules its own admission cycles in `Phase.ADMIT` and may
    evict admitted workloads. `release` is called when a workload finishes (its quota is
    free again); `requeue` when every pod of it is gone without it finishing;
    `pods_ready` when every pod of it runs (Kueue's PodsReady); `pods_terminating` when its
    pods are marked for deletion (the Job's ready count drops then, before they are gone).
    """

    def submit(self, run: WorkloadRun) -> None: ...

    def release(self, run: WorkloadRun) -> None: ...

    def requeue(self, run: WorkloadRun) -> bool:
        """`run` lost its pods without finishing. True: it stays admitted (Kueue keeps the
        quota through kube-level failures) and placement tries it again; False: the layer
        evicted it and admits it again when it decides."""
        ...

    def pods_ready(self, run: WorkloadRun) -> None: ...

    def pods_terminating(self, run: WorkloadRun) -> None: ...

    def placement_options(self, run: WorkloadRun) -> tuple[Hashable, Sequence[Narrowing] | None]:
        """What placement could still be asked for `run` (the quiescence test): a token of
        the admission state the answer depends on, and the narrowings of the flavors it could
        be admitted under (empty: it is never admitted again; None: its own request)."""
        ...


def retry_backoff_s(profile: Profile, failures: int) -> float:
    """kube-scheduler's pod backoff after the `failures`-th failure: initial·2^(n−1), capped."""
    backoff = profile.backoff_initial_s * 2.0 ** min(failures - 1, _MAX_BACKOFF_EXPONENT)
    return min(backoff, profile.backoff_max_s)


class Lifecycle:
    def __init__(self, env: Environment, state: ClusterState, profile: Profile, framework: Framework,
                 emitter: EventEmitter, holdings: HoldingIndex, dispatcher: Dispatcher) -> None:
        self._env = env
        self.state = state
        self.profile = profile
        self.framework = framework
        self.emitter = emitter
        self.holdings = holdings
        self.dispatcher = dispatcher
        self.admission: AdmissionLayer | None = None
        # ReplayPort's `narrow(run, gpu_models, selector, *, topology_assigned)` is the run's own; `free_gpus` the
        # state's, `gpus_held(workload_id, pods)` the state's function; ReplayActions' `evict_pods` PodLoss's.
        self.narrow, self.free_gpus, self.gpus_held = WorkloadRun.narrow, state.free_gpus, partial(gpus_held, state)
        self.evict_pods = PodLoss(env, state, profile, emitter, holdings, dispatcher, self._terminated).evict_pods

    @property
    def env(self) -> Environment:
        return self._env

    # -- arriving and admission (the ReplayPort) ------------------------------------------

    def arrive(self, run: WorkloadRun) -> None:
        run.arrived = True
        run.queued_s = self._env.now
        self.emitter.emit(run, EventType.SUBMITTED)
        run.pending = set(range(run.spec.pods))
        if self.admission is not None:
            self.admission.submit(run)
        else:
            self.dispatcher.enqueue(run)

    def admit(self, run: WorkloadRun, cluster_queue: str, *, reason: str | None = None,
              message: str | None = None, flavor: str | None = None, pods: int | None = None) -> None:
        """The admission layer admitted `run`: it now queues for placement. `reason` is a short
        code on the `admitted` row (e.g. "Borrowing": quota borrowed from its cohort), `message`
        the sentence with the numbers, `flavor` the ResourceFlavor of its GPUs, `pods` the count
        Kueue admitted (partial admission; None: the trace's): the job runs that many pods."""
        run.cluster_queue = cluster_queue
        if run.admitted_pods(pods):
            run.pending = set(range(run.spec.pods))
        run.queued_s = self._env.now  # Kueue unsuspends the job: its pods are created now
        self.emitter.emit(run, EventType.ADMITTED, reason=reason, message=message, flavor=flavor)
        self.dispatcher.enqueue(run)

    def reject(self, run: WorkloadRun, reason: PendingReason, message: str) -> None:
        self.emitter.emit(run, EventType.REJECTED, reason=reason.value, message=message)

    def pass_through(self, run: WorkloadRun) -> None:
        self.dispatcher.enqueue(run)

    def pending(self, run: WorkloadRun, reason: PendingReason, message: str, *,
                queue_position: int | None = None, queue_length: int | None = None) -> None:
        self.emitter.pending(run, reason, message, queue_position=queue_position, queue_length=queue_length)

    def pending_is_recent(self, run: WorkloadRun, reason: PendingReason) -> bool:
        return self.emitter.pending_is_recent(run, reason)

    def expire(self, run: WorkloadRun, reason: str, message: str) -> None:
        """The admission layer gave up waiting for `run`'s pods (waitForPodsReady): release
        what it holds (`timed_out` rows) and requeue it."""
        self._release_all(run, EventType.TIMED_OUT, reason, message)
        self._requeue(run, reason, message)
        self.capacity_released()

    def resize(self, run: WorkloadRun, min_count: int) -> None:
        """Mutable min_count (elastic): running pods are not disturbed; pending pods are tried again at
        once under the new quorum, after a raise together with the running ones (`pods_needed`)."""
        if run.done or min_count == run.min_count:
            return
        old, run.min_count = run.min_count, min_count
        self.emitter.emit(run, EventType.RESIZED, reason="MinCountChanged", message=f"min_count {old} -> {min_count}")
        if run.pending and not run.satisfied:
            if run.reserved and self.framework.has_permit and len(run.holding) >= min_count:
                self.start_reserved(run)
            if run.started and not run.reserved:
                self.maybe_start_progress(run)
        if run.pending:
            self.dispatcher.dequeue(run)
            self.dispatcher.enqueue(run)

    # -- placing and running (the ReplayActions) ------------------------------------------

    def place(self, run: WorkloadRun, pod: int, node: int, *, reserve: bool, allocated: bool = False) -> None:
        """Commit one pod to a node: `reserved` (at the gang barrier) or `started`; `allocated`: it holds its GPUs already."""
        self.state.drop_nominations(run.spec.workload_id, pod)  # what was kept for it is its own now
        if not allocated:
            self.state.allocate((run.spec.workload_id, pod), node, run.request)
        self.holdings.holds(run)
        run.running_victims = None
        run.pending.discard(pod)
        if reserve:
            run.reserved.add(pod)
            self.emitter.emit_pod(run, EventType.RESERVED, pod, node)
        else:
            self._start(run, pod, node)

    def start_reserved(self, run: WorkloadRun) -> None:
        """The Permit barrier opened: every reserved pod runs now."""
        for pod in sorted(run.reserved):
            node = self.state.holdings[(run.spec.workload_id, pod)].node
            self._start(run, pod, node)
        run.reserved.clear()
        self.maybe_start_progress(run)

    def _start(self, run: WorkloadRun, pod: int, node: int) -> None:
        run.started[pod] = self._env.now
        run.running_victims = None
        self.dispatcher.pods_started += 1
        self.emitter.emit_pod(run, EventType.STARTED, pod, node)
        if self.admission is not None and len(run.started) == run.spec.pods:
            # Kueue's PodsReady: every pod of the pod set runs (not the gang's min_count).
            self.admission.pods_ready(run)

    def maybe_start_progress(self, run: WorkloadRun) -> None:
        """Once min_count pods run together the group makes progress and will finish."""
        if run.satisfied or len(run.started) < run.min_count:
            return
        now = self._env.now
        run.progress_start_s = now
        run.last_pending = None
        if run.deadline_handle:
            run.deadline_handle.cancel()
            run.deadline_handle = None
        run.finish_handle = self._env.at(now + run.remaining_s, Phase.FINISH, lambda: self._finish(run))

    def arm_deadline(self, run: WorkloadRun, timeout_s: float, reason: str) -> None:
        """Start the group's shared wait deadline at its first reservation (or start)."""
        if run.deadline_handle is None:
            run.deadline_handle = self._env.at(
                self._env.now + timeout_s, Phase.TIMEOUT, lambda: self._time_out(run, timeout_s, reason)
            )

    def capacity_released(self) -> None:
        self.dispatcher.capacity_released()

    def _finish(self, run: WorkloadRun) -> None:
        self.state.drop_nominations(run.spec.workload_id)
        started = sorted(run.started)
        self.holdings.count_release(run, None if run.reserved else started)  # None: its holding, reserved pods too
        for pod in started:
            holding = self.state.release((run.spec.workload_id, pod))
            self.emitter.emit_pod(run, EventType.FINISHED, pod, holding.node)
        run.started.clear()
        run.running_victims = None
        self.holdings.stopped(run)
        run.done, run.terminating, run.remaining_s = True, False, 0.0
        run.pending.clear()
        self.dispatcher.dequeue(run)
        if self.admission is not None:
            self.admission.release(run)
        self.capacity_released()

    # -- giving pods back -------------------------------------------------------------------

    def release_gang(self, run: WorkloadRun, reason: str, message: str, backoff_s: float = 0.0) -> None:
        """The gang's wait ended without it completing: every held pod is released
        (`timed_out` rows) and the group is requeued."""
        run.group_failed_s = self._env.now  # coscheduling's Unreserve: MarkPodGroupScheduleFailure
        self._release_all(run, EventType.TIMED_OUT, reason, message)
        self._requeue(run, reason, message)
        if backoff_s:
            run.backoff_until_s = max(run.backoff_until_s, self._env.now + backoff_s)
            self.dispatcher.dequeue(run)
            self.dispatcher.enqueue(run)
        self.capacity_released()

    def evict(self, run: WorkloadRun, preemptor: WorkloadRun, *, message: str | None = None) -> None:
        """Preempt every pod of `run` for `preemptor`; it resumes later from its last checkpoint. The
        pods terminate for the profile's grace period first, holding their GPUs (no victims for anyone
        else meanwhile); the preemptor waits and does not preempt again. `message`: why, if given."""
        if run.terminating:
            return
        if self.admission is not None:
            self.admission.pods_terminating(run)
        grace = self.profile.termination_grace_s
        if grace <= 0:
            self._terminated(run, preemptor, message, grace)
            return
        run.terminating = True
        run.running_victims = None
        done_at = self._env.now + grace
        preemptor.awaiting_victims_until = max(preemptor.awaiting_victims_until, done_at)
        attempt = run.attempt
        self._env.at(done_at, Phase.FINISH, lambda: self._terminated(run, preemptor, message, grace, attempt))

    def _terminated(self, run: WorkloadRun, preemptor: WorkloadRun, message: str | None, grace: float,
                    attempt: int | None = None) -> None:
        """The preempted pods are gone: their GPUs come back and the workload is requeued."""
        if attempt is not None and (attempt != run.attempt or run.done):
            return  # it finished, or gave its pods back otherwise, during the grace period
        now = self._env.now
        if run.progress_start_s is not None:
            kept = last_checkpoint_s(run.progress_start_s, now, run.spec.checkpoint_interval_s)
            run.remaining_s = max(0.0, run.remaining_s - (kept - run.progress_start_s))
        reason = f"preempted-by:{preemptor.spec.workload_id}"
        terminated = f"; terminated after a {grace:g}s grace period" if grace > 0 else ""
        if message is not None:
            message = f"{message}{terminated}; {run.remaining_s:.0f}s of work left after the last checkpoint"
        else:
            message = (
                f"Preempted to accommodate workload {preemptor.spec.workload_id} "
                f"(priority {preemptor.spec.priority} > {run.spec.priority}){terminated}; "
                f"{run.remaining_s:.0f}s of work left after the last checkpoint"
            )
        by = preemptor.spec.workload_id
        self._release_all(run, EventType.PREEMPTED, reason, message, preemptor=by)
        self._requeue(run, "Preempted", message, preemptor=by)
        if grace > 0:
            self.capacity_released()

    def _time_out(self, run: WorkloadRun, timeout_s: float, reason: str) -> None:
        run.deadline_handle = None
        if run.satisfied or run.done:
            return
        placed = len(run.holding)
        message = (
            f"{reason}: {placed} of {run.min_count} required pods placed within "
            f"{timeout_s:g}s; released all {placed} pods' GPUs"
        )
        self.release_gang(run, reason, message)

    def _release_all(self, run: WorkloadRun, event: EventType, reason: str, message: str,
                     preemptor: str | None = None) -> None:
        self.state.drop_nominations(run.spec.workload_id)
        self.holdings.count_release(run)
        for pod in run.holding:
            holding = self.state.release((run.spec.workload_id, pod))
            self.emitter.emit_pod(run, event, pod, holding.node, reason=reason, message=message, preemptor=preemptor)
        run.reserved.clear()
        run.started.clear()
        run.running_victims, run.terminating_pods = None, set()
        self.holdings.stopped(run)

    def _requeue(self, run: WorkloadRun, reason: str, message: str, preemptor: str | None = None) -> None:
        run.attempt += 1
        run.terminating = False
        run.queued_s = self._env.now
        for handle in filter(None, (run.finish_handle, run.deadline_handle)):
            handle.cancel()
        run.finish_handle = run.deadline_handle = None
        run.progress_start_s = None
        run.pending = set(range(run.spec.pods))
        run.failures += 1
        run.backoff_until_s = self._env.now + retry_backoff_s(self.profile, run.failures)
        run.last_pending = None
        self.emitter.emit(run, EventType.REQUEUED, reason=reason, message=message, preemptor=preemptor)
        self.dispatcher.dequeue(run)
        if self.admission is None or self.admission.requeue(run):
            self.dispatcher.enqueue(run)
