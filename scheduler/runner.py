"""The replay: workloads arrive, scheduling cycles place them, pods run, finish or are evicted.

`Replay` owns the moving parts and the life cycle of every workload; the placement
decisions of one cycle live in `scheduler/cycle.py`. Everything runs on the simulated
clock of `scheduler.sim`; same inputs and seed give the same event log, byte for byte.

Queueing follows kube-scheduler: an entity (a pod in `pod` profiles, a pod group in
`pod_group` profiles) that fails waits until GPUs are released or five minutes have passed
(the unschedulable-pod flush), and not before its backoff (initial·2^(failures−1), capped)
after a time-out or eviction; `scheduler/queue.py` says how this is done without retrying
the whole queue after every change.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from scheduler.eventlog.schema import EventType, PendingReason, last_checkpoint_s
from scheduler.eventlog.writer import EventLogWriter
from scheduler.framework.profile import Profile
from scheduler.framework.runtime import Framework
from scheduler.model import Cluster, Workload
from scheduler.plugins.gang import GangPermit
from scheduler.queue import SchedulingQueue
from scheduler.sim import Environment, Phase
from scheduler.state import ClusterState, PodRequest
from scheduler.workload_run import GROUP, WorkloadRun

# Repeating the same "why pending" sentence on every retry would bury the timeline; a
# changed reason is always written, a changed message at most this often.
PENDING_MESSAGE_REFRESH_S = 300.0


class AdmissionLayer(Protocol):
    """The Kueue-style layer in front of placement (`scheduler/admission/`).

    Contract: every workload goes through `submit` when it arrives and again after each
    eviction or time-out (after `release`). The layer decides when, calling
    `Replay.admit(run, cluster_queue, …)`, which writes the `admitted` row and queues the
    workload for placement; it schedules its own admission cycles on `Replay.env` in
    `Phase.ADMIT` and may evict admitted workloads with `Replay.evict(run, preemptor)`.
    `release` is called when a workload finishes or is evicted (its quota is free again);
    `pods_ready` when its gang reached min_count running pods (waitForPodsReady).
    It writes `pending` rows through `Replay.pending` with Kueue's reasons.
    """

    def submit(self, run: WorkloadRun) -> None: ...

    def release(self, run: WorkloadRun) -> None: ...

    def pods_ready(self, run: WorkloadRun) -> None: ...


class Replay:
    def __init__(
        self,
        cluster: Cluster,
        workloads: list[Workload],
        rejected: list[tuple[Workload, str, str]],
        profile: Profile,
        writer: EventLogWriter,
        seed: int,
        cluster_queue_of: Callable[[Workload], str | None] = lambda w: None,
        progress: Callable[[float, int, float], None] | None = None,
        admission_factory: Callable[[Replay], AdmissionLayer] | None = None,
    ) -> None:
        self.env = Environment()
        self.state = ClusterState(cluster)
        self.profile = profile
        self.framework = Framework(profile, random.Random(seed))
        self.writer = writer
        self.progress = progress
        self.gang_permit: GangPermit | None = next(
            (p for p in self.framework.permit if isinstance(p, GangPermit)), None
        )
        self.runs: dict[str, WorkloadRun] = {}
        # Workloads holding GPUs (reserved or started), in the order they got them: the
        # preemption candidates, kept as an index so no cycle scans every workload.
        self.holding_runs: dict[str, WorkloadRun] = {}
        # The same runs by priority: preemption reads only the levels below the preemptor's.
        self.holding_by_priority: dict[int, dict[str, WorkloadRun]] = {}
        # Releases by (GPU model of the nodes, priority of the workload that released):
        # see `preemption_version`.
        self.releases_by_class: dict[tuple[str, int], int] = {}
        self.queue = SchedulingQueue()
        self._cycles_at: set[float] = set()
        # Gangs that got pods this cycle without reaching min_count (reported at its end).
        self.waiting_gangs: dict[str, WorkloadRun] = {}
        self.pods_started = 0
        self.last_arrival_s = max((w.submit_time_s for w in workloads), default=0.0)
        for seq, workload in enumerate(workloads):
            request = PodRequest(
                workload.gpu_milli_per_pod,
                workload.cpu_milli_per_pod,
                workload.memory_mib_per_pod,
                workload.gpu_models,
            )
            run = WorkloadRun(workload, seq, request, cluster_queue_of(workload), workload.duration_s)
            self.runs[workload.workload_id] = run
            self.state.priority_of[workload.workload_id] = workload.priority
            self.env.at(workload.submit_time_s, Phase.ARRIVE, lambda r=run: self._arrive(r))
        # CompositePodGroups: parent name -> child groups, in arrival order.
        self.composites: dict[str, list[WorkloadRun]] = {}
        for run in self.runs.values():
            if run.spec.parent_group:
                self.composites.setdefault(run.spec.parent_group, []).append(run)
        self.composites_started: set[str] = set()
        self.admission: AdmissionLayer | None = admission_factory(self) if admission_factory else None
        for workload, reason, message in rejected:
            self.env.at(
                workload.submit_time_s,
                Phase.ARRIVE,
                lambda w=workload, rs=reason, m=message: self._reject(w, rs, m),
            )

    # -- driving -----------------------------------------------------------------------

    def run(self) -> float:
        """Replay to the end; returns the simulated time of the last action."""
        self.env.run(until=self.profile.max_simulated_s)
        return self.env.now

    def request_cycle(self, at: float | None = None) -> None:
        at = self.env.now if at is None else at
        if at not in self._cycles_at:
            self._cycles_at.add(at)
            self.env.at(at, Phase.SCHEDULE, lambda: self._cycle(at))

    def _cycle(self, at: float) -> None:
        from scheduler.cycle import (  # cycle imports runner
            Outcome,
            attempt,
            gpu_shape,
            report_waiting_gangs,
        )

        self._cycles_at.discard(at)
        now = self.env.now
        state, queue = self.state, self.queue
        next_backoff = queue.release_backoff(now)
        def version_of(shape: object) -> int:  # shapes carry their GPU models at index 2
            return state.release_version if shape is None else state.release_version_for(shape[2])  # type: ignore[index]

        for key, shape in queue.drain(version_of, now):
            run = self.runs[key[0]]
            outcome = attempt(self, run, key[1])
            if outcome is Outcome.PLACED:
                queue.placed(key)
                continue
            new_shape = gpu_shape(run, key[1])
            if new_shape != shape:  # an elastic group placed part of its pods: re-file it
                queue.add(key, self._sort_key(run, key[1]), new_shape, not_before=now, now=now)
                shape = new_shape
            until = now + self.profile.unschedulable_flush_s
            if outcome is Outcome.FAILED_GPU:
                failure = run.last_pending[:2] if run.last_pending else None
                queue.park_shape(shape, version_of(shape), until, failure)
            else:
                queue.park_alone(key, version_of(shape), until)
        report_waiting_gangs(self)
        for wake in (next_backoff, queue.next_flush_s()):
            if wake is not None and wake > now:
                self.request_cycle(wake)
        if self.progress:
            self.progress(now, self.pods_started, self.last_arrival_s)

    def capacity_released(self) -> None:
        """GPUs were freed: parked shapes may fit now (the queue sees the release version)."""
        if len(self.queue):
            self.request_cycle()

    def _sort_key(self, run: WorkloadRun, pod: int) -> tuple[float, ...]:
        return (*self.framework.queue_sort.sort_key(run.spec.priority, run.spec.submit_time_s), run.seq, pod)

    def _enqueue(self, run: WorkloadRun) -> None:
        from scheduler.cycle import gpu_shape

        now = self.env.now
        keys = [(run.spec.workload_id, i) for i in sorted(run.pending)] if self.profile.unit == "pod" else [
            (run.spec.workload_id, GROUP)
        ]
        for key in keys:
            shape = gpu_shape(run, key[1])
            filed = self.queue.add(key, self._sort_key(run, key[1]), shape, not_before=run.backoff_until_s, now=now)
            # A newcomer to a shape that is parked would fail the same way: say so now, as
            # kube-scheduler's first attempt would, instead of leaving no reason behind.
            version = self.state.release_version_for(shape[2])  # type: ignore[index]
            failure = self.queue.parked_failure(shape, version, now) if filed else None
            if failure is not None:
                self.pending(run, PendingReason(failure[0]), failure[1])
        self.request_cycle(max(now, run.backoff_until_s))

    def _dequeue(self, run: WorkloadRun) -> None:
        wid = run.spec.workload_id
        self.queue.remove((wid, GROUP))
        for pod in range(run.spec.pods):
            self.queue.remove((wid, pod))

    # -- event rows --------------------------------------------------------------------

    def emit(self, run: WorkloadRun, event: EventType, **fields: object) -> None:
        spec = run.spec
        fields.setdefault("gpu_model", spec.gpu_model_label)
        self.writer.emit(
            self.env.now,
            event,
            spec.workload_id,
            tenant=spec.tenant,
            queue=spec.queue,
            cluster_queue=run.cluster_queue,
            priority=spec.priority,
            **fields,  # type: ignore[arg-type]
        )

    def emit_pod(self, run: WorkloadRun, event: EventType, pod: int, node: int, **fields: object) -> None:
        self.emit(
            run,
            event,
            pod_index=pod,
            node=self.state.nodes[node].name,
            gpus=run.spec.gpus_per_pod,
            gpu_model=self.state.nodes[node].gpu_model,
            **fields,
        )

    def pending_is_recent(self, run: WorkloadRun, reason: PendingReason) -> bool:
        """True when a `pending` row with this reason would be dropped whatever its message
        (the same reason was said less than PENDING_MESSAGE_REFRESH_S ago): callers can skip
        composing a message nobody will read."""
        last = run.last_pending
        return last is not None and last[0] == reason.value and self.env.now - last[2] < PENDING_MESSAGE_REFRESH_S

    def pending(self, run: WorkloadRun, reason: PendingReason, message: str, *,
                queue_position: int | None = None, queue_length: int | None = None) -> None:
        """A `pending` row, unless it would repeat the last one (see PENDING_MESSAGE_REFRESH_S).
        `queue_position` / `queue_length`: the workload's place in its ClusterQueue (Kueue)."""
        last = run.last_pending
        now = self.env.now
        if last is not None and last[0] == reason.value and (
            last[1] == message or now - last[2] < PENDING_MESSAGE_REFRESH_S
        ):
            return
        run.last_pending = (reason.value, message, now)
        self.emit(run, EventType.PENDING, reason=reason.value, message=message,
                  queue_position=queue_position, queue_length=queue_length)

    # -- life cycle --------------------------------------------------------------------

    def _arrive(self, run: WorkloadRun) -> None:
        run.arrived = True
        self.emit(run, EventType.SUBMITTED)
        run.pending = set(range(run.spec.pods))
        if self.admission is not None:
            self.admission.submit(run)
        else:
            self._enqueue(run)

    def admit(self, run: WorkloadRun, cluster_queue: str, *, reason: str | None = None,
              message: str | None = None, flavor: str | None = None) -> None:
        """The admission layer admitted `run`: it now queues for placement.

        `reason` is a short code on the `admitted` row (e.g. "Borrowing" when the workload
        uses quota borrowed from its cohort), `message` the sentence with the numbers,
        `flavor` the ResourceFlavor of its GPUs (event log 1.1)."""
        run.cluster_queue = cluster_queue
        self.emit(run, EventType.ADMITTED, reason=reason, message=message, flavor=flavor)
        self._enqueue(run)

    # The rest of the admission layer's port (scheduler/admission/port.py).
    def narrow(self, run: WorkloadRun, gpu_models: tuple[str, ...] | None) -> None:
        run.narrow(gpu_models)

    def reject(self, run: WorkloadRun, reason: PendingReason, message: str) -> None:
        self.emit(run, EventType.REJECTED, reason=reason.value, message=message)

    def pass_through(self, run: WorkloadRun) -> None:
        """The admission layer does not manage `run` (no queue name): it queues for placement."""
        self._enqueue(run)

    def expire(self, run: WorkloadRun, reason: str, message: str) -> None:
        """The admission layer gave up waiting for `run`'s pods (waitForPodsReady): release
        what it holds (`timed_out` rows) and requeue it."""
        self._release_all(run, EventType.TIMED_OUT, reason, message)
        self._requeue(run, reason, message)
        self.capacity_released()

    def schedule_resize(self, workload_id: str, at_s: float, min_count: int) -> None:
        run = self.runs[workload_id]
        self.env.at(at_s, Phase.ARRIVE, lambda: self._resize(run, min_count))

    def _resize(self, run: WorkloadRun, min_count: int) -> None:
        """Mutable min_count (elastic): running pods are not disturbed; a pending group is
        tried again at once when its quorum shrinks (the KEP's PodGroup-update hint)."""
        if run.done or min_count == run.min_count:
            return
        old, run.min_count = run.min_count, min_count
        self.emit(run, EventType.RESIZED, reason="MinCountChanged", message=f"min_count {old} -> {min_count}")
        if run.pending and not run.satisfied:
            if run.reserved and self.gang_permit is not None and len(run.holding) >= min_count:
                self.start_reserved(run)
            if run.started and not run.reserved:
                self.maybe_start_progress(run)
            if run.pending:
                self._dequeue(run)
                self._enqueue(run)

    def _reject(self, workload: Workload, reason: str, message: str) -> None:
        self.writer.emit(self.env.now, EventType.SUBMITTED, workload.workload_id, gpu_model=workload.gpu_model_label,
                         tenant=workload.tenant, queue=workload.queue, priority=workload.priority)
        self.writer.emit(self.env.now, EventType.REJECTED, workload.workload_id, gpu_model=workload.gpu_model_label,
                         tenant=workload.tenant, queue=workload.queue, priority=workload.priority,
                         reason=reason, message=message)

    def place(self, run: WorkloadRun, pod: int, node: int, *, reserve: bool) -> None:
        """Commit one pod to a node: `reserved` (waits at the gang barrier) or `started`."""
        self.state.allocate((run.spec.workload_id, pod), node, run.request)
        if self.holding_runs.setdefault(run.spec.workload_id, run) is run:
            self.holding_by_priority.setdefault(run.spec.priority, {})[run.spec.workload_id] = run
        run.running_group = None
        run.pending.discard(pod)
        if reserve:
            run.reserved.add(pod)
            self.emit_pod(run, EventType.RESERVED, pod, node)
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
        run.started[pod] = self.env.now
        run.running_group = None
        self.pods_started += 1
        self.emit_pod(run, EventType.STARTED, pod, node)

    def maybe_start_progress(self, run: WorkloadRun) -> None:
        """Once min_count pods run together the group makes progress and will finish."""
        if run.satisfied or len(run.started) < run.min_count:
            return
        run.progress_start_s = self.env.now
        if self.admission is not None:
            self.admission.pods_ready(run)
        run.last_pending = None
        if run.deadline_handle:
            run.deadline_handle.cancel()
            run.deadline_handle = None
        run.finish_handle = self.env.at(self.env.now + run.remaining_s, Phase.FINISH, lambda: self._finish(run))

    def arm_deadline(self, run: WorkloadRun, timeout_s: float, reason: str) -> None:
        """Start the group's shared wait deadline at its first reservation (or start)."""
        if run.deadline_handle is None:
            run.deadline_handle = self.env.at(
                self.env.now + timeout_s, Phase.TIMEOUT, lambda: self._time_out(run, timeout_s, reason)
            )

    def _finish(self, run: WorkloadRun) -> None:
        self._count_release(run)
        for pod in sorted(run.started):
            holding = self.state.release((run.spec.workload_id, pod))
            self.emit_pod(run, EventType.FINISHED, pod, holding.node)
        run.started.clear()
        run.running_group = None
        self._stop_holding(run)
        run.done = True
        run.remaining_s = 0.0
        run.pending.clear()
        self._dequeue(run)
        if self.admission is not None:
            self.admission.release(run)
        self.capacity_released()

    def preemption_version(self, priority: int, models: tuple[str, ...]) -> tuple[object, ...]:
        """Changes when a workload of `priority` or higher gives back resources on nodes of
        `models` (any model: `()`).

        Preemption for a preemptor of priority p first removes every lower-priority pod
        and checks that the preemptor fits. What that leaves — free GPUs plus GPUs held
        below p, node by node — changes when workloads below p start or stop (GPUs only
        move between free and held-below-p) or when workloads at or above p start (it
        shrinks). It can only grow when one at or above p releases resources, and only on
        nodes the preemptor may use: until then a failed preemption fails again, and is not
        retried. The models are part of the answer: a workload admitted again under
        another Kueue flavor asks a new question."""
        count = sum(n for (model, level), n in self.releases_by_class.items()
                    if level >= priority and (not models or model in models))
        return (models, count)

    def _count_release(self, run: WorkloadRun) -> None:
        priority, nodes, holdings = run.spec.priority, self.state.nodes, self.state.holdings
        wid = run.spec.workload_id
        for model in {nodes[holdings[(wid, pod)].node].gpu_model for pod in run.holding}:
            self.releases_by_class[(model, priority)] = self.releases_by_class.get((model, priority), 0) + 1

    def _stop_holding(self, run: WorkloadRun) -> None:
        if self.holding_runs.pop(run.spec.workload_id, None) is not None:
            self.holding_by_priority[run.spec.priority].pop(run.spec.workload_id, None)

    def _release_all(self, run: WorkloadRun, event: EventType, reason: str, message: str,
                     preemptor: str | None = None) -> None:
        self._count_release(run)
        for pod in run.holding:
            holding = self.state.release((run.spec.workload_id, pod))
            self.emit_pod(run, event, pod, holding.node, reason=reason, message=message, preemptor=preemptor)
        run.reserved.clear()
        run.started.clear()
        run.running_group = None
        self._stop_holding(run)

    def _requeue(self, run: WorkloadRun, reason: str, message: str, preemptor: str | None = None) -> None:
        for handle in (run.finish_handle, run.deadline_handle):
            if handle:
                handle.cancel()
        run.finish_handle = run.deadline_handle = None
        run.progress_start_s = None
        run.pending = set(range(run.spec.pods))
        run.failures += 1
        # The exponent is capped: thousands of failures (a gang that never fits) would
        # overflow a float, and 2^62 times any initial backoff is past every maximum.
        backoff = self.profile.backoff_initial_s * 2.0 ** min(run.failures - 1, 62)
        run.backoff_until_s = self.env.now + min(backoff, self.profile.backoff_max_s)
        run.last_pending = None
        self.emit(run, EventType.REQUEUED, reason=reason, message=message, preemptor=preemptor)
        self._dequeue(run)
        if self.admission is not None:
            # Kueue: an evicted workload gives its quota back and queues for admission again.
            self.admission.release(run)
            self.admission.submit(run)
        else:
            self._enqueue(run)

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

    def release_gang(self, run: WorkloadRun, reason: str, message: str, backoff_s: float = 0.0) -> None:
        """The gang's wait ended without it completing: every held pod is released
        (`timed_out` rows) and the group is requeued."""
        self._release_all(run, EventType.TIMED_OUT, reason, message)
        self._requeue(run, reason, message)
        if backoff_s:
            run.backoff_until_s = max(run.backoff_until_s, self.env.now + backoff_s)
            self._dequeue(run)
            self._enqueue(run)
        self.capacity_released()

    def evict(self, run: WorkloadRun, preemptor: WorkloadRun, *, message: str | None = None) -> None:
        """Preempt every pod of `run`; it resumes later from its last checkpoint.
        `message`: the admission layer's own sentence (Kueue's preemption message)."""
        now = self.env.now
        if run.progress_start_s is not None:
            kept = last_checkpoint_s(run.progress_start_s, now, run.spec.checkpoint_interval_s)
            run.remaining_s = max(0.0, run.remaining_s - (kept - run.progress_start_s))
        reason = f"preempted-by:{preemptor.spec.workload_id}"
        if message is not None:
            message = f"{message}; {run.remaining_s:.0f}s of work left after the last checkpoint"
        else:
            message = (
                f"Preempted to accommodate workload {preemptor.spec.workload_id} "
                f"(priority {preemptor.spec.priority} > {run.spec.priority}); "
                f"{run.remaining_s:.0f}s of work left after the last checkpoint"
            )
        by = preemptor.spec.workload_id
        self._release_all(run, EventType.PREEMPTED, reason, message, preemptor=by)
        self._requeue(run, "Preempted", message, preemptor=by)
