"""The Kueue objects of a queues file, as frozen values (what `scheduler.admission.manifests`
reads and every decision consumes): ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
WorkloadPriorityClass, Kueue's own Configuration, and `QueueConfig`, all of them together.

Quantities are integers in milli-units of the resource's base unit (8 GPUs -> 8000; "500m"
CPU -> 500; "1Gi" memory -> 1073741824000), so that quota arithmetic is exact. Policies are
the string enums of `scheduler.admission.policies`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    FairSharingStrategy,
    FlavorFungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
    QueueingStrategy,
    RequeueTimestamp,
    StopPolicy,
)
from scheduler.model.cluster import GPU_PRODUCT_LABEL as GPU_PRODUCT_LABEL  # re-exported
from scheduler.model.cluster import (
    WELL_KNOWN_LABELS,
    Cluster,
    Node,
    NodeSelector,
    Taint,
    Toleration,
)

GPU_RESOURCE = "nvidia.com/gpu"
# nodeLabels keys that read a simulated Node's attributes; any other key reads the node's
# free-form `labels` (from the cluster file).
NODE_LABEL_ATTRIBUTES = WELL_KNOWN_LABELS
# Read for every flavor tried: a module constant (see preemption.common).
_TRY_NEXT_FLAVOR = FlavorFungibilityPolicy.TRY_NEXT_FLAVOR


# ---------------------------------------------------------------------- kueue.x-k8s.io


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    name: str
    node_labels: tuple[tuple[str, str], ...] = ()  # sorted (key, value) pairs
    node_taints: tuple[Taint, ...] = ()  # taints the flavor's nodes carry
    tolerations: tuple[Toleration, ...] = ()  # added to the pods admitted under the flavor
    topology_name: str | None = None  # a Topology: Kueue's TAS places its workloads
    # What Kueue injects into the pods it admits under this flavor (nodeSelector and
    # tolerations: pkg/podset PodSetInfo.Merge via podset.FromAssignment), less the GPU
    # product label: placement already holds that as the pods' GPU models (`narrow`), and
    # a selector of the GPU model alone would only slow placement's fast paths. Derived
    # from the fields above when the value is made (read at every admission).
    selector: NodeSelector = field(init=False, repr=False, compare=False)
    gpu_product: str | None = field(init=False, repr=False, compare=False)  # its GPU product label

    def __post_init__(self) -> None:
        object.__setattr__(self, "selector", NodeSelector.of(
            tuple((k, v) for k, v in self.node_labels if k != GPU_PRODUCT_LABEL), self.tolerations))
        object.__setattr__(self, "gpu_product", dict(self.node_labels).get(GPU_PRODUCT_LABEL))

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.node_labels)


@dataclass(frozen=True, slots=True)
class Topology:
    """kueue.x-k8s.io Topology: node labels from the widest level to the narrowest
    (``spec.levels[].nodeLabel``; kubernetes.io/hostname, when present, is the last)."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """One resource's quota in one flavor, in milli-units. A limit of None is unlimited."""

    resource: str
    nominal_milli: int
    borrowing_limit_milli: int | None = None
    lending_limit_milli: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    flavor: str
    resources: tuple[ResourceQuota, ...]

    def quota(self, resource: str) -> ResourceQuota | None:
        return next((q for q in self.resources if q.resource == resource), None)


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]  # in the order Kueue tries them


@dataclass(frozen=True, slots=True)
class ClusterQueuePreemption:
    """ClusterQueue ``spec.preemption`` (Kueue's ClusterQueuePreemption)."""

    within_cluster_queue: PreemptionPolicy = PreemptionPolicy.NEVER
    reclaim_within_cohort: PreemptionPolicy = PreemptionPolicy.NEVER
    borrow_within_cohort: BorrowWithinCohortPolicy = BorrowWithinCohortPolicy.NEVER
    borrow_max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    when_can_borrow: FlavorFungibilityPolicy = FlavorFungibilityPolicy.MAY_STOP_SEARCH
    when_can_preempt: FlavorFungibilityPolicy = FlavorFungibilityPolicy.TRY_NEXT_FLAVOR
    preference: FungibilityPreference | None = None  # unset ranks flavors its own way (see flavor_assignment)

    @property
    def try_next_when_borrowing(self) -> bool:
        return self.when_can_borrow is _TRY_NEXT_FLAVOR

    @property
    def try_next_when_preempting(self) -> bool:
        return self.when_can_preempt is _TRY_NEXT_FLAVOR


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    cohort: str | None = None
    queueing_strategy: QueueingStrategy = QueueingStrategy.BEST_EFFORT_FIFO
    resource_groups: tuple[ResourceGroup, ...] = ()
    preemption: ClusterQueuePreemption = ClusterQueuePreemption()
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    fair_sharing_weight: float = 1.0
    stop_policy: StopPolicy = StopPolicy.NONE  # Hold / HoldAndDrain: the queue admits nothing
    # spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing: its workloads are
    # ordered by their LocalQueue's decayed usage first (when the Configuration enables it).
    usage_based_admission_fair_sharing: bool = False

    @property
    def flavor_names(self) -> tuple[str, ...]:
        return tuple(f.flavor for g in self.resource_groups for f in g.flavors)

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        for group in self.resource_groups:
            for flavor_quotas in group.flavors:
                if flavor_quotas.flavor == flavor:
                    found = flavor_quotas.quota(resource)
                    if found is not None:
                        return found
        return None


