"""One reader per Kueue kind: a document's ``spec`` in, a frozen value out.

Fields Kueue has but the simulator does not model are accepted (`QUIET_FIELDS`); those that
change what Kueue would decide (admission checks, admission fair sharing, a LocalQueue's
stopPolicy, a missing namespaceSelector) give one warning per field naming the objects
(`NOT_MODELLED`); any other unknown field is a warning of its own. Both API versions are read: v1beta1 ``spec.cohort`` / Cohort ``spec.parent``
and v1beta2 ``spec.cohortName`` / ``spec.parentName``.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.manifests.quantities import MAX_INT32, kind_of, shown
from scheduler.admission.manifests.resource_groups import read_resource_groups
from scheduler.admission.objects import (
    NODE_LABEL_ATTRIBUTES,
    ClusterQueue,
    ClusterQueuePreemption,
    Cohort,
    FlavorFungibility,
    LocalQueue,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from scheduler.admission.policies import (
    RECLAIM_WITHIN_COHORT_POLICIES,
    WITHIN_CLUSTER_QUEUE_POLICIES,
    BorrowWithinCohortPolicy,
    FlavorFungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
    QueueingStrategy,
    StopPolicy,
)

QUIET_FIELDS = {
    "ResourceFlavor": {"nodeTaints", "tolerations", "topologyName"},
    "ClusterQueue": {"namespaceSelector", "admissionChecks", "admissionChecksStrategy", "stopPolicy", "admissionScope",
                     "concurrentAdmissionPolicy"},
    "LocalQueue": {"stopPolicy", "fairSharing"},
    "Cohort": set(),
}
# Real Kueue fields that change its decisions but not the replay's: the one-line warning.
NOT_MODELLED = {
    ("ClusterQueue", "admissionChecks"): "spec.admissionChecks is not modelled: workloads are admitted as if "
                                         "every admission check passed at once",
    ("ClusterQueue", "admissionChecksStrategy"): "spec.admissionChecksStrategy is not modelled: workloads are admitted "
                                                 "as if every admission check passed at once",
    ("ClusterQueue", "admissionScope"): "spec.admissionScope (admission fair sharing) is not modelled: workloads of "
                                        "a ClusterQueue are ordered by priority and time only",
    ("ClusterQueue", "concurrentAdmissionPolicy"): "spec.concurrentAdmissionPolicy is not modelled: one variant per "
                                                   "workload",
    ("LocalQueue", "stopPolicy"): "LocalQueue spec.stopPolicy is not modelled: the LocalQueue is never held",
    ("LocalQueue", "fairSharing"): "LocalQueue spec.fairSharing (admission fair sharing) is not modelled: its weight "
                                   "is ignored",
}
NO_NAMESPACE_SELECTOR = ("ClusterQueue without spec.namespaceSelector: Kueue's null selector matches no namespace, "
                         "so Kueue would admit nothing from it; the replay admits from every LocalQueue as if it were {}")
_CLUSTER_QUEUE_FIELDS = {"cohort", "cohortName", "queueingStrategy", "resourceGroups", "preemption", "flavorFungibility", "fairSharing"}
# v1beta1 spelled "stop at this flavor" Borrow (whenCanBorrow) and Preempt (whenCanPreempt):
# deprecated old names of MayStopSearch (apis/kueue/v1beta1/clusterqueue_types.go
# FlavorFungibilityPolicy, clusterqueue_conversion.go).
_OLD_WHEN_CAN_BORROW = {"Borrow": FlavorFungibilityPolicy.MAY_STOP_SEARCH}
_OLD_WHEN_CAN_PREEMPT = {"Preempt": FlavorFungibilityPolicy.MAY_STOP_SEARCH}


def read_resource_flavor(reader: FieldReader, name: str, document: Mapping) -> ResourceFlavor:
    spec = reader.mapping(document.get("spec"), "spec")
    reader.unknown_fields(spec, {"nodeLabels"} | QUIET_FIELDS["ResourceFlavor"], "spec.")
    labels = reader.mapping(spec.get("nodeLabels"), "spec.nodeLabels")
    pairs = []
    for key, value in labels.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise reader.error(f"spec.nodeLabels.{key}", f"must be a text value, got {kind_of(value)}")
        if key not in NODE_LABEL_ATTRIBUTES:
            reader.warn(
                f"ResourceFlavor {name}: nodeLabel {key!r} is not carried by simulated nodes "
                f"(known: {', '.join(NODE_LABEL_ATTRIBUTES)}); it is ignored when matching nodes"
            )
        pairs.append((str(key), str(value)))
    return ResourceFlavor(name, tuple(sorted(pairs)))


def read_cluster_queue(reader: FieldReader, name: str, document: Mapping) -> ClusterQueue:
    spec = reader.mapping(document.get("spec"), "spec")
    reader.unknown_fields(spec, _CLUSTER_QUEUE_FIELDS | QUIET_FIELDS["ClusterQueue"], "spec.")
    _say_not_modelled(reader, "ClusterQueue", name, spec)
    if spec.get("namespaceSelector") is None:
        reader.not_modelled(NO_NAMESPACE_SELECTOR, name)
    cohort_key = "cohortName" if "cohortName" in spec else "cohort"
    cohort = None
    if spec.get(cohort_key) is not None:
        cohort = reader.name(spec[cohort_key], "spec." + cohort_key)
    # The fields are read in this order: of several mistakes, the first one here is reported.
    preemption = _preemption(reader, spec)
    fungibility_spec, when_can_borrow, when_can_preempt = _when_can(reader, spec)
    queueing_strategy = reader.choice(spec.get("queueingStrategy"), "spec.queueingStrategy", tuple(QueueingStrategy),
                                      QueueingStrategy.BEST_EFFORT_FIFO)
    resource_groups = read_resource_groups(reader, spec, f"ClusterQueue {name}", allow_limits=cohort is not None)
    preference = reader.choice(fungibility_spec.get("preference"), "spec.flavorFungibility.preference",
                               tuple(FungibilityPreference), None)
    return ClusterQueue(
        name=name,
        cohort=cohort,
        queueing_strategy=queueing_strategy,
        resource_groups=resource_groups,
        preemption=preemption,
        flavor_fungibility=FlavorFungibility(when_can_borrow, when_can_preempt, preference),
        fair_sharing_weight=reader.weight(spec, "spec."),
        stop_policy=reader.choice(spec.get("stopPolicy"), "spec.stopPolicy", tuple(StopPolicy), StopPolicy.NONE),
    )


def _say_not_modelled(reader: FieldReader, kind: str, name: str, spec: Mapping) -> None:
    for (of_kind, key), what in NOT_MODELLED.items():
        if of_kind == kind and spec.get(key) not in (None, [], {}, "None"):
            reader.not_modelled(what, name)


def _preemption(reader: FieldReader, spec: Mapping) -> ClusterQueuePreemption:
    path = "spec.preemption"
    preemption = reader.mapping(spec.get("preemption"), path)
    reader.unknown_fields(preemption, {"withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort"}, path + ".")
    borrow = reader.mapping(preemption.get("borrowWithinCohort"), f"{path}.borrowWithinCohort")
    reader.unknown_fields(borrow, {"policy", "maxPriorityThreshold"}, f"{path}.borrowWithinCohort.")
    threshold = borrow.get("maxPriorityThreshold")
    if (preemption.get("reclaimWithinCohort") or "Never") == "Never" and (borrow.get("policy") or "Never") != "Never":
        raise reader.error(f"{path}.borrowWithinCohort.policy", "must be Never when reclaimWithinCohort is Never")
    if threshold is not None and (not isinstance(threshold, int) or isinstance(threshold, bool) or abs(threshold) > MAX_INT32):
        raise reader.error(f"{path}.borrowWithinCohort.maxPriorityThreshold", f"must be a 32-bit whole number, got {shown(threshold)}")
    return ClusterQueuePreemption(
        within_cluster_queue=reader.choice(preemption.get("withinClusterQueue"), f"{path}.withinClusterQueue",
                                           WITHIN_CLUSTER_QUEUE_POLICIES, PreemptionPolicy.NEVER),
        reclaim_within_cohort=reader.choice(preemption.get("reclaimWithinCohort"), f"{path}.reclaimWithinCohort",
                                            RECLAIM_WITHIN_COHORT_POLICIES, PreemptionPolicy.NEVER),
        borrow_within_cohort=reader.choice(borrow.get("policy"), f"{path}.borrowWithinCohort.policy",
                                           tuple(BorrowWithinCohortPolicy), BorrowWithinCohortPolicy.NEVER),
        borrow_max_priority_threshold=threshold,
    )


def _when_can(reader: FieldReader, spec: Mapping) -> tuple[Mapping, FlavorFungibilityPolicy, FlavorFungibilityPolicy]:
    """``spec.flavorFungibility`` and its whenCanBorrow / whenCanPreempt."""
    path = "spec.flavorFungibility"
    fungibility = reader.mapping(spec.get("flavorFungibility"), path)
    reader.unknown_fields(fungibility, {"whenCanBorrow", "whenCanPreempt", "preference"}, path + ".")
    policies = tuple(FlavorFungibilityPolicy)
    return (
        fungibility,
        reader.choice(fungibility.get("whenCanBorrow"), f"{path}.whenCanBorrow", policies,
                      FlavorFungibilityPolicy.MAY_STOP_SEARCH, _OLD_WHEN_CAN_BORROW),
        reader.choice(fungibility.get("whenCanPreempt"), f"{path}.whenCanPreempt", policies,
                      FlavorFungibilityPolicy.TRY_NEXT_FLAVOR, _OLD_WHEN_CAN_PREEMPT),
    )


def read_local_queue(reader: FieldReader, name: str, metadata: Mapping, document: Mapping) -> LocalQueue:
    spec = reader.mapping(document.get("spec"), "spec", optional=False)
    reader.unknown_fields(spec, {"clusterQueue"} | QUIET_FIELDS["LocalQueue"], "spec.")
    namespace = metadata.get("namespace")
    namespace = "default" if namespace is None else reader.name(namespace, "metadata.namespace")
    _say_not_modelled(reader, "LocalQueue", f"{namespace}/{name}", spec)
    return LocalQueue(namespace, name, reader.name(spec.get("clusterQueue"), "spec.clusterQueue"))


def read_cohort(reader: FieldReader, name: str, document: Mapping) -> Cohort:
    spec = reader.mapping(document.get("spec"), "spec")
    reader.unknown_fields(spec, {"parent", "parentName", "resourceGroups", "fairSharing"}, "spec.")
    parent_key = "parentName" if "parentName" in spec else "parent"
    parent = None if spec.get(parent_key) is None else reader.name(spec[parent_key], "spec." + parent_key)
    return Cohort(
        name=name,
        parent=parent,
        resource_groups=read_resource_groups(reader, spec, f"Cohort {name}", allow_limits=parent is not None),
        fair_sharing_weight=reader.weight(spec, "spec."),
    )


def read_priority_class(reader: FieldReader, name: str, document: Mapping) -> WorkloadPriorityClass:
    value = document.get("value")
    if not isinstance(value, int) or isinstance(value, bool) or abs(value) > MAX_INT32:
        raise reader.error("value", f"must be a 32-bit whole number, got {shown(value)}")
    description = document.get("description") or ""
    if not isinstance(description, str):
        raise reader.error("description", f"must be text, got {kind_of(description)}")
    return WorkloadPriorityClass(name, value, str(description))
