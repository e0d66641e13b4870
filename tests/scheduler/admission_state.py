"""What one admission decision sees, built by hand for table tests: the queue configuration
(from the fluent builders), the quota tree with some workloads holding quota, and the real
decision code (flavor assignment, the preemptor) run against it.

    state = AdmissionState(make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).obj(), ...)
    state.holding("team-a", make_workload("a1").gpus(6).obj())
    wl = state.pending("team-b", make_workload("b1").gpus(4).obj())
    state.assign(wl).mode, state.targets(wl)

A flavor named in a ClusterQueue's quota is added as a ResourceFlavor unless given.
`QuotaOnlyReplay` drives the whole layer (queues and admission cycles) on quota alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from scheduler.admission.fair_shares import FairShares
from scheduler.admission.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.admission.holders import Holders
from scheduler.admission.kueue import KueueAdmission
from scheduler.admission.preemption.common import Target
from scheduler.admission.preemption.preemptor import Preemptor
from scheduler.admission.quota import QuotaTree
from scheduler.admission.workloads import AdmissionWorkload, State, admission_workload
from scheduler.eventlog.schema import PendingReason
from scheduler.model.cluster import NO_SELECTOR, Node, NodeSelector
from scheduler.model.workload import Workload
from scheduler.sim import Environment, Handle, Phase
from scheduler.state.cluster_state import PodRequest
from scheduler.workload_run import WorkloadRun
from tests.scheduler.builders import make_flavor, make_local_queue, queue_config


def with_flavors(objects: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The objects, plus a ResourceFlavor for every flavor a quota names and none defines."""
    defined = {o["metadata"]["name"] for o in objects if o["kind"] == "ResourceFlavor"}
    named = [f["name"] for o in objects if o["kind"] in ("ClusterQueue", "Cohort")
             for group in o["spec"].get("resourceGroups", []) for f in group["flavors"]]
    missing = [make_flavor(name).obj() for name in dict.fromkeys(named) if name not in defined]
    return [*missing, *objects]


def workload_run(workload: Workload, seq: int = 0) -> WorkloadRun:
    """The replay's run of a trace row (what the admission layer is handed)."""
    request = PodRequest(workload.gpu_milli_per_pod, workload.cpu_milli_per_pod, workload.memory_mib_per_pod,
                         workload.gpu_models)
    return WorkloadRun(workload, seq, request, None, workload.duration_s)


class AdmissionState:
    def __init__(self, *objects: dict[str, Any]) -> None:
        self.config = queue_config(*with_flavors(objects))
        self.tree = QuotaTree(self.config)
        self.holders = Holders(self.config.cluster_queues)
        self.shares = FairShares(self.tree)
        self.preemptor = Preemptor(self.tree, self.config.cluster_queues, self.holders,
                                   self.config.configuration.fair_sharing, self.shares)
        self._seq = 0

    def pending(self, cluster_queue: str, workload: Workload) -> AdmissionWorkload:
        """A workload queued in `cluster_queue` (its queue-order timestamp: its submit time)."""
        self._seq += 1
        wl = admission_workload(workload_run(workload, self._seq), None, cluster_queue)
        wl.state = State.QUEUED
        return wl

    def holding(self, cluster_queue: str, workload: Workload, *, flavor: str = "a100", admitted_s: float | None = None,
                evicting: bool = False) -> AdmissionWorkload:
        """A workload admitted in `cluster_queue` with `flavor` (at its submit time unless
        `admitted_s`); `evicting`: preempted already, its pods still terminating."""
        wl = self.pending(cluster_queue, workload)
        wl.state = State.ADMITTED
        wl.usage = {(flavor, resource): value for resource, value in wl.requests.items()}
        wl.flavors = {resource: flavor for resource in wl.requests}
        wl.admitted_s = workload.submit_time_s if admitted_s is None else admitted_s
        self.tree.add(self.tree.queue(cluster_queue), wl.usage)
        self.tree.commit()
        self.holders.add(cluster_queue, wl)
        if evicting:
            self.holders.mark_evicting(wl)
        return wl

    def assign(self, wl: AdmissionWorkload) -> Assignment:
        """Flavor assignment for `wl`, asking the real preemption oracle."""
        queue = self.tree.queue(wl.cluster_queue or "")
        return assign_flavors(wl, queue, self.config.cluster_queues[queue.name], self.config.flavors,
                              self.preemptor.simulate, fair_sharing=self.config.configuration.fair_sharing is not None,
                              topologies=self.config.topologies)

    def targets(self, wl: AdmissionWorkload) -> list[Target]:
        """The victims preemption picks for `wl`'s assignment ([] unless it needs preemption)."""
        assignment = self.assign(wl)
        if assignment.mode is not Mode.PREEMPT:
            return []
        queue = self.tree.queue(wl.cluster_queue or "")
        return self.preemptor.targets(wl, queue, assignment.usage, assignment.frs_needing_preemption)

    def usage(self, name: str) -> int:
        """GPUs (whole) the ClusterQueue or Cohort `name` uses of flavor a100."""
        node = self.tree.queues.get(name) or self.tree.cohorts[name]
        return node.usage.get(("a100", "nvidia.com/gpu"), 0) // 1000


