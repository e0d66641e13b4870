"""One reader per Kueue kind: a document's ``spec`` in, a frozen value out.

Fields Kueue has but the simulator does not model are accepted (`QUIET_FIELDS`); those that
change what Kueue would decide (admission checks, a LocalQueue's stopPolicy, a missing
namespaceSelector) give one warning per field naming the objects
(`NOT_MODELLED`); any other unknown field is a warning of its own. Both API versions are read: v1beta1 ``spec.cohort`` / Cohort ``spec.parent``
and v1beta2 ``spec.cohortName`` / ``spec.parentName``.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.manifests.quantities import MAX_INT32, kind_of, shown
from scheduler.admission.manifests.resource_groups import read_resource_groups
from scheduler.admission.objects import (
    ClusterQueue,
    ClusterQueuePreemption,
    Cohort,
    FlavorFungibility,
    LocalQueue,
    ResourceFlavor,
    Topology,
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
from scheduler.model.cluster import HOSTNAME_LABEL, TAINT_EFFECTS, Taint, Toleration

QUIET_FIELDS = {
    "ResourceFlavor": set(),
    "ClusterQueue": {"namespaceSelector", "admissionChecks", "admissionChecksStrategy", "stopPolicy",
                     "concurrentAdmissionPolicy"},
    "LocalQueue": {"stopPolicy"},
    "Cohort": set(),
}
# Real Kueue fields that change its decisions but not the replay's: the one-line warning.
NOT_MODELLED = {
    ("ClusterQueue", "admissionChecks"): "spec.admissionChecks is not modelled: workloads are admitted as if "
                                         "every admission check passed at once",
    ("ClusterQueue", "admissionChecksStrategy"): "spec.admissionChecksStrategy is not modelled: workloads are admitted "
                                                 "as if every admission check passed at once",
    ("ClusterQueue", "concurrentAdmissionPolicy"): "spec.concurrentAdmissionPolicy is not modelled: one variant per "
                                                   "workload",
    ("LocalQueue", "stopPolicy"): "LocalQueue spec.stopPolicy is not modelled: the LocalQueue is never held",
}
NO_NAMESPACE_SELECTOR = ("ClusterQueue without spec.namespaceSelector: Kueue's null selector matches no namespace, "
                         "so Kueue would admit nothing from it; the replay admits from every LocalQueue as if it were {}")
_RESOURCE_FLAVOR_FIELDS = {"nodeLabels", "nodeTaints", "tolerations", "topologyName"}
_CLUSTER_QUEUE_FIELDS = {"cohort", "cohortName", "queueingStrategy", "resourceGroups", "preemption", "flavorFungibility", "fairSharing",
                         "admissionScope"}
# apis/kueue/v1beta2/clusterqueue_types.go AdmissionMode
_ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")
# v1beta1 spelled "stop at this flavor" Borrow (whenCanBorrow) and Preempt (whenCanPreempt):
# deprecated old names of MayStopSearch (apis/kueue/v1beta1/clusterqueue_types.go
# FlavorFungibilityPolicy, clusterqueue_conversion.go).
_OLD_WHEN_CAN_BORROW = {"Borrow": FlavorFungibilityPolicy.MAY_STOP_SEARCH}
_OLD_WHEN_CAN_PREEMPT = {"Preempt": FlavorFungibilityPolicy.MAY_STOP_SEARCH}


def read_resource_flavor(reader: FieldReader, name: str, document: Mapping) -> ResourceFlavor:
    spec = reader.mapping(document.get("spec"), "spec")
    reader.unknown_fields(spec, _RESOURCE_FLAVOR_FIELDS | QUIET_FIELDS["ResourceFlavor"], "spec.")
    labels = reader.mapping(spec.get("nodeLabels"), "spec.nodeLabels")
    pairs = []
    for key, value in labels.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise reader.error(f"spec.nodeLabels.{key}", f"must be a text value, got {kind_of(value)}")
        pairs.append((str(key), str(value)))
    taints = tuple(_taint(reader, item, f"spec.nodeTaints[{i}]")
                   for i, item in enumerate(reader.sequence(spec.get("nodeTaints"), "spec.nodeTaints")))
    tolerations = tuple(_toleration(reader, item, f"spec.tolerations[{i}]")
                        for i, item in enumerate(reader.sequence(spec.get("tolerations"), "spec.tolerations")))
    topology = reader.name(spec["topologyName"], "spec.topologyName") if spec.get("topologyName") is not None else None
    return ResourceFlavor(name, tuple(sorted(pairs)), taints, tolerations, topology)


def _taint(reader: FieldReader, item: object, path: str) -> Taint:
    """corev1.Taint as ResourceFlavor validation accepts it: a key, an optional value, an
    effect of NoSchedule, PreferNoSchedule or NoExecute."""
    taint = reader.mapping(item, path, optional=False)
    reader.unknown_fields(taint, {"key", "value", "effect", "timeAdded"}, path + ".")
    effect = _text(reader, taint.get("effect"), path + ".effect")
    if effect not in TAINT_EFFECTS:
        raise reader.error(path + ".effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {shown(taint.get('effect'))}")
    return Taint(reader.name(taint.get("key"), path + ".key"), _text(reader, taint.get("value"), path + ".value"), effect)


def _toleration(reader: FieldReader, item: object, path: str) -> Toleration:
    """corev1.Toleration as ResourceFlavor validation accepts it: operator Equal (default)
    or Exists (then no value), an optional effect, tolerationSeconds ignored."""
    toleration = reader.mapping(item, path, optional=False)
    reader.unknown_fields(toleration, {"key", "operator", "value", "effect", "tolerationSeconds"}, path + ".")
    operator = _text(reader, toleration.get("operator"), path + ".operator") or "Equal"
    if operator not in ("Equal", "Exists"):
        raise reader.error(path + ".operator", f"must be Equal or Exists, got {shown(operator)}")
    value = _text(reader, toleration.get("value"), path + ".value")
    if operator == "Exists" and value:
        raise reader.error(path + ".value", "must be empty when operator is Exists")
    key = _text(reader, toleration.get("key"), path + ".key")
    if not key and operator != "Exists":
        raise reader.error(path + ".key", "an empty key needs operator Exists")
    effect = _text(reader, toleration.get("effect"), path + ".effect")
    if effect and effect not in TAINT_EFFECTS:
        raise reader.error(path + ".effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {shown(effect)}")
    return Toleration(key, operator, value, effect)


def _text(reader: FieldReader, value: object, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise reader.error(path, f"must be text, got {kind_of(value)}")
    return str(value).strip()


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
        usage_based_admission_fair_sharing=_admission_mode(reader, spec) == _ADMISSION_MODES[0],
    )


def _admission_mode(reader: FieldReader, spec: Mapping) -> str | None:
    """``spec.admissionScope.admissionMode`` (required in an admissionScope)."""
    if spec.get("admissionScope") is None:
        return None
    scope = reader.mapping(spec.get("admissionScope"), "spec.admissionScope")
    reader.unknown_fields(scope, {"admissionMode"}, "spec.admissionScope.")
    mode = scope.get("admissionMode")
    if mode not in _ADMISSION_MODES:
        raise reader.error("spec.admissionScope.admissionMode", f"must be one of {', '.join(_ADMISSION_MODES)}, got {shown(mode)}")
    return str(mode)


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
    reader.unknown_fields(spec, {"clusterQueue", "fairSharing"} | QUIET_FIELDS["LocalQueue"], "spec.")
    namespace = metadata.get("namespace")
    namespace = "default" if namespace is None else reader.name(namespace, "metadata.namespace")
    _say_not_modelled(reader, "LocalQueue", f"{namespace}/{name}", spec)
    return LocalQueue(namespace, name, reader.name(spec.get("clusterQueue"), "spec.clusterQueue"),
                      fair_sharing_weight=reader.weight(spec, "spec."))


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


def read_topology(reader: FieldReader, name: str, document: Mapping) -> Topology:
    """Topology (v1beta1, v1beta2): 1 to 16 distinct levels; kubernetes.io/hostname may only
    be the last (apis/kueue/v1beta2/topology_types.go TopologySpec validation)."""
    spec = reader.mapping(document.get("spec"), "spec")
    reader.unknown_fields(spec, {"levels"}, "spec.")
    items = reader.sequence(spec.get("levels"), "spec.levels")
    if not 1 <= len(items) <= 16:
        raise reader.error("spec.levels", f"must list 1 to 16 levels, got {len(items)}")
    levels: list[str] = []
    for i, item in enumerate(items):
        level = reader.mapping(item, f"spec.levels[{i}]", optional=False)
        reader.unknown_fields(level, {"nodeLabel"}, f"spec.levels[{i}].")
        label = reader.name(level.get("nodeLabel"), f"spec.levels[{i}].nodeLabel")
        if label in levels:
            raise reader.error(f"spec.levels[{i}].nodeLabel", f"{label} is listed twice: levels must be unique")
        levels.append(label)
    if HOSTNAME_LABEL in levels[:-1]:
        raise reader.error("spec.levels", f"{HOSTNAME_LABEL} can only be the lowest (last) level")
    return Topology(name, tuple(levels))
