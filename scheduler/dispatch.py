"""Placement queueing: when scheduling cycles run and which entity each one tries.

Queueing follows kube-scheduler: an entity (a pod in `pod` profiles, a pod group in
`pod_group` profiles) that fails waits until GPUs are released or five minutes have passed
(the unschedulable-pod flush), and not before its backoff (initial·2^(failures−1), capped)
after a time-out or eviction. `scheduler/queue.py` says how this is done without retrying
the whole queue after every change (GPU shapes parked as a whole).

A cycle runs in `Phase.SCHEDULE` at an instant something may have changed, drains the
queue in queue order, and asks `cycle.attempt` about each entity.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.cycle.attempt import attempt
from scheduler.cycle.context import CycleContext
from scheduler.cycle.outcome import Outcome
from scheduler.cycle.planning import plan_group
from scheduler.cycle.pod import report_waiting_gangs, unschedulable_message
from scheduler.emitter import EventEmitter
from scheduler.eventlog.schema import PendingReason
from scheduler.framework.interface import Unit
from scheduler.framework.runtime import Framework
from scheduler.queue import SchedulingQueue
from scheduler.shape import GpuShape
from scheduler.sim import Environment, Phase
from scheduler.state.cluster_state import ClusterState
from scheduler.verify import Verifier
from scheduler.workload_run import GROUP, WorkloadRun

Progress = Callable[[float, int, float], None]  # (simulated now, pods started, last arrival)


class Dispatcher:
    """Files entities into the `SchedulingQueue` and runs the scheduling cycles that drain it.

    The cycle's context holds the life cycle, which holds this dispatcher: the replay
    builds the dispatcher first and `attach`es the context once it exists."""

    def __init__(self, env: Environment, state: ClusterState, framework: Framework, emitter: EventEmitter,
                 progress: Progress | None = None, last_arrival_s: float = 0.0) -> None:
        self.env, self.state, self.framework, self.emitter = env, state, framework, emitter
        self._ctx: CycleContext | None = None
        self.queue = SchedulingQueue()
        self._cycles_at: set[float] = set()
        self.progress = progress
        self.last_arrival_s = last_arrival_s
        self.pods_started = 0  # counted by the life cycle, reported with the progress

    def attach(self, ctx: CycleContext) -> None:
        self._ctx = ctx

    @property
    def ctx(self) -> CycleContext:
        if self._ctx is None:
            raise RuntimeError("the dispatcher runs cycles only once the replay attached their context")
        return self._ctx

    # -- filing --------------------------------------------------------------------------

    def enqueue(self, run: WorkloadRun) -> None:
        """File `run`'s pending pods (or the whole group) and ask for a cycle."""
        queue = self.queue
        now = self.env.now
        wid = run.spec.workload_id
        keys = [(wid, i) for i in sorted(run.pending)] if self.framework.profile.unit is Unit.POD else [(wid, GROUP)]
        for key in keys:
            shape = GpuShape.of(run, key[1])
            filed = queue.add(key, self._sort_key(run, key[1]), shape, not_before=run.backoff_until_s, now=now)
            # A newcomer to a shape that is parked would fail the same way: say so now, as
            # kube-scheduler's first attempt would, instead of leaving no reason behind.
            failure = queue.parked_failure(shape, self._version_of(shape), now) if filed else None
            if failure is not None:
                reason, message = PendingReason(failure[0]), failure[1]
                if reason is PendingReason.UNSCHEDULABLE and key[1] != GROUP:  # the diagnosis, under its own pod
                    message = unschedulable_message(run, key[1], message)
                self.emitter.pending(run, reason, message)
        self.request_cycle(max(now, run.backoff_until_s))

    def dequeue(self, run: WorkloadRun) -> None:
        """Forget `run`'s entities: its pods, or its whole group (`enqueue` files by the
        profile's unit, which a replay never changes)."""
        wid = run.spec.workload_id
        if self.framework.profile.unit is not Unit.POD:
            self.queue.remove((wid, GROUP))
            return
        for pod in range(run.spec.pods):
            self.queue.remove((wid, pod))

    def _sort_key(self, run: WorkloadRun, pod: int) -> tuple[float, ...]:
        spec = run.spec
        created = run.group_timestamp_s(self.env.now)
        return self.framework.queue_sort.sort_key(spec.priority, created, run.queued_s) + (run.seq, pod)

    def _version_of(self, shape: GpuShape | None) -> int:
        """The release version that matters to a shape: releases of the GPU models it
        accepts (None: any release)."""
        state = self.state
        return state.release_version if shape is None else state.release_version_for(shape.models)

    # -- cycles --------------------------------------------------------------------------

    def request_cycle(self, at: float | None = None) -> None:
        at = self.env.now if at is None else at
        if at not in self._cycles_at:
            self._cycles_at.add(at)
            self.env.at(at, Phase.SCHEDULE, lambda: self._cycle(at))

    def capacity_released(self) -> None:
        """GPUs were freed: parked shapes may fit now (the queue sees the release version)."""
        if len(self.queue):
            self.request_cycle()

    def _cycle(self, at: float) -> None:
        ctx, queue = self.ctx, self.queue
        self._cycles_at.discard(at)
        now = ctx.now
        next_backoff = queue.release_backoff(now)
        for key, shape in queue.drain(self.state, now):
            run = ctx.runs[key[0]]
            # The state the attempt saw: an attempt may itself give GPUs back (a rejected
            # gang's reservations), and a shape parked after that would miss them.
            version = self._version_of(shape)
            ctx.framework.begin_attempt(run.spec.workload_id, run.attempt, run.failures, now)
            outcome = attempt(ctx, run, key[1])
            if outcome is Outcome.PLACED:
                queue.placed(key)
                continue
            new_shape = GpuShape.of(run, key[1])
            tried = new_shape == shape
            if not tried:  # an elastic group placed part of its pods: re-file it
                queue.add(key, self._sort_key(run, key[1]), new_shape, not_before=now, now=now)
                shape = new_shape
            until = now + ctx.profile.unschedulable_flush_s
            if outcome is Outcome.FAILED_GPU:
                failure = run.last_pending[:2] if run.last_pending else None
                if failure and failure[0] == PendingReason.UNSCHEDULABLE.value and key[1] != GROUP:
                    # Newcomers inherit the diagnosis, not this pod's number and group count.
                    failure = (failure[0], run.unschedulable_detail or failure[1])
                queue.park_shape(shape, version, until, failure, tried=tried)
            else:
                queue.park_alone(key, version, until)
        report_waiting_gangs(ctx)
        if ctx.verifier:
            self._verify_parked(ctx.verifier, now)
        for wake in (next_backoff, queue.next_flush_s()):
            if wake is not None and wake > now:
                self.request_cycle(wake)
        if self.progress:
            self.progress(now, self.pods_started, self.last_arrival_s)

    def _verify_parked(self, verifier: Verifier, now: float) -> None:
        """Every entity of a parked shape would still fail: its plain attempt finds no room
        (a what-if, without preemption: a parked shape's preemption found nothing and its
        answer cannot change until a release, which unparks the shape)."""
        ctx = self.ctx
        for _, head in self.queue.parked_heads(self._version_of, now):
            run = ctx.runs[head[0]]
            if run.done or (head[1] == GROUP and not run.pending) or (head[1] != GROUP and head[1] not in run.pending):
                continue
            with ctx.framework.unobserved():
                if head[1] == GROUP:
                    needed = run.pods_needed
                    fits = plan_group(ctx, run, needed, explain=False).count >= needed
                else:
                    fits = ctx.framework.find_node(ctx.state, run.request, explain=False)[0] is not None
            if run.spec.parent_group and run.spec.parent_group not in ctx.composites_started:
                continue  # a composite child is planned with its siblings
            verifier.same(now, "parked shape still fails", False, fits, head[0])
