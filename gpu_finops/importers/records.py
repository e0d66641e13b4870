"""What every importer produces before grouping: one `PodRecord` per pod, `NodeRow`s, and
`Rejected` rows; and the gang objects a dump may carry beside its pods (`GroupObjects`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Rejected:
    """An input object that became neither a workload, a member of one, nor a node."""

    source: str
    row: int
    kind: str
    namespace: str
    name: str
    field: str
    reason: str  # starts with a short code (NoGpuRequest, NeverStarted, ...) and a colon


@dataclass(frozen=True, slots=True)
class Owner:
    kind: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class PodRecord:
    """One pod as the importers read it, whatever the source (API object or metrics)."""

    source: str
    row: int
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    owner: Owner | None
    node: str | None
    phase: str
    gpus: float  # per pod; < 1 only from a DRA claim shared by several pods
    cpu_milli: int
    memory_mib: int
    gpu_models: tuple[str, ...]  # from the pod's node selector / affinity; empty: any model
    priority: int | None
    created: datetime
    started: datetime | None
    finished: datetime | None  # None: still running when the dump was taken
    restarts: int = 0
    workload_ref: tuple[str, str, str] | None = None  # native v1alpha1: (workload, podGroup, replicaKey)
    scheduling_group: str | None = None  # native v1alpha2+: spec.schedulingGroup.podGroupName
    waiting: str = ""  # why it never started, for the rejected row (scheduler's condition message)
    # DRA (a dump with ResourceSlices): its claim templates and shared claim, as namespace/name
    claim_templates: tuple[str, ...] = ()
    shared_claim: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class NodeRow:
    """A row of cluster.csv."""

    node: str
    gpu_model: str
    gpus: int
    cpu_milli: int
    memory_mib: int
    zone: str = ""
    block: str = ""
    rack: str = ""
    pricing_category: str = "Standard"
    labels: Mapping[str, str] = field(default_factory=dict)  # the node's own, to check flavors


@dataclass(frozen=True, slots=True)
class PodGroupSpec:
    """A gang object found in a dump: its quorum, parent composite and topology key."""

    min_count: int | None  # None: no gang (native Basic policy)
    parent: str | None = None
    topology_key: str | None = None
    disruption_all: bool = False  # spec.disruptionMode: {all: {}} (the API default is Single)


@dataclass(frozen=True, slots=True)
class CompositeSpec:
    min_groups: int | None
    topology_key: str | None = None
    disruption_all: bool = False


@dataclass
class GroupObjects:
    """Objects beside the pods that say how pods form gangs, keyed by (namespace, name)."""

    native_workloads: dict[tuple[str, str], dict[str, int | None]] = field(default_factory=dict)
    native_pod_groups: dict[tuple[str, str], PodGroupSpec] = field(default_factory=dict)
    composites: dict[tuple[str, str], CompositeSpec] = field(default_factory=dict)
    plugin_pod_groups: dict[tuple[str, str], int] = field(default_factory=dict)  # minMember
    plugin_schedule_timeouts: dict[tuple[str, str], int] = field(default_factory=dict)  # scheduleTimeoutSeconds
    job_parallelism: dict[tuple[str, str], int] = field(default_factory=dict)
    # Jobs (batch/v1) and JobSets whose spec.scheduling says disruptionMode: {all: {}}
    job_disruption_all: set[tuple[str, str]] = field(default_factory=set)
    jobset_disruption_all: set[tuple[str, str]] = field(default_factory=set)
    claim_gpus: dict[tuple[str, str], float | None] = field(default_factory=dict)  # ResourceClaim
    template_gpus: dict[tuple[str, str], float | None] = field(default_factory=dict)
    priority_classes: dict[str, int] = field(default_factory=dict)  # Kueue WorkloadPriorityClass
    # A LeaderWorkerSet's leaderWorkerTemplate.restartPolicy (RecreateGroupOnPodRestart, None)
    lws_restart_policies: dict[tuple[str, str], str] = field(default_factory=dict)
    # The dump has ResourceSlices: pods' claims are named in the trace, read whole by the replay
    dra_devices: bool = False