@dataclass(frozen=True, slots=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    fair_sharing_weight: float = 1.0  # spec.fairSharing.weight: admission fair sharing divides by it

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Cohort:
    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_sharing_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class WorkloadPriorityClass:
    name: str
    value: int
    description: str = ""


# ---------------------------------------------------------------- config.kueue.x-k8s.io


# Kueue's cap when backoffMaxSeconds is 0: time.Duration(MaxInt64 / 2) nanoseconds, in seconds.
_UNCAPPED_BACKOFF_S = float((2**63 - 1) // 2) / 1e9


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    """An admitted workload must reach PodsReady within `timeout_s`, or it is evicted
    and requeued after min(base·2^(n−1), max) seconds; past `backoff_limit_count`
    requeues it is deactivated. A workload that was ready and lost pods must be ready
    again within `recovery_timeout_s` (None: the same as `timeout_s`, Kueue's default)."""

    timeout_s: float = 300.0
    block_admission: bool = True
    requeue_timestamp: RequeueTimestamp = RequeueTimestamp.EVICTION
    backoff_base_s: float = 60.0
    backoff_max_s: float = 3600.0
    backoff_limit_count: int | None = None
    recovery_timeout_s: float | None = None

    @property
    def recovery_s(self) -> float:
        return self.timeout_s if self.recovery_timeout_s is None else self.recovery_timeout_s

    def backoff_s(self, count: int) -> float:
        """The wait before the `count`-th requeue (count >= 1): Kueue's wait.Backoff
        (pkg/util/wait/backoff.go `WaitTime`, factor 2, jitter not modelled) returns the
        base first and doubles it until the next value passes the cap, which it returns from
        then on. Doubling stops there, so no requeue count can overflow. backoffMaxSeconds 0
        means no configured cap: Kueue then caps at MaxInt64/2 nanoseconds."""
        cap = self.backoff_max_s or _UNCAPPED_BACKOFF_S
        duration = self.backoff_base_s
        if duration <= 0:
            return 0.0
        for _ in range(count - 1):
            duration *= 2
            if duration > cap:
                return cap
        return duration


@dataclass(frozen=True, slots=True)
class FairSharing:
    preemption_strategies: tuple[FairSharingStrategy, ...] = (
        FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, FairSharingStrategy.LESS_THAN_INITIAL_SHARE,
    )


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    """The Configuration's admissionFairSharing (apis/config/v1beta2 AdmissionFairSharing):
    a LocalQueue's consumed resources decay with half-life `usage_half_life_s` (0: reset at
    every sample), sampled every `usage_sampling_interval_s`; `resource_weights` (resource
    name -> weight, default 1) sum them into one usage figure."""

    usage_half_life_s: float = 0.0
    usage_sampling_interval_s: float = 300.0
    resource_weights: tuple[tuple[str, float], ...] = ()  # sorted by resource name


@dataclass(frozen=True, slots=True)
class KueueConfiguration:
    wait_for_pods_ready: WaitForPodsReady | None = None
    fair_sharing: FairSharing | None = None
    # admissionFairSharing with the AdmissionFairSharing gate on (beta, default on since 0.15)
    admission_fair_sharing: AdmissionFairSharing | None = None
    # featureGates.PrioritizePreemptorWorkloads (alpha in Kueue 0.20, off by default): a
    # workload waiting for its preemptions goes first in the cycle's order and holds the
    # quota it can claim even without targets, so its victims cannot take it back.
    prioritize_preemptor_workloads: bool = False
    # featureGates.PartialAdmission (beta, on by default): a pod set's minCount is honoured.
    partial_admission: bool = True
    # featureGates.FlavorFungibilityPreserveScanProgress (beta in Kueue 0.20, on by default):
    # a workload's flavor scan progress survives a ClusterQueue generation bump when it is
    # from this or the previous cycle, and a skip ("no longer fits", overlapping targets).
    preserve_scan_progress: bool = True
    # featureGates.KueueDRAIntegration (beta, on by default) and the Configuration's
    # resources.deviceClassMappings as (DeviceClass, logical resource) pairs: with the gate on,
    # a pod set's claim templates count their devices against quota; with it off and
    # KueueDRARejectWorkloadsWhenDRADisabled (beta, on by default), a workload with claims is
    # inadmissible (`scheduler/dra/kueue.py`).
    dra_integration: bool = True
    reject_dra_when_disabled: bool = True
    device_class_mappings: tuple[tuple[str, str], ...] = ()


# ------------------------------------------------------------------------ all of them


def frozen_mapping(mapping: dict | None = None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class QueueConfig:
    """All admission objects of one queues file, keyed by name (LocalQueues by
    ``namespace/name``), in file order."""

    flavors: Mapping[str, ResourceFlavor] = field(default_factory=frozen_mapping)
    cluster_queues: Mapping[str, ClusterQueue] = field(default_factory=frozen_mapping)
    local_queues: Mapping[str, LocalQueue] = field(default_factory=frozen_mapping)
    cohorts: Mapping[str, Cohort] = field(default_factory=frozen_mapping)
    priority_classes: Mapping[str, WorkloadPriorityClass] = field(default_factory=frozen_mapping)
    warnings: tuple[str, ...] = ()
    configuration: KueueConfiguration = KueueConfiguration()
    topologies: Mapping[str, Topology] = field(default_factory=frozen_mapping)

    def local_queue(self, queue: str) -> LocalQueue | None:
        """The LocalQueue a trace row's ``queue`` names: ``namespace/name`` or a bare name.
        A bare name used in several namespaces resolves to the first namespace in
        alphabetical order (a warning was recorded at load time)."""
        if "/" in queue:
            return self.local_queues.get(queue)
        matches = sorted((lq for lq in self.local_queues.values() if lq.name == queue), key=lambda lq: lq.namespace)
        return matches[0] if matches else None

    def cluster_queue_for(self, local_queue_name: str) -> str | None:
        found = self.local_queue(local_queue_name)
        return found.cluster_queue if found else None


def flavor_matches(flavor: ResourceFlavor, node: Node) -> bool:
    """True when the node carries every nodeLabel of the flavor (its well-known attributes
    or the labels its cluster file gives it)."""
    return all(node.label_value(key) == value for key, value in flavor.node_labels)


def taint_nodes(cluster: Cluster, flavors: Mapping[str, ResourceFlavor]) -> Cluster:
    """The cluster with every flavor's nodeTaints on the nodes that carry all its nodeLabels.

    A ResourceFlavor's nodeTaints describe its nodes ("taints that the nodes associated with
    this ResourceFlavor have", apis/kueue/v1beta2/resourceflavor_types.go): the simulated
    nodes get them, so kube-scheduler's TaintToleration filter keeps every pod off them
    that does not tolerate them (a pod admitted under another flavor, or no Kueue pod)."""
    tainting = [f for f in flavors.values() if f.node_taints]
    if not tainting:
        return cluster
    nodes = []
    for node in cluster.nodes:
        taints = set(node.taints)
        for flavor in tainting:
            if flavor_matches(flavor, node):
                taints.update(flavor.node_taints)
        nodes.append(replace(node, taints=tuple(sorted(taints))) if len(taints) != len(node.taints) else node)
    return Cluster(tuple(nodes))


def unmatched_flavor_warnings(cluster: Cluster, config: QueueConfig) -> list[str]:
    """One line per flavor a ClusterQueue offers that no node of the cluster carries all the
    nodeLabels of: workloads admitted under it hold quota and can never be placed."""
    used = {flavor for queue in config.cluster_queues.values() for flavor in queue.flavor_names}
    return [
        f"ResourceFlavor {name}: no node of the cluster carries all its nodeLabels "
        f"({', '.join(f'{k}={v}' for k, v in flavor.node_labels)}); workloads admitted under it cannot be placed"
        for name, flavor in config.flavors.items()
        if name in used and flavor.node_labels and not any(flavor_matches(flavor, n) for n in cluster.nodes)
    ]
