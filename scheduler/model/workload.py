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


@dataclass(frozen=True, slots=True)
class Workload:
    workload_id: str
    submit_time_s: float
    duration_s: float
    pods: int
    min_count: int
    gpus_per_pod: float
    gpu_models: tuple[str, ...] = ()  # empty: any model; several: alternatives ("A|B")
    cpu_milli_per_pod: int = 0
    memory_mib_per_pod: int = 0
    tenant: str = "default"
    queue: str | None = None
    priority: int = 0
    checkpoint_interval_s: float | None = None
    topology_required: str | None = None
    topology_preferred: str | None = None
    parent_group: str | None = None  # CompositePodGroup this group belongs to
    parent_min_groups: int | None = None  # the composite's quorum of child groups (None: all)
    parent_topology_required: str | None = None  # the composite's topology level
    # The PodGroup's scheduleTimeoutSeconds: how long its pods wait at Permit (None: the profile's wait)
    schedule_timeout_s: float | None = None
    kind: str = "batch"
    # Mean fraction of time its GPUs' engines were active while it ran (DCGM
    # GR_ENGINE_ACTIVE); None = not measured. Costing only: the replay never reads it.
    gpu_utilization: float | None = None
    # Pod labels and annotations (key, value), sorted by key: the allocation keys showback can
    # group by and the FOCUS Tags. Costing only: the replay never reads them.
    labels: tuple[tuple[str, str], ...] = ()
    source_row: int = 0  # spreadsheet line of the input row (header = 1), for messages
    # Its PodGroup's disruptionMode; on a row with a parent_group, the CompositePodGroup's.
    disruption_mode: DisruptionMode = DisruptionMode.SINGLE
    on_pod_loss: OnPodLoss | None = None  # None: the default of its kind (`pod_loss_policy`)
    preemption_policy: PodPreemptionPolicy = PodPreemptionPolicy.PREEMPT_LOWER_PRIORITY

    @property
    def may_preempt(self) -> bool:
        """kube-scheduler's PodEligibleToPreemptOthers, its first rule: not under preemptionPolicy Never."""
        return self.preemption_policy is not PodPreemptionPolicy.NEVER

    # DRA (docs/dra.md): ResourceClaimTemplates each pod gets a claim from, and the PodGroup's
    # shared ResourceClaim (the same devices for every pod of the group).
    claim_templates: tuple[str, ...] = ()
    shared_claim: str | None = None

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

    def narrowed(self, gpu_models: tuple[str, ...], pods: int, *, drop_topology: bool = False) -> Workload:
        """This row on `gpu_models` with `pods` pods (and without its topology columns when
        `drop_topology`): what `dataclasses.replace` gives, built by the constructor directly.
        Kueue narrows a workload at every admission, and `replace` runs as interpreted code
        that reads the fields' list and passes every field by keyword; a test holds the two
        equal over every field (`test_workload_narrowed.py`)."""
        return Workload(
            workload_id=self.workload_id, submit_time_s=self.submit_time_s, duration_s=self.duration_s, pods=pods,
            min_count=self.min_count, gpus_per_pod=self.gpus_per_pod, gpu_models=gpu_models,
            cpu_milli_per_pod=self.cpu_milli_per_pod, memory_mib_per_pod=self.memory_mib_per_pod, tenant=self.tenant,
            queue=self.queue, priority=self.priority, checkpoint_interval_s=self.checkpoint_interval_s,
            topology_required=None if drop_topology else self.topology_required,
            topology_preferred=None if drop_topology else self.topology_preferred,
            parent_group=self.parent_group, parent_min_groups=self.parent_min_groups,
            parent_topology_required=self.parent_topology_required, schedule_timeout_s=self.schedule_timeout_s,
            kind=self.kind, gpu_utilization=self.gpu_utilization, labels=self.labels, source_row=self.source_row,
            disruption_mode=self.disruption_mode, on_pod_loss=self.on_pod_loss,
            preemption_policy=self.preemption_policy, claim_templates=self.claim_templates,
            shared_claim=self.shared_claim,
        )
