"""A workload's mutable state during a replay: the run model every part of the replay shares.

`Workload` (scheduler/model) is the trace row, frozen; `WorkloadRun` is what happens to it:
which pods are pending, reserved or started, its gang quorum, its deadlines and backoff.
The replay's life cycle changes it; scheduling attempts and the admission layer read it.
"""

from __future__ import annotations

from scheduler.dra.objects import PodClaims
from scheduler.framework.victims import RunningGroup
from scheduler.model import Workload
from scheduler.model.cluster import NO_SELECTOR, NodeSelector
from scheduler.sim import Handle
from scheduler.state.cluster_state import PodRequest

GROUP = -1  # the pod_index of a queue key that stands for a whole pod group


GROUP_FAILURE_TTL_S = 1800.0  # coscheduling's lastFailedSchedulePG cache: 30 min expiry

class WorkloadRun:
    """Mutable scheduling state of one workload during the replay.

    A plain class, not a dataclass: mypyc compiles this `__init__`, where the one the
    dataclasses module generates runs interpreted (one per workload, and a large replay
    has hundreds of thousands)."""

    def __init__(self, spec: Workload, seq: int, request: PodRequest, cluster_queue: str | None,
                 remaining_s: float) -> None:
        self.spec = spec  # the trace row, narrowed to one GPU model while Kueue admits it (`narrow`)
        self.seq = seq
        self.request = request  # what each pod asks of a node, narrowed alike
        self.cluster_queue = cluster_queue
        self.remaining_s = remaining_s
        self.original_spec, self.original_request = spec, request
        self.pending: set[int] = set()
        self.reserved: set[int] = set()
        self.started: dict[int, float] = {}
        self.progress_start_s: float | None = None
        self.finish_handle: Handle | None = None
        self.deadline_handle: Handle | None = None
        self.backoff_until_s = 0.0
        self.failures = 0
        self.last_pending: tuple[str, str, float] | None = None
        self.done = False
        self.min_count = spec.min_count  # the group's current quorum: the trace's, until a resize changes it
        # `HoldingIndex.version` when preemption last could not help
        self.preemption_failed_at: tuple[object, ...] = ()
        self.arrived = False
        self.terminating = False  # preempted, its pods in their termination grace period
        self.attempt = 0  # bumped whenever the run gives all its pods back and is requeued
        self.queued_s = 0.0  # when its pods were last added to the queue (QueueSort reads it)
        self.awaiting_victims_until = 0.0  # a preemptor waits for its victims to terminate
        # When its PodGroup last failed (coscheduling PostFilter rejection or Unreserve), until its
        # quorum is met: coscheduling's queue order reads it (`group_timestamp_s`).
        self.group_failed_s: float | None = None
        # Why its last pod failed, without the pod or its group (a newcomer of the same parked
        # shape inherits this, under its own pod and group: `cycle.pod.unschedulable_message`).
        self.unschedulable_detail: str | None = None
        # What preemption sees of this run while it holds pods: one victim, or one per pod under
        # disruption mode Single (built on demand, dropped whenever a pod is placed, started or
        # released: see `cycle.group_preemption`).
        self.running_victims: tuple[RunningGroup, ...] | None = None
        # Pods preempted alone (disruption mode Single) in their termination grace period.
        self.terminating_pods: set[int] = set()

    @staticmethod
    def of(workload: Workload, seq: int, cluster_queue: str | None = None,
           claims: PodClaims | None = None) -> WorkloadRun:
        """The run of a trace row; `seq` is its arrival order (the queue's last tie-breaker);
        `claims`: its pods' DRA claims, resolved from the DRA inputs."""
        return WorkloadRun(workload, seq, pod_request(workload, claims), cluster_queue, workload.duration_s)

    def narrow(self, gpu_models: tuple[str, ...] | None, selector: NodeSelector = NO_SELECTOR, *,
               topology_assigned: bool = False) -> None:
        """Place the pods on nodes of `gpu_models` only that `selector` admits (None: as
        the trace asks, anywhere). `topology_assigned`: Kueue's TAS chose the domain (it is
        in the selector), so the placement plugin's own topology constraint is dropped."""
        original, pods = self.original_spec, self.spec.pods  # a partial admission's count stays
        if gpu_models is None:
            self.spec = original if pods == original.pods else original.replaced(pods=pods)
            self.request = self.original_request
        else:
            self.spec = original.replaced(gpu_models=gpu_models, pods=pods, drop_topology=topology_assigned)
            self.request = self.original_request.with_models(gpu_models, selector)

    def admitted_pods(self, pods: int | None) -> bool:
        """Run `pods` pods (Kueue's partial admission; None: the trace's count). True when
        the count changed: the caller resets the pending pods (none are held then)."""
        count = self.original_spec.pods if pods is None else pods
        if count == self.spec.pods:
            return False
        self.spec = self.spec.replaced(pods=count)
        return True

    def group_timestamp_s(self, now: float) -> float:
        """scheduler-plugins' GetCreationTimestamp (core.go, since afaa22f): the time its
        PodGroup last failed, while that record lives (go-cache, 30 min from the failure),
        else the group's creation time."""
        failed = self.group_failed_s
        if failed is not None and now < failed + GROUP_FAILURE_TTL_S:
            return failed
        return self.spec.submit_time_s

    @property
    def holding(self) -> list[int]:
        if not self.reserved:
            return sorted(self.started)
        return sorted(self.reserved | self.started.keys())

    @property
    def satisfied(self) -> bool:
        """The gang has reached min_count in this attempt (its progress has started)."""
        return self.progress_start_s is not None

    @property
    def pods_needed(self) -> int:
        """Pods that must fit together in this cycle: the rest of min_count counting the pods
        it holds, at least 1 (kube-scheduler gangscheduling.go `PlacementFeasible`: the
        scheduled pods and the pending ones reach minCount together). Once the group runs,
        a raised min_count asks that many pending pods at once, not one by one."""
        held = len(self.started) if not self.reserved else len(self.reserved | self.started.keys())  # len(holding), unsorted
        return max(1, self.min_count - held)


def pod_request(workload: Workload, claims: PodClaims | None = None) -> PodRequest:
    """What each pod of `workload` asks of a node. Every input of a placement attempt
    comes from here or from the run's state, which `scheduler.shape.GpuShape` mirrors
    (the node selector a Kueue flavor adds comes in through `WorkloadRun.narrow`).

    A pod with DRA `claims` asks for 1 milli-GPU in the count view: the least any device
    takes, so the count's bounds (PreFilter, topology domains) never rule out a node the
    DynamicResources filter would accept; the filter decides."""
    milli = 1 if claims is not None else workload.gpu_milli_per_pod
    return PodRequest(milli, workload.cpu_milli_per_pod, workload.memory_mib_per_pod,
                      workload.gpu_models, workload.priority, claims=claims)
