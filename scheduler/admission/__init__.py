"""The Kueue admission layer: real Kueue manifests in, admission decisions in the replay.

Modules, in the order a decision flows through them (Kueue's own layout in brackets):

- `policies`: the API's named policies as string enums [apis/kueue/v1beta2];
- `objects`: the Kueue objects as frozen values, and `QueueConfig`, all of them together;
- `manifests/`: the YAML reader (one module per kind, resource groups, Kueue's own
  Configuration, cross-references);
- `quota`: the cohort tree and its exact quota arithmetic [pkg/cache/scheduler/resource_node.go];
- `fair_shares`: dominant resource shares [pkg/cache/scheduler/fair_sharing.go];
- `workloads` / `holders` / `queues`: a workload as Kueue sees it, who holds quota, and each
  ClusterQueue's heap and inadmissible set [pkg/workload, pkg/cache/queue];
- `tas`: Topology-Aware Scheduling, the domain a pod set is admitted into, and the TAS cache
  of assignments [pkg/cache/scheduler/tas_flavor_snapshot.go];
- the decisions of one admission attempt: `flavor_assignment` [pkg/scheduler/flavorassigner],
  `preemption/` (`common`, `classical`, `fair_sharing`, `preemptor`) [pkg/scheduler/preemption],
  `fair_sharing_order` (the admission tournament) [pkg/scheduler/fair_sharing_iterator.go],
  `cycle_victims` (the cycle's victims, and whether a preempting head still fits without
  them) [pkg/scheduler/scheduler.go fits];
- `admitter`: one admission cycle, step by step [pkg/scheduler/scheduler.go], and
  `nominator`, its step 3 (each head's flavor assignment and targets, with the caches that
  outlive a cycle); `cycles`: when cycles run (pacing, the inadmissible requeue batch, idle
  cycles not scheduled); `wait_for_pods_ready`: the PodsReady timer; `placement_options`: the flavors a waiting
  workload could still be admitted under (the replay's quiescence test);
- `kueue`: the `AdmissionLayer` the replay drives (`kueue_admission(config)` is the
  factory `Replay` takes), which talks to the replay through `port.ReplayPort` only;
  `tables`: ``cluster_queues.parquet``.

Imports go one way: `kueue` → `cycles` → `admitter` → `nominator` → the decisions → `queues` / `holders` / `quota` →
`objects` → `policies`; nothing below imports what is above it.
"""

from scheduler.admission.manifests import parse_queue_config, read_queue_config
from scheduler.admission.manifests.quantities import parse_quantity, quantity_to_milli
from scheduler.admission.objects import (
    ClusterQueue,
    ClusterQueuePreemption,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LocalQueue,
    QueueConfig,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    WorkloadPriorityClass,
    flavor_matches,
)

__all__ = [
    "ClusterQueue",
    "ClusterQueuePreemption",
    "Cohort",
    "FlavorFungibility",
    "FlavorQuotas",
    "LocalQueue",
    "QueueConfig",
    "ResourceFlavor",
    "ResourceGroup",
    "ResourceQuota",
    "WorkloadPriorityClass",
    "flavor_matches",
    "parse_quantity",
    "parse_queue_config",
    "quantity_to_milli",
    "read_queue_config",
]
