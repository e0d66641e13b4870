"""Kueue manifests (YAML, as users ``kubectl apply`` them) read into frozen values.

Contract of `read_queue_config(path)` / `parse_queue_config(text, source)`:

- The file is a multi-document YAML stream, read with ``yaml.safe_load_all``. Documents of
  ``apiVersion: kueue.x-k8s.io/v1beta1`` or ``v1beta2`` and kind ResourceFlavor,
  ClusterQueue, LocalQueue, Cohort or WorkloadPriorityClass are read; other kinds (Namespace,
  Topology, AdmissionCheck, ...) and empty documents are skipped with a warning.
- A document that is not a mapping, a missing name, a bad enum value, a bad quantity, a
  duplicate object or a reference to an unknown flavor or ClusterQueue raises `InputError`
  with ``document`` (1-based position in the stream) and ``field`` (the field path, e.g.
  ``spec.resourceGroups[0].flavors[1].resources[0].nominalQuota``).
- Unknown fields do not fail: they are listed in `QueueConfig.warnings` and ignored.
  Fields Kueue has but the simulator does not model (namespaceSelector, admissionChecks,
  stopPolicy, tolerations, ...) are accepted silently.
- Quantities are Kubernetes quantities ("8", "500m", "64Gi", "1.5", "1e3") and are kept as
  integers in milli-units of the base unit (8 GPUs -> 8000; "500m" CPU -> 500; "1Gi" memory
  -> 1073741824000), the unit `scheduler.model.workload.MILLI` uses for GPUs, so that quota
  arithmetic is exact.

Both API versions are accepted: v1beta1 ``spec.cohort`` / Cohort ``spec.parent`` and v1beta2
``spec.cohortName`` / ``spec.parentName``.

One ``config.kueue.x-k8s.io`` ``Configuration`` document may sit in the same stream: its
waitForPodsReady and fairSharing settings (`scheduler.admission.configuration`) become
`QueueConfig.configuration`.

Kueue's webhook validation is reproduced where a replay would otherwise go wrong silently:
borrowingLimit/lendingLimit only inside a cohort, lendingLimit <= nominalQuota, every flavor
of a resource group lists every covered resource, a flavor in one resource group only,
reclaimWithinCohort Never with borrowWithinCohort other than Never. Numbers are bounded
before any arithmetic (quantities at most `MAX_QUANTITY_MILLI`, priorities and thresholds
32-bit integers, as in Kubernetes), and names holding a control character are refused.
(`scheduler.admission.admits_nothing` warns when a configuration admits nothing.)
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from scheduler.admission.configuration import (
    CONFIG_API_VERSIONS,
    KueueConfiguration,
    parse_configuration,
)
from scheduler.errors import InputError
from scheduler.model.cluster import Node
from scheduler.trace.io import control_character_problem, read_utf8

API_GROUP = "kueue.x-k8s.io"
API_VERSIONS = (f"{API_GROUP}/v1beta1", f"{API_GROUP}/v1beta2")
GPU_RESOURCE = "nvidia.com/gpu"

# nodeLabels keys that select simulated nodes, and the Node attribute each one reads.
NODE_LABEL_ATTRIBUTES = {
    "nvidia.com/gpu.product": "gpu_model",
    "topology.kubernetes.io/zone": "zone",
    "gpu-finops/block": "block",
    "gpu-finops/rack": "rack",
    "kubernetes.io/hostname": "name",
}

QUEUEING_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_WITHIN_COHORT = ("Never", "LowerPriority", "Any")
BORROW_WITHIN_COHORT = ("Never", "LowerPriority")
FUNGIBILITY_BORROW = ("MayStopSearch", "TryNextFlavor", "Borrow")  # Borrow: v1beta1 spelling
FUNGIBILITY_PREEMPT = ("MayStopSearch", "TryNextFlavor", "Preempt")
FUNGIBILITY_PREFERENCE = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")

_SUFFIXES = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
}
MAX_QUANTITY_MILLI = 2**62
"""A quota in milli-units, at most: far above any cluster, and quota sums stay 64-bit."""
MAX_INT32 = 2**31 - 1  # a Kubernetes priority (and a priority threshold) is a 32-bit integer
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)$")


# ------------------------------------------------------------------------- value types


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    name: str
    node_labels: tuple[tuple[str, str], ...] = ()  # sorted (key, value) pairs

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.node_labels)


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """One resource's quota in one flavor; milli-units (see the module docstring).
    A limit of None is unlimited."""

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
class PreemptionPolicy:
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    borrow_max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None  # unset and the two values rank flavors differently (see flavor_assignment)

    @property
    def try_next_when_borrowing(self) -> bool:
        return self.when_can_borrow == "TryNextFlavor"

    @property
    def try_next_when_preempting(self) -> bool:
        return self.when_can_preempt == "TryNextFlavor"


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    cohort: str | None = None
    queueing_strategy: str = "BestEffortFIFO"
    resource_groups: tuple[ResourceGroup, ...] = ()
    preemption: PreemptionPolicy = PreemptionPolicy()
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    fair_sharing_weight: float = 1.0
    stop_policy: str = "None"  # Hold / HoldAndDrain: the queue admits nothing

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


def _frozen(mapping: dict | None = None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class QueueConfig:
    """All admission objects of one queues file, keyed by name (LocalQueues by
    ``namespace/name``), in file order."""

    flavors: Mapping[str, ResourceFlavor] = field(default_factory=_frozen)
    cluster_queues: Mapping[str, ClusterQueue] = field(default_factory=_frozen)
    local_queues: Mapping[str, LocalQueue] = field(default_factory=_frozen)
    cohorts: Mapping[str, Cohort] = field(default_factory=_frozen)
    priority_classes: Mapping[str, WorkloadPriorityClass] = field(default_factory=_frozen)
    warnings: tuple[str, ...] = ()
    configuration: KueueConfiguration = KueueConfiguration()

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
    """True when every nodeLabel of the flavor that simulated nodes carry matches the node.

    Keys the simulator does not know were reported as warnings at load time and are
    ignored here (nodes carry only the labels in `NODE_LABEL_ATTRIBUTES`).
    """
    for key, value in flavor.node_labels:
        attribute = NODE_LABEL_ATTRIBUTES.get(key)
        if attribute is not None and getattr(node, attribute) != value:
            return False
    return True


# ---------------------------------------------------------------------------- quantities


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity ("8", "500m", "64Gi", "1e3") as an exact Decimal.

    Raises ValueError for anything else (including booleans and negative signs are kept).
    """
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a quantity: {_shown(value)}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # YAML's .inf and .nan
            raise ValueError(f"not a finite quantity: {value!r}")
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise ValueError(f"not a quantity: {_shown(value)}")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(f"not a quantity: {_shown(value)}")
    number, exponent, suffix = match.groups()
    try:
        base = Decimal(number)
        if exponent:
            return base * (Decimal(10) ** int(exponent[1:]))
    except ArithmeticError:  # InvalidOperation, or an exponent like 1e999999999 (Overflow)
        raise ValueError(f"not a quantity: {_shown(value)}") from None
    return base * _SUFFIXES[suffix or ""]