def with_local_queues(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects, plus a LocalQueue ``<cq>/<cq>`` for every ClusterQueue none points at."""
    served = {o["spec"]["clusterQueue"] for o in objects if o["kind"] == "LocalQueue"}
    missing = [make_local_queue(o["metadata"]["name"]).obj() for o in objects
               if o["kind"] == "ClusterQueue" and o["metadata"]["name"] not in served]
    return [*objects, *missing]


class QuotaOnlyReplay:
    """The replay as the admission layer sees it (`ReplayPort`), without placement: an
    admitted workload runs at once, for its duration, and reports PodsReady; an evicted one
    is released and submitted again, as the real replay does. `log` keeps
    (time, event, workload, reason) for admitted, evicted, pending and rejected.

    For table tests of the layer's queueing decisions (StrictFIFO, BestEffortFIFO, sticky
    preemptor, inadmissible requeue); the real replay's timelines are in
    test_admission_timelines.py."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self._env = Environment()
        self.config = queue_config(*with_local_queues(with_flavors(objects)))
        self.layer = KueueAdmission(self, self.config)
        self.log: list[tuple[float, str, str, str | None]] = []
        self._finish: dict[str, Handle] = {}
        self._seq = 0

    def submit(self, *workloads: Workload) -> QuotaOnlyReplay:
        for workload in workloads:
            self._seq += 1
            run = workload_run(workload, self._seq)
            self._env.at(workload.submit_time_s, Phase.ARRIVE, partial(self.layer.submit, run))
        return self

    def run(self, until: float | None = None) -> list[tuple[float, str, str, str | None]]:
        self._env.run(until)
        return self.log

    def _record(self, run: WorkloadRun, event: str, reason: str | None = None) -> None:
        self.log.append((self._env.now, event, run.spec.workload_id, reason))

    # -- ReplayPort ------------------------------------------------------------------------

    @property
    def env(self) -> Environment:
        return self._env

    def admit(self, run: WorkloadRun, cluster_queue: str, *, reason: str | None = None, message: str | None = None,
              flavor: str | None = None, pods: int | None = None) -> None:
        self._record(run, "admitted", reason)
        started = self._env.now

        def finish() -> None:
            run.done = True
            self.layer.release(run)

        self._finish[run.spec.workload_id] = self._env.at(started + run.remaining_s, Phase.FINISH, finish)
        run.progress_start_s = started
        self.layer.pods_ready(run)

    def narrow(self, run: WorkloadRun, gpu_models: tuple[str, ...] | None, selector: NodeSelector = NO_SELECTOR,
               *, topology_assigned: bool = False) -> None:
        run.narrow(gpu_models, selector, topology_assigned=topology_assigned)

    def free_gpus(self) -> tuple[list[Node], list[int], list[int]]:
        return [], [], []  # quota only: no nodes (no flavor of these tests has a Topology)

    def gpus_held(self, workload_id: str, pods: Sequence[int]) -> dict[int, tuple[int, int]]:
        return {}  # quota only: no pods on nodes

    def pass_through(self, run: WorkloadRun) -> None:
        self._record(run, "passed")

    def pending(self, run: WorkloadRun, reason: PendingReason, message: str, *, queue_position: int | None = None,
                queue_length: int | None = None) -> None:
        self._record(run, "pending", reason.value)

    def pending_is_recent(self, run: WorkloadRun, reason: PendingReason) -> bool:
        return False

    def evict(self, run: WorkloadRun, preemptor: WorkloadRun, *, message: str | None = None) -> None:
        self._record(run, "evicted", preemptor.spec.workload_id)
        self._stop(run)

    def expire(self, run: WorkloadRun, reason: str, message: str) -> None:
        self._record(run, "expired", reason)
        self._stop(run)

    def reject(self, run: WorkloadRun, reason: PendingReason, message: str) -> None:
        self._record(run, "rejected", reason.value)

    def _stop(self, run: WorkloadRun) -> None:
        self._finish.pop(run.spec.workload_id).cancel()
        assert run.progress_start_s is not None
        run.remaining_s -= self._env.now - run.progress_start_s
        run.progress_start_s = None
        self.layer.release(run)
        self.layer.submit(run)
