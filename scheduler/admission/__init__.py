"""The Kueue-style admission layer: queue configuration read from real Kueue manifests."""

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