def quantity_to_milli(value: Any) -> int:
    """A quantity in milli-units, rounded up like Kubernetes' MilliValue(); ValueError past
    `MAX_QUANTITY_MILLI` (checked on the exact Decimal, before it becomes an integer)."""
    milli = parse_quantity(value) * 1000
    if abs(milli) > MAX_QUANTITY_MILLI:
        raise ValueError(f"more than {MAX_QUANTITY_MILLI // 1000:,} units: {_shown(value)}")
    return int(milli.to_integral_value(rounding=ROUND_CEILING))


# -------------------------------------------------------------------------------- parsing


def read_queue_config(path: Path) -> QueueConfig:
    path = Path(path)
    return parse_queue_config(read_utf8(path), source=path)  # a bad byte: its line and byte


def parse_queue_config(text: str, source: str | Path = "queues.yaml") -> QueueConfig:
    parser = _Parser(Path(source))
    try:
        documents = list(yaml.safe_load_all(text))
    except RecursionError:  # the YAML composer recurses once per nesting level
        raise InputError(source, "not valid YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(source, f"not valid YAML: {where}{problem}") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(source, f"not valid YAML: a value cannot be read ({exc})") from None
    for number, document in enumerate(documents, start=1):
        parser.document(number, document)
    return parser.finish()


_KNOWN_TOP = {"apiVersion", "kind", "metadata", "spec", "status"}
_KNOWN_METADATA = {
    "name", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
    "creationTimestamp", "finalizers", "managedFields", "ownerReferences",
}
_QUIET = {  # Kueue fields the simulator does not model: accepted without a warning
    "ResourceFlavor": {"nodeTaints", "tolerations", "topologyName"},
    "ClusterQueue": {"namespaceSelector", "admissionChecks", "admissionChecksStrategy", "stopPolicy", "admissionScope", "concurrentAdmissionPolicy"},
    "LocalQueue": {"stopPolicy", "fairSharing"},
    "Cohort": set(),
}


class _Parser:
    def __init__(self, source: Path) -> None:
        self.source = source
        self.number = 0
        self.flavors: dict[str, ResourceFlavor] = {}
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.local_queues: dict[str, LocalQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        self.priority_classes: dict[str, WorkloadPriorityClass] = {}
        self.warnings: list[str] = []
        self.where: dict[tuple[str, str], int] = {}  # (kind, name) -> document
        self.configuration: KueueConfiguration | None = None

    # -- helpers
    def error(self, field_path: str | None, message: str, document: int | None = None) -> InputError:
        return InputError(self.source, message, document=document or self.number, field=field_path)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.source.name}: document {self.number}: {message}")

    def unknown_fields(self, mapping: Mapping, known: set[str], path: str) -> None:
        for key in mapping:
            if key not in known:
                self.warn(f"field '{path}{key}' is not a known field; ignored")

    def mapping(self, value: Any, path: str, *, optional: bool = True) -> Mapping:
        if value is None and optional:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(path, f"must be a mapping, got {_kind_of(value)}")
        return value

    def sequence(self, value: Any, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {_kind_of(value)}")
        return value

    def name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(path, f"must be a non-empty name, got {_shown(value)}")
        problem = control_character_problem(value.strip())
        if problem is not None:
            raise self.error(path, problem)
        return value.strip()

    def choice(self, value: Any, path: str, allowed: tuple[str, ...], default: Any) -> Any:
        if value is None:
            return default
        if value not in allowed:
            raise self.error(path, f"must be one of {', '.join(allowed)}, got {_shown(value)}")
        return value

    def quantity(self, value: Any, path: str) -> int:
        try:
            milli = quantity_to_milli(value)
        except ValueError as exc:
            raise self.error(path, str(exc)) from None
        if milli < 0:
            raise self.error(path, f"must be >= 0, got {_shown(value)}")
        return milli

    def weight(self, spec: Mapping, path: str) -> float:
        fair = self.mapping(spec.get("fairSharing"), path + "fairSharing")
        self.unknown_fields(fair, {"weight"}, path + "fairSharing.")
        if "weight" not in fair:
            return 1.0
        try:
            weight = float(parse_quantity(fair["weight"]))
        except (ValueError, OverflowError):
            raise self.error(path + "fairSharing.weight", f"not a quantity: {_shown(fair['weight'])}") from None
        if not math.isfinite(weight) or weight > MAX_INT32:
            raise self.error(path + "fairSharing.weight", f"must be at most {MAX_INT32:,}, got {_shown(fair['weight'])}")
        if weight < 0:
            raise self.error(path + "fairSharing.weight", f"must be >= 0, got {_shown(fair['weight'])}")
        return weight

    def register(self, kind: str, key: str, table: dict, value: Any) -> None:
        if key in table:
            first = self.where[(kind, key)]
            raise self.error("metadata.name", f"duplicate {kind} {key!r} (first in document {first})")
        table[key] = value
        self.where[(kind, key)] = self.number

    # -- documents
    def document(self, number: int, document: Any) -> None:
        self.number = number
        if document is None:
            return  # an empty document between two '---' is harmless
        if not isinstance(document, Mapping):
            raise self.error(None, f"must be a mapping (a Kubernetes object), got {_kind_of(document)}")
        api_version = document.get("apiVersion")
        kind = document.get("kind")
        if not isinstance(kind, str) or not kind:
            raise self.error("kind", f"missing or not text: {_shown(kind)}")
        if api_version in CONFIG_API_VERSIONS and kind == "Configuration":
            if self.configuration is not None:
                raise self.error("kind", f"a second Configuration (first in document {self.where[('Configuration', '')]})")
            self.where[("Configuration", "")] = number
            self.configuration = parse_configuration(self, api_version, document)
            return
        if api_version not in API_VERSIONS:
            if isinstance(api_version, str) and api_version.startswith(API_GROUP):
                raise self.error("apiVersion", f"unsupported version {_shown(api_version)}; use {' or '.join(API_VERSIONS)}")
            shown = api_version if isinstance(api_version, str) else _shown(api_version)
            self.warn(f"{kind} ({shown[:80]}) is not a Kueue object; skipped")
            return
        handler = {
            "ResourceFlavor": self.resource_flavor,
            "ClusterQueue": self.cluster_queue,
            "LocalQueue": self.local_queue,
            "Cohort": self.cohort,
            "WorkloadPriorityClass": self.priority_class,
        }.get(kind)
        if handler is None:
            self.warn(f"kind {kind} is not modelled by the simulator; skipped")
            return
        metadata = self.mapping(document.get("metadata"), "metadata", optional=False)
        self.unknown_fields(metadata, _KNOWN_METADATA, "metadata.")
        name = self.name(metadata.get("name"), "metadata.name")
        known_top = _KNOWN_TOP | ({"value", "description"} if kind == "WorkloadPriorityClass" else set())
        self.unknown_fields(document, known_top, "")
        handler(name, metadata, document)

    def resource_flavor(self, name: str, metadata: Mapping, document: Mapping) -> None:
        spec = self.mapping(document.get("spec"), "spec")
        self.unknown_fields(spec, {"nodeLabels"} | _QUIET["ResourceFlavor"], "spec.")
        labels = self.mapping(spec.get("nodeLabels"), "spec.nodeLabels")
        pairs = []
        for key, value in labels.items():
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise self.error(f"spec.nodeLabels.{key}", f"must be a text value, got {_kind_of(value)}")
            if key not in NODE_LABEL_ATTRIBUTES:
                self.warn(
                    f"ResourceFlavor {name}: nodeLabel {key!r} is not carried by simulated nodes "
                    f"(known: {', '.join(NODE_LABEL_ATTRIBUTES)}); it is ignored when matching nodes"
                )
            pairs.append((str(key), str(value)))
        self.register("ResourceFlavor", name, self.flavors, ResourceFlavor(name, tuple(sorted(pairs))))

    def resource_groups(self, spec: Mapping, owner: str, allow_limits: bool) -> tuple[ResourceGroup, ...]:
        groups = []
        covered_anywhere: dict[str, int] = {}
        flavor_group: dict[str, int] = {}
        for g, group in enumerate(self.sequence(spec.get("resourceGroups"), "spec.resourceGroups")):
            path = f"spec.resourceGroups[{g}]"
            group = self.mapping(group, path, optional=False)
            self.unknown_fields(group, {"coveredResources", "flavors"}, path + ".")
            covered = tuple(
                self.name(r, f"{path}.coveredResources[{i}]")
                for i, r in enumerate(self.sequence(group.get("coveredResources"), path + ".coveredResources"))
            )
            if not covered:
                raise self.error(path + ".coveredResources", "must list at least one resource")
            for covered_resource in covered:
                if covered_resource in covered_anywhere:
                    raise self.error(path + ".coveredResources", f"{covered_resource!r} is already covered by resourceGroups[{covered_anywhere[covered_resource]}]")
                covered_anywhere[covered_resource] = g
            flavors = []
            for f, flavor in enumerate(self.sequence(group.get("flavors"), path + ".flavors")):
                fpath = f"{path}.flavors[{f}]"
                flavor = self.mapping(flavor, fpath, optional=False)
                self.unknown_fields(flavor, {"name", "resources"}, fpath + ".")
                flavor_name = self.name(flavor.get("name"), fpath + ".name")
                if flavor_name in flavor_group:
                    raise self.error(fpath + ".name", f"flavor {flavor_name!r} is already in resourceGroups[{flavor_group[flavor_name]}]; a flavor belongs to one resource group")
                flavor_group[flavor_name] = g
                quotas = []
                for r, item in enumerate(self.sequence(flavor.get("resources"), fpath + ".resources")):
                    rpath = f"{fpath}.resources[{r}]"
                    resource = self.mapping(item, rpath, optional=False)
                    self.unknown_fields(resource, {"name", "nominalQuota", "borrowingLimit", "lendingLimit"}, rpath + ".")
                    resource_name = self.name(resource.get("name"), rpath + ".name")
                    if resource_name not in covered:
                        raise self.error(rpath + ".name", f"{resource_name!r} is not in coveredResources ({', '.join(covered)})")
                    if "nominalQuota" not in resource:
                        raise self.error(rpath + ".nominalQuota", "missing: every resource needs a nominalQuota")
                    limits = {}
                    for key in ("borrowingLimit", "lendingLimit"):
                        if resource.get(key) is not None:
                            if not allow_limits:
                                raise self.error(f"{rpath}.{key}", f"only allowed when {owner} is in a cohort (has a parent)")
                            limits[key] = self.quantity(resource[key], f"{rpath}.{key}")
                    nominal = self.quantity(resource["nominalQuota"], rpath + ".nominalQuota")
                    if limits.get("lendingLimit") is not None and limits["lendingLimit"] > nominal:
                        raise self.error(rpath + ".lendingLimit", f"must be less than or equal to nominalQuota ({resource['nominalQuota']}), got {resource['lendingLimit']!r}")
                    quotas.append(ResourceQuota(resource_name, nominal, limits.get("borrowingLimit"), limits.get("lendingLimit")))
                listed = [q.resource for q in quotas]
                missing = [r for r in covered if r not in listed]
                if missing or len(set(listed)) != len(listed):
                    raise self.error(fpath + ".resources", f"must list each covered resource once ({', '.join(covered)}); missing or repeated: {', '.join(missing) or 'repeated'}")
                flavors.append(FlavorQuotas(flavor_name, tuple(quotas)))
            groups.append(ResourceGroup(covered, tuple(flavors)))
        return tuple(groups)

    def cluster_queue(self, name: str, metadata: Mapping, document: Mapping) -> None:
        spec = self.mapping(document.get("spec"), "spec")
        known = {"cohort", "cohortName", "queueingStrategy", "resourceGroups", "preemption", "flavorFungibility", "fairSharing"}
        self.unknown_fields(spec, known | _QUIET["ClusterQueue"], "spec.")
        cohort_key = "cohortName" if "cohortName" in spec else "cohort"
        cohort = None
        if spec.get(cohort_key) is not None:
            cohort = self.name(spec[cohort_key], "spec." + cohort_key)
        preemption = self.mapping(spec.get("preemption"), "spec.preemption")
        self.unknown_fields(preemption, {"withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort"}, "spec.preemption.")
        borrow = self.mapping(preemption.get("borrowWithinCohort"), "spec.preemption.borrowWithinCohort")
        self.unknown_fields(borrow, {"policy", "maxPriorityThreshold"}, "spec.preemption.borrowWithinCohort.")
        threshold = borrow.get("maxPriorityThreshold")
        reclaim_policy = preemption.get("reclaimWithinCohort") or "Never"
        if reclaim_policy == "Never" and (borrow.get("policy") or "Never") != "Never":
            raise self.error("spec.preemption.borrowWithinCohort.policy", "must be Never when reclaimWithinCohort is Never")
        if threshold is not None and (not isinstance(threshold, int) or isinstance(threshold, bool) or abs(threshold) > MAX_INT32):
            raise self.error("spec.preemption.borrowWithinCohort.maxPriorityThreshold", f"must be a 32-bit whole number, got {_shown(threshold)}")
        policy = PreemptionPolicy(
            within_cluster_queue=self.choice(preemption.get("withinClusterQueue"), "spec.preemption.withinClusterQueue", WITHIN_CLUSTER_QUEUE, "Never"),
            reclaim_within_cohort=self.choice(preemption.get("reclaimWithinCohort"), "spec.preemption.reclaimWithinCohort", RECLAIM_WITHIN_COHORT, "Never"),
            borrow_within_cohort=self.choice(borrow.get("policy"), "spec.preemption.borrowWithinCohort.policy", BORROW_WITHIN_COHORT, "Never"),
            borrow_max_priority_threshold=threshold,
        )
        fungibility = self.mapping(spec.get("flavorFungibility"), "spec.flavorFungibility")
        self.unknown_fields(fungibility, {"whenCanBorrow", "whenCanPreempt", "preference"}, "spec.flavorFungibility.")
        when_borrow = self.choice(fungibility.get("whenCanBorrow"), "spec.flavorFungibility.whenCanBorrow", FUNGIBILITY_BORROW, "MayStopSearch")
        when_preempt = self.choice(fungibility.get("whenCanPreempt"), "spec.flavorFungibility.whenCanPreempt", FUNGIBILITY_PREEMPT, "TryNextFlavor")
        # v1beta1 spelled the two "try the next flavor" values Borrow / Preempt.
        when_borrow = "TryNextFlavor" if when_borrow == "Borrow" else when_borrow
        when_preempt = "TryNextFlavor" if when_preempt == "Preempt" else when_preempt
        queue = ClusterQueue(
            name=name,
            cohort=cohort,
            queueing_strategy=self.choice(spec.get("queueingStrategy"), "spec.queueingStrategy", QUEUEING_STRATEGIES, "BestEffortFIFO"),
            resource_groups=self.resource_groups(spec, f"ClusterQueue {name}", allow_limits=cohort is not None),
            preemption=policy,
            flavor_fungibility=FlavorFungibility(
                when_borrow,
                when_preempt,
                self.choice(fungibility.get("preference"), "spec.flavorFungibility.preference", FUNGIBILITY_PREFERENCE, None),
            ),
            fair_sharing_weight=self.weight(spec, "spec."),
            stop_policy=self.choice(spec.get("stopPolicy"), "spec.stopPolicy", STOP_POLICIES, "None"),
        )
        self.register("ClusterQueue", name, self.cluster_queues, queue)

    def local_queue(self, name: str, metadata: Mapping, document: Mapping) -> None:
        spec = self.mapping(document.get("spec"), "spec", optional=False)
        self.unknown_fields(spec, {"clusterQueue"} | _QUIET["LocalQueue"], "spec.")
        namespace = metadata.get("namespace")
        namespace = "default" if namespace is None else self.name(namespace, "metadata.namespace")
        queue = LocalQueue(namespace, name, self.name(spec.get("clusterQueue"), "spec.clusterQueue"))
        self.register("LocalQueue", queue.key, self.local_queues, queue)

    def cohort(self, name: str, metadata: Mapping, document: Mapping) -> None:
        spec = self.mapping(document.get("spec"), "spec")
        self.unknown_fields(spec, {"parent", "parentName", "resourceGroups", "fairSharing"}, "spec.")
        parent_key = "parentName" if "parentName" in spec else "parent"
        parent = None if spec.get(parent_key) is None else self.name(spec[parent_key], "spec." + parent_key)
        cohort = Cohort(
            name=name,
            parent=parent,
            resource_groups=self.resource_groups(spec, f"Cohort {name}", allow_limits=parent is not None),
            fair_sharing_weight=self.weight(spec, "spec."),
        )
        self.register("Cohort", name, self.cohorts, cohort)

    def priority_class(self, name: str, metadata: Mapping, document: Mapping) -> None:
        value = document.get("value")
        if not isinstance(value, int) or isinstance(value, bool) or abs(value) > MAX_INT32:
            raise self.error("value", f"must be a 32-bit whole number, got {_shown(value)}")
        description = document.get("description") or ""
        if not isinstance(description, str):
            raise self.error("description", f"must be text, got {_kind_of(description)}")
        self.register("WorkloadPriorityClass", name, self.priority_classes, WorkloadPriorityClass(name, value, str(description)))

    # -- cross references
    def finish(self) -> QueueConfig:
        for name, queue in self.cluster_queues.items():
            document = self.where[("ClusterQueue", name)]
            for g, group in enumerate(queue.resource_groups):
                for f, flavor in enumerate(group.flavors):
                    if flavor.flavor not in self.flavors:
                        raise self.error(
                            f"spec.resourceGroups[{g}].flavors[{f}].name",
                            f"ResourceFlavor {flavor.flavor!r} is not defined in this file",
                            document=document,
                        )
        for key, local_queue in self.local_queues.items():
            if local_queue.cluster_queue not in self.cluster_queues:
                raise self.error(
                    "spec.clusterQueue",
                    f"ClusterQueue {local_queue.cluster_queue!r} is not defined in this file",
                    document=self.where[("LocalQueue", key)],
                )
        names: dict[str, list[str]] = {}
        for local_queue in self.local_queues.values():
            names.setdefault(local_queue.name, []).append(local_queue.namespace)
        for name, namespaces in names.items():
            if len(namespaces) > 1:
                self.warnings.append(
                    f"{self.source.name}: LocalQueue name {name!r} is used in namespaces "
                    f"{', '.join(sorted(namespaces))}; a trace row's bare queue {name!r} means "
                    f"{sorted(namespaces)[0]}/{name} (write namespace/name to choose)"
                )
        return QueueConfig(
            flavors=_frozen(self.flavors),
            cluster_queues=_frozen(self.cluster_queues),
            local_queues=_frozen(self.local_queues),
            cohorts=_frozen(self.cohorts),
            priority_classes=_frozen(self.priority_classes),
            warnings=tuple(self.warnings),
            configuration=self.configuration or KueueConfiguration(),
        )


def _kind_of(value: Any) -> str:
    if value is None:
        return "nothing"
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: f"text {_shown(value)}"}
    return names.get(type(value), f"{type(value).__name__} {_shown(value)}")


def _shown(value: Any) -> str:
    """repr() cut short: an error stays one short line even for a YAML alias bomb, whose
    full repr would be billions of items (aliases are shared, not copied, when loaded)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 2, 4, 4, 80, 80
    return short.repr(value)
