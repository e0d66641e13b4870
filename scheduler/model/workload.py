"""A workload is one pod group: `pods` identical pods, of which `min_count` must run together."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MILLI = 1000
"""GPU requests are kept in milli-GPUs so that fractional sharing adds up exactly."""


class DisruptionMode(StrEnum):
    """A PodGroup's `disruptionMode` (scheduling.k8s.io): what one preemption victim is."""

    SINGLE = "single"  # the API default: each pod is a victim of its own
    ALL = "all"  # the whole group (a CompositePodGroup's started children together) is one victim


class OnPodLoss(StrEnum):
    """What the workload's own controller does when the scheduler preempts one of its pods."""

    RESTART_GROUP = "restart_group"  # JobSet's default failure handling, LWS RecreateGroupOnPodRestart
    KEEP_RUNNING = "keep_running"  # elastic or degraded-capable: the other pods go on
    REPLACE_POD = "replace_pod"  # an Indexed Job recreates the pod: it alone goes back to pending


class PodPreemptionPolicy(StrEnum):
    """Its PriorityClass's `preemptionPolicy`, copied into the pod spec: whether kube-scheduler
    may preempt for it (`PodEligibleToPreemptOthers`, defaultpreemption). A `never` workload
    still jumps the queue by its priority and can itself be preempted."""

    PREEMPT_LOWER_PRIORITY = "preempt_lower_priority"  # the API default
    NEVER = "never"


# The controller a workload kind usually runs under, when the trace does not say (docs/traces.md).
ON_POD_LOSS_BY_KIND: dict[str, OnPodLoss] = {
    "training": OnPodLoss.RESTART_GROUP,  # JobSet / Kubeflow jobs: a lost worker restarts the job
    "fine-tune": OnPodLoss.RESTART_GROUP,
    "inference": OnPodLoss.RESTART_GROUP,  # LeaderWorkerSet's default RecreateGroupOnPodRestart
    "batch": OnPodLoss.REPLACE_POD,  # a Job's controller recreates the lost pod
    "notebook": OnPodLoss.REPLACE_POD,
}
DEFAULT_ON_POD_LOSS = OnPodLoss.RESTART_GROUP  # any other kind


