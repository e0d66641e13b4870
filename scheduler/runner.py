"""The replay: workloads arrive, scheduling cycles place them, pods run, finish or are evicted.

`Replay` composes the parts, each named after its concern, and drives the simulated clock:

- `ClusterState` (state.py): which pod holds which GPUs, with a journal for what-ifs;
- `Framework` (framework/): the profile's plugins at their extension points;
- `EventEmitter` (emitter.py): every transition as an event row;
- `HoldingIndex` (holding_index.py): who holds GPUs, by priority, for preemption;
- `Dispatcher` (dispatch.py): the placement queue and when scheduling cycles run;
- `Lifecycle` (lifecycle.py): arrive, admit, place, start, finish, evict, requeue;
- the admission layer (admission/, optional): Kueue in front of placement;
- the cycle (cycle/): one scheduling attempt, reading a `CycleContext`.

Everything runs on the simulated clock of `scheduler.sim`; same inputs and seed give the
same event log, byte for byte.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from scheduler.admission.port import ReplayPort
from scheduler.cycle.context import CycleContext
from scheduler.dispatch import Dispatcher, Progress
from scheduler.emitter import EventEmitter
from scheduler.eventlog.writer import EventLogWriter
from scheduler.framework.profile import Profile
from scheduler.framework.runtime import Framework
from scheduler.lifecycle import AdmissionLayer, Lifecycle
from scheduler.model import Cluster, Workload
from scheduler.quiescence import Quiescence
from scheduler.sim import Environment, Phase
from scheduler.state.cluster_state import ClusterState
from scheduler.state.holding_index import HoldingIndex
from scheduler.verify import Verifier
from scheduler.workload_run import WorkloadRun

if TYPE_CHECKING:
    from scheduler.dra.objects import PodClaims
    from scheduler.dra.setup import DraSetup


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
        progress: Progress | None = None,
        admission_factory: Callable[[ReplayPort], AdmissionLayer] | None = None,
        *,
        verifier: Verifier | None = None,
        dra: DraSetup | None = None,
    ) -> None:
        with _no_collections():  # everything built here lives for the whole replay
            self.env = Environment()
            self.profile = profile
            self.state = ClusterState(cluster)
            claims_of: dict[str, PodClaims] = {}
            if dra is not None:  # devices through DRA (docs/dra.md): absent, the replay never looks
                self.state.dra, claims_of = dra.state, dra.claims_of
            self.framework = Framework(profile, random.Random(seed), verifier=verifier, seed=seed)
            self.emitter = EventEmitter(writer, self.env, self.state.nodes)
            if dra is not None:
                from scheduler.dra.allocation_log import DeviceAllocationLog
                from scheduler.plugins.gpu_fit import with_devices

                self.emitter.device_gpus = self.state.dra_gpus
                self.emitter.device_allocations = DeviceAllocationLog(
                    dra.state, self.state.holdings, tuple(node.name for node in self.state.nodes), claims_of)
                self.framework.filters = with_devices(self.framework.filters)
            self.holdings = HoldingIndex(self.state)
            self.runs: dict[str, WorkloadRun] = {}
            for seq, workload in enumerate(workloads):
                run = WorkloadRun.of(workload, seq, cluster_queue_of(workload), claims_of.get(workload.workload_id))
                self.runs[workload.workload_id] = run
                self.state.priority_of[workload.workload_id] = workload.priority
            composites: dict[str, list[WorkloadRun]] = {}  # parent -> child groups, in arrival order
            for run in self.runs.values():
                if run.spec.parent_group:
                    composites.setdefault(run.spec.parent_group, []).append(run)
            last_arrival_s = max((w.submit_time_s for w in workloads), default=0.0)
            self.dispatcher = Dispatcher(self.env, self.state, self.framework, self.emitter, progress, last_arrival_s)
            self.lifecycle = Lifecycle(self.env, self.state, profile, self.framework, self.emitter, self.holdings,
                                       self.dispatcher)
            self.ctx = CycleContext(self.env, self.state, self.framework, profile, self.runs, self.holdings,
                                    self.emitter, self.lifecycle, composites=composites, verifier=verifier)
            self.dispatcher.attach(self.ctx)
            self.env.at_each(Phase.ARRIVE, [(run.spec.submit_time_s, partial(self.lifecycle.arrive, run))
                                            for run in self.runs.values()])
            self.lifecycle.admission = admission_factory(self.lifecycle) if admission_factory else None
            admission = self.lifecycle.admission
            self.quiescence = Quiescence(self.ctx, admission.placement_options if admission else None)
            self.settled: str | None = None  # the quiescence summary, when the replay stopped there
            self._inputs_end_s = max([last_arrival_s, *(w.submit_time_s for w, _, _ in rejected)])
            self.env.at_each(Phase.ARRIVE, [(workload.submit_time_s, partial(self.emitter.never_runs, workload, reason, message))
                                            for workload, reason, message in rejected])

    def run(self) -> float:
        """Replay to the end; returns the simulated time of the last action.

        The end: no action left, the profile's safety stop, or quiescence once the last input
        is in (`scheduler/quiescence.py`: nothing holds GPUs and no workload still waiting
        could ever start; `settled` then says who waits and why)."""
        env, cap = self.env, self.profile.max_simulated_s
        with _few_collections():
            env.run(until=min(cap, self._inputs_end_s))  # nothing settles while inputs are still to come
            while (next_time := env.peek()) is not None:
                if next_time > cap:
                    env.now = cap
                    break
                if next_time > env.now and not self.state.holdings and (line := self.quiescence.settled()):
                    self.settled = line
                    break
                env.step()
        return env.now

    def schedule_resize(self, workload_id: str, at_s: float, min_count: int) -> None:
        """Elastic: the group's min_count becomes `min_count` at `at_s`."""
        run = self.runs[workload_id]
        self._inputs_end_s = max(self._inputs_end_s, at_s)
        self.env.at(at_s, Phase.ARRIVE, lambda: self.lifecycle.resize(run, min_count))



@contextmanager
def _no_collections() -> Iterator[None]:
    """While the replay is built: the collector off, then as it was. What is built (a run and
    an arrival per workload) lives for the whole replay, so a collection frees nothing, and a
    full one, each time the heap has grown by a quarter, scans the trace and all built so far
    again (half of building bench-1m's replay)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# Allocations between two young-generation collections (CPython's default: 700). The replay
# allocates millions of short-lived tuples and events and keeps few cycles; at the default,
# collecting was 8 % of a large replay's time. Decisions never depend on the collector.
_YOUNG_COLLECTION_THRESHOLD = 100_000


@contextmanager
def loading_collections() -> Iterator[None]:
    """While a replay's inputs are read and its state built: young collections as rare as
    during the replay, put back afterwards. Reading makes hundreds of thousands of objects
    that live as long as the replay and no garbage cycles; at the default threshold the
    collector walked all of them again and again (eight full collections of the hidden-size
    workload's inputs, 0.8 of its 14 CPU s, collecting almost nothing)."""
    before = gc.get_threshold()
    gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def _few_collections() -> Iterator[None]:
    """For the replay's duration: what exists before it (the trace, the cluster, the state)
    is frozen out of the collector's scans and young collections are rarer; both are put
    back afterwards, so the caller's process is as it was."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
