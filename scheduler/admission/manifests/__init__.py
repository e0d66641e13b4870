"""Kueue manifests (YAML, as users ``kubectl apply`` them) read into frozen values.

Contract of `read_queue_config(path)` / `parse_queue_config(text, source)`:

- The file is a multi-document YAML stream, read with `scheduler.trace.yaml_input.load_yaml_documents`
  (safe tags, aliases bounded). Documents of
  ``apiVersion: kueue.x-k8s.io/v1beta1`` or ``v1beta2`` and kind ResourceFlavor,
  ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass or Topology are read; other kinds
  (Namespace, AdmissionCheck, ...) and empty documents are skipped with a warning.
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
  arithmetic is exact. Numbers are bounded before any arithmetic (quantities at most
  `quantities.MAX_QUANTITY_MILLI`, priorities and thresholds 32-bit integers, as in
  Kubernetes), and names holding a control character are refused.
  (`scheduler.admission.admits_nothing` warns when a configuration admits nothing.)

One ``config.kueue.x-k8s.io`` ``Configuration`` document may sit in the same stream: its
waitForPodsReady and fairSharing settings (`configuration`) become `QueueConfig.configuration`.

The modules, by concern: `fields` (reading a field, errors with their path), `quantities`,
`kinds` (one reader per Kueue kind), `resource_groups` (quotas and the webhook's checks on
them), `configuration` (Kueue's Configuration), `validation` (cross-references). The values
they produce are in `scheduler.admission.objects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from scheduler.admission.manifests.configuration import (
    CONFIG_API_VERSIONS,
    NO_CONFIGURATION,
    read_configuration,
)
from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.manifests.kinds import (
    read_cluster_queue,
    read_cohort,
    read_local_queue,
    read_priority_class,
    read_resource_flavor,
    read_topology,
)
from scheduler.admission.manifests.quantities import kind_of, shown
from scheduler.admission.manifests.validation import check_references
from scheduler.admission.objects import (
    ClusterQueue,
    Cohort,
    KueueConfiguration,
    LocalQueue,
    QueueConfig,
    ResourceFlavor,
    Topology,
    WorkloadPriorityClass,
    frozen_mapping,
)
from scheduler.trace.io import read_utf8
from scheduler.trace.yaml_input import load_yaml_documents

__all__ = ["API_GROUP", "API_VERSIONS", "QueueConfig", "parse_queue_config", "read_queue_config"]

API_GROUP = "kueue.x-k8s.io"
API_VERSIONS = (f"{API_GROUP}/v1beta1", f"{API_GROUP}/v1beta2")

_KNOWN_TOP = {"apiVersion", "kind", "metadata", "spec", "status"}
_KNOWN_METADATA = {
    "name", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
    "creationTimestamp", "finalizers", "managedFields", "ownerReferences",
}


def read_queue_config(path: Path) -> QueueConfig:
    path = Path(path)
    return parse_queue_config(read_utf8(path), source=path)  # a bad byte: its line and byte


def parse_queue_config(text: str, source: str | Path = "queues.yaml") -> QueueConfig:
    stream = _Stream(FieldReader(Path(source)))
    documents = load_yaml_documents(text, source)  # bounded aliases, one-line errors
    for number, document in enumerate(documents, start=1):
        stream.document(number, document)
    return stream.finish()


class _Stream:
    """The objects read so far, by kind, and where each was defined."""

    def __init__(self, reader: FieldReader) -> None:
        self.reader = reader
        self.flavors: dict[str, ResourceFlavor] = {}
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.local_queues: dict[str, LocalQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        self.priority_classes: dict[str, WorkloadPriorityClass] = {}
        self.topologies: dict[str, Topology] = {}
        self.where: dict[tuple[str, str], int] = {}  # (kind, name) -> document
        self.configuration: KueueConfiguration | None = None

    def register(self, kind: str, key: str, table: dict, value: Any) -> None:
        if key in table:
            first = self.where[(kind, key)]
            raise self.reader.error("metadata.name", f"duplicate {kind} {key!r} (first in document {first})")
        table[key] = value
        self.where[(kind, key)] = self.reader.number

    def document(self, number: int, document: Any) -> None:
        reader = self.reader
        reader.number = number
        if document is None:
            return  # an empty document between two '---' is harmless
        if not isinstance(document, Mapping):
            raise reader.error(None, f"must be a mapping (a Kubernetes object), got {kind_of(document)}")
        api_version = document.get("apiVersion")
        kind = document.get("kind")
        if not isinstance(kind, str) or not kind:
            raise reader.error("kind", f"missing or not text: {shown(kind)}")
        if api_version in CONFIG_API_VERSIONS and kind == "Configuration":
            if self.configuration is not None:
                raise reader.error("kind", f"a second Configuration (first in document {self.where[('Configuration', '')]})")
            self.where[("Configuration", "")] = number
            self.configuration = read_configuration(reader, api_version, document)
            return
        if api_version not in API_VERSIONS:
            if isinstance(api_version, str) and api_version.startswith(API_GROUP):
                raise reader.error("apiVersion", f"unsupported version {shown(api_version)}; use {' or '.join(API_VERSIONS)}")
            described = api_version if isinstance(api_version, str) else shown(api_version)
            reader.warn(f"{kind} ({described[:80]}) is not a Kueue object; skipped")
            return
        if kind not in ("ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass", "Topology"):
            reader.warn(f"kind {kind} is not modelled by the simulator; skipped")
            return
        metadata = reader.mapping(document.get("metadata"), "metadata", optional=False)
        reader.unknown_fields(metadata, _KNOWN_METADATA, "metadata.")
        name = reader.name(metadata.get("name"), "metadata.name")
        reader.unknown_fields(document, _KNOWN_TOP | ({"value", "description"} if kind == "WorkloadPriorityClass" else set()), "")
        if kind == "ResourceFlavor":
            self.register(kind, name, self.flavors, read_resource_flavor(reader, name, document))
        elif kind == "ClusterQueue":
            self.register(kind, name, self.cluster_queues, read_cluster_queue(reader, name, document))
        elif kind == "LocalQueue":
            local_queue = read_local_queue(reader, name, metadata, document)
            self.register(kind, local_queue.key, self.local_queues, local_queue)
        elif kind == "Cohort":
            self.register(kind, name, self.cohorts, read_cohort(reader, name, document))
        elif kind == "Topology":
            self.register(kind, name, self.topologies, read_topology(reader, name, document))
        else:
            self.register(kind, name, self.priority_classes, read_priority_class(reader, name, document))

    def _drop_missing_topologies(self) -> None:
        """A flavor whose topologyName names no Topology of the file is read without TAS,
        with a warning (an import of a cluster's flavors without its Topologies still loads;
        Kueue would hold the flavor's ClusterQueues inactive until the Topology exists)."""
        for name, flavor in self.flavors.items():
            if flavor.topology_name is not None and flavor.topology_name not in self.topologies:
                self.reader.number = self.where[("ResourceFlavor", name)]
                self.reader.warn(f"ResourceFlavor {name}: Topology {flavor.topology_name!r} is not defined in this file; "
                                 "its workloads are admitted without topology-aware scheduling")
                self.flavors[name] = replace(flavor, topology_name=None)

    def finish(self) -> QueueConfig:
        check_references(self.reader, self.where, self.flavors, self.cluster_queues, self.local_queues)
        self._drop_missing_topologies()
        return QueueConfig(
            flavors=frozen_mapping(self.flavors),
            cluster_queues=frozen_mapping(self.cluster_queues),
            local_queues=frozen_mapping(self.local_queues),
            cohorts=frozen_mapping(self.cohorts),
            priority_classes=frozen_mapping(self.priority_classes),
            warnings=(*self.reader.warnings, *self.reader.unmodelled_warnings()),
            configuration=self.configuration or NO_CONFIGURATION,
            topologies=frozen_mapping(self.topologies),
        )