@dataclass(frozen=True, slots=True, init=False)
class Workload:
    workload_id: str
    submit_time_s: float
    duration_s: float
    pods: int
    min_count: int
    gpus_per_pod: float
    gpu_models: tuple[str, ...]  # empty: any model; several: alternatives ("A|B")
    cpu_milli_per_pod: int
    memory_mib_per_pod: int
    tenant: str
    queue: str | None
    priority: int
    checkpoint_interval_s: float | None
    topology_required: str | None
    topology_preferred: str | None
    parent_group: str | None  # CompositePodGroup this group belongs to
    parent_min_groups: int | None  # the composite's quorum of child groups (None: all)
    parent_topology_required: str | None  # the composite's topology level
    # The PodGroup's scheduleTimeoutSeconds: how long its pods wait at Permit (None: the profile's wait)
    schedule_timeout_s: float | None
    kind: str
    # Mean fraction of time its GPUs' engines were active while it ran (DCGM
    # GR_ENGINE_ACTIVE); None = not measured. Costing only: the replay never reads it.
    gpu_utilization: float | None
    # Pod labels and annotations (key, value), sorted by key: the allocation keys showback can
    # group by and the FOCUS Tags. Costing only: the replay never reads them.
    labels: tuple[tuple[str, str], ...]
    source_row: int  # spreadsheet line of the input row (header = 1), for messages
    # Its PodGroup's disruptionMode; on a row with a parent_group, the CompositePodGroup's.
    disruption_mode: DisruptionMode
    on_pod_loss: OnPodLoss | None  # None: the default of its kind (`pod_loss_policy`)
    preemption_policy: PodPreemptionPolicy

    # Written out rather than generated: mypyc compiles a dataclass's own methods, while the
    # __init__ the dataclasses module generates (and `dataclasses.replace`) run interpreted,
    # and Kueue narrows a workload on every admission (`replaced`). Frozen: set through object.
    def __init__(
        self, workload_id: str, submit_time_s: float, duration_s: float, pods: int, min_count: int,
        gpus_per_pod: float, gpu_models: tuple[str, ...] = (), cpu_milli_per_pod: int = 0,
        memory_mib_per_pod: int = 0, tenant: str = "default", queue: str | None = None, priority: int = 0,
        checkpoint_interval_s: float | None = None, topology_required: str | None = None,
        topology_preferred: str | None = None, parent_group: str | None = None,
        parent_min_groups: int | None = None, parent_topology_required: str | None = None,
        schedule_timeout_s: float | None = None, kind: str = "batch", gpu_utilization: float | None = None,
        labels: tuple[tuple[str, str], ...] = (), source_row: int = 0,
        disruption_mode: DisruptionMode = DisruptionMode.SINGLE, on_pod_loss: OnPodLoss | None = None,
        preemption_policy: PodPreemptionPolicy = PodPreemptionPolicy.PREEMPT_LOWER_PRIORITY,
        claim_templates: tuple[str, ...] = (), shared_claim: str | None = None,
    ) -> None:
        object.__setattr__(self, "workload_id", workload_id)
        object.__setattr__(self, "submit_time_s", submit_time_s)
        object.__setattr__(self, "duration_s", duration_s)
        object.__setattr__(self, "pods", pods)
        object.__setattr__(self, "min_count", min_count)
        object.__setattr__(self, "gpus_per_pod", gpus_per_pod)
        object.__setattr__(self, "gpu_models", gpu_models)
        object.__setattr__(self, "cpu_milli_per_pod", cpu_milli_per_pod)
        object.__setattr__(self, "memory_mib_per_pod", memory_mib_per_pod)
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "queue", queue)
        object.__setattr__(self, "priority", priority)
        object.__setattr__(self, "checkpoint_interval_s", checkpoint_interval_s)
        object.__setattr__(self, "topology_required", topology_required)
        object.__setattr__(self, "topology_preferred", topology_preferred)
        object.__setattr__(self, "parent_group", parent_group)
        object.__setattr__(self, "parent_min_groups", parent_min_groups)
        object.__setattr__(self, "parent_topology_required", parent_topology_required)
        object.__setattr__(self, "schedule_timeout_s", schedule_timeout_s)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "gpu_utilization", gpu_utilization)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "source_row", source_row)
        object.__setattr__(self, "disruption_mode", disruption_mode)
        object.__setattr__(self, "on_pod_loss", on_pod_loss)
        object.__setattr__(self, "preemption_policy", preemption_policy)
        object.__setattr__(self, "claim_templates", claim_templates)
        object.__setattr__(self, "shared_claim", shared_claim)

    def replaced(self, *, pods: int | None = None, gpu_models: tuple[str, ...] | None = None,
                 gpus_per_pod: float | None = None, drop_topology: bool = False) -> Workload:
        """`dataclasses.replace` of the fields the replay changes (None: as it is;
        `drop_topology`: no topology constraint), compiled."""
        return Workload(
            self.workload_id, self.submit_time_s, self.duration_s, self.pods if pods is None else pods,
            self.min_count, self.gpus_per_pod if gpus_per_pod is None else gpus_per_pod,
            self.gpu_models if gpu_models is None else gpu_models, self.cpu_milli_per_pod,
            self.memory_mib_per_pod, self.tenant, self.queue, self.priority, self.checkpoint_interval_s,
            None if drop_topology else self.topology_required,
            None if drop_topology else self.topology_preferred, self.parent_group, self.parent_min_groups,
            self.parent_topology_required, self.schedule_timeout_s, self.kind, self.gpu_utilization,
            self.labels, self.source_row, self.disruption_mode, self.on_pod_loss, self.preemption_policy,
            self.claim_templates, self.shared_claim
        )

    @property
    def may_preempt(self) -> bool:
        """kube-scheduler's PodEligibleToPreemptOthers, its first rule: not under preemptionPolicy Never."""
        return self.preemption_policy is not PodPreemptionPolicy.NEVER

    # DRA (docs/dra.md): ResourceClaimTemplates each pod gets a claim from, and the PodGroup's
    # shared ResourceClaim (the same devices for every pod of the group).
    claim_templates: tuple[str, ...]
    shared_claim: str | None

    @property
    def claims_devices(self) -> bool:
        """Its pods ask for devices through DRA claims."""
        return bool(self.claim_templates) or self.shared_claim is not None

    @property
    def gpu_milli_per_pod(self) -> int:
        return round(self.gpus_per_pod * MILLI)

    @property
    def shares_device(self) -> bool:
        """A request below one GPU shares a device with other pods (GPU sharing)."""
        return self.gpu_milli_per_pod < MILLI

    @property
    def pod_loss_policy(self) -> OnPodLoss:
        """What its controller does when one pod is preempted: the trace's, else its kind's default."""
        if self.on_pod_loss is not None:
            return self.on_pod_loss
        return ON_POD_LOSS_BY_KIND.get(self.kind, DEFAULT_ON_POD_LOSS)

    @property
    def total_gpus(self) -> float:
        return self.pods * self.gpus_per_pod

    @property
    def gpu_model_label(self) -> str | None:
        return "|".join(self.gpu_models) if self.gpu_models else None

    def accepts_model(self, model: str) -> bool:
        return not self.gpu_models or model in self.gpu_models
