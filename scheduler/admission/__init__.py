"""The Kueue admission layer: real Kueue manifests in, admission decisions in the replay.

Modules, in the order a decision flows through them:

- `manifests` / `configuration`: the YAML (ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
  WorkloadPriorityClass, and Kueue's Configuration for waitForPodsReady and fairSharing);
- `quota`: the cohort tree and its exact quota arithmetic;
- `workloads` / `queues`: a workload as Kueue sees it, and each ClusterQueue's heap and
  inadmissible set (StrictFIFO, BestEffortFIFO);
- `flavor_assignment`, `preemption`, `fair_sharing`: the decisions of one admission attempt;
- `admitter`: one admission cycle, step by step; `wait_for_pods_ready`: the PodsReady timer;
- `kueue`: the `AdmissionLayer` the replay drives (`kueue_admission(config)` is the
  factory `Replay` takes); `tables`: ``cluster_queues.parquet``.
"""

from scheduler.admission.manifests import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    PreemptionPolicy,
    QueueConfig,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    WorkloadPriorityClass,
    flavor_matches,
    parse_quantity,
    parse_queue_config,
    quantity_to_milli,
    read_queue_config,
)

__all__ = [
    "ClusterQueue",
    "Cohort",
    "FlavorQuotas",
    "LocalQueue",
    "PreemptionPolicy",
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
