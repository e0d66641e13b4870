"""Kueue objects as a cluster holds them → the queues manifests the replay reads.

``kubectl get clusterqueues,localqueues,resourceflavors,cohorts,workloadpriorityclasses -A
-o yaml`` writes one ``kind: List`` with server-side fields (``status``, ``managedFields``,
``resourceVersion``, ...). The importer keeps each object's ``apiVersion``, ``kind``, name
(and a LocalQueue's namespace) and ``spec`` (a WorkloadPriorityClass's ``value`` and
``description``), one YAML document each, and:

- rewrites a ResourceFlavor's ``nodeLabels`` into the labels the replay's nodes carry: a GPU
  product label becomes ``nvidia.com/gpu.product``, a zone label
  ``topology.kubernetes.io/zone``, a block or rack label ``gpu-finops/block`` /
  ``gpu-finops/rack``; a label the replay cannot select on (a capacity type, an instance
  type, a node pool) is dropped with a comment in queues.yaml and a warning, and so are the
  flavor's nodeTaints then (the replay puts them on every node the remaining labels select).
  Given the nodes, it checks that each flavor selects the same nodes before and after;
- turns a Kueue 0.9-0.10 ``v1alpha1`` Cohort into ``v1beta1`` (same fields);
- keeps a ``config.kueue.x-k8s.io`` Configuration, also from inside the ``kueue-manager-config``
  ConfigMap, for waitForPodsReady and fair sharing;
- lists every other object (Kueue Workloads, AdmissionChecks, Topologies, ...) as a rejected
  row with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu_finops.importers.documents import SourceObject, read_objects
from gpu_finops.importers.kube import SIM_LABEL_OF_LEVEL
from gpu_finops.importers.nodes import node_attribute
from gpu_finops.importers.records import NodeRow, Rejected
from scheduler.admission.manifests.quantities import MAX_INT32, shown
from scheduler.errors import InputError
from scheduler.trace.yaml_input import load_yaml_documents

GROUP = "kueue.x-k8s.io"
KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass")
CONFIG_GROUP = "config.kueue.x-k8s.io"


@dataclass
class KueueImport:
    documents: list[tuple[list[str], dict[str, Any]]] = field(default_factory=list)  # (comments, object)
    priority_classes: dict[str, int] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str = ""

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for _, document in self.documents:
            found[document["kind"]] = found.get(document["kind"], 0) + 1
        return found


def import_kueue(path: Path, nodes: list[NodeRow] | None,
                 level_of: Callable[[str], str | None]) -> KueueImport:
    result = KueueImport(source=Path(path).name)
    for obj in read_objects(path):
        _one(obj, nodes, level_of, result)
    return result


def _one(obj: SourceObject, nodes: list[NodeRow] | None, level_of: Callable[[str], str | None],
         result: KueueImport) -> None:
    def rejected(field_path: str, reason: str) -> None:
        result.rejected.append(Rejected(obj.source, obj.row, obj.kind or type(obj.value).__name__,
                                        obj.namespace, obj.name, field_path, reason))

    if not isinstance(obj.value, Mapping):
        rejected("", "Invalid: not a Kubernetes object (a mapping)")
        return
    api_version = str(obj.value.get("apiVersion") or "")
    group, _, version = api_version.partition("/")
    if obj.kind == "ConfigMap":
        configuration = _configuration_in_config_map(obj.value)
        if configuration is None:
            rejected("data", "NotKueue: a ConfigMap without a config.kueue.x-k8s.io Configuration")
        else:
            result.documents.append(([f"from ConfigMap {obj.namespace}/{obj.name}"], configuration))
        return
    if group == CONFIG_GROUP and obj.kind == "Configuration":
        result.documents.append(([], dict(obj.value)))
        return
    if group != GROUP:
        rejected("apiVersion", f"NotKueue: {obj.kind or 'object'} of {api_version or 'no apiVersion'}")
        return
    if obj.kind not in KINDS:
        rejected("kind", f"NotModelled: the replay does not read Kueue {obj.kind or 'objects without a kind'}")
        return
    if not obj.name:
        rejected("metadata.name", "Invalid: a Kueue object without a name")
        return
    comments: list[str] = []
    if obj.kind == "Cohort" and version == "v1alpha1":
        api_version = f"{GROUP}/v1beta1"  # Kueue 0.11 moved Cohort to v1beta1 unchanged
        comments.append("converted from kueue.x-k8s.io/v1alpha1 (same fields)")
    metadata: dict[str, Any] = {"name": obj.name}
    if obj.kind == "LocalQueue":
        metadata["namespace"] = obj.namespace or "default"
    document: dict[str, Any] = {"apiVersion": api_version, "kind": obj.kind, "metadata": metadata}
    if obj.kind == "WorkloadPriorityClass":
        value = obj.value.get("value")
        if not isinstance(value, int) or isinstance(value, bool) or not -MAX_INT32 - 1 <= value <= MAX_INT32:
            rejected("value", f"Invalid: a WorkloadPriorityClass value must be a 32-bit whole number, got {shown(value)}")
            return
        document["value"] = value
        if obj.value.get("description"):
            document["description"] = str(obj.value["description"])
        result.priority_classes[obj.name] = value
    spec = obj.value.get("spec")
    if isinstance(spec, Mapping):
        document["spec"] = dict(spec)
        if obj.kind == "ResourceFlavor":
            comments += _translate_flavor(obj.name, document["spec"], nodes, level_of, result)
    result.documents.append((comments, document))


def _translate_flavor(name: str, spec: dict[str, Any], nodes: list[NodeRow] | None,
                      level_of: Callable[[str], str | None], result: KueueImport) -> list[str]:
    """Rewrite nodeLabels into the replay's node labels; say what was dropped or changed."""
    labels = spec.get("nodeLabels")
    if not isinstance(labels, Mapping) or not labels:
        return []
    translated: dict[str, str] = {}
    levels: dict[str, str] = {}
    dropped: list[str] = []
    for key, value in labels.items():
        level = level_of(str(key))
        if level is None:
            dropped.append(f"{key}={value}")
            continue
        translated[SIM_LABEL_OF_LEVEL[level]] = str(value)
        levels[level] = str(value)
    spec["nodeLabels"] = translated
    if not translated:
        del spec["nodeLabels"]
    comments = []
    if dropped:
        text = (f"ResourceFlavor {name}: nodeLabels {', '.join(dropped)} dropped: the replay's nodes carry "
                "only GPU model, zone, block, rack and host labels")
        comments.append(text)
        result.warnings.append(text)
        if spec.pop("nodeTaints", None):
            # The replay puts a flavor's nodeTaints on every node its nodeLabels select: with
            # labels dropped that would be more nodes than the flavor's own.
            text = f"ResourceFlavor {name}: nodeTaints dropped with those labels (they would taint other nodes)"
            comments.append(text)
            result.warnings.append(text)
    if nodes is not None:
        before = {n.node for n in nodes if all(n.labels.get(str(k)) == str(v) for k, v in labels.items())}
        after = {n.node for n in nodes if all(node_attribute(n, level) == v for level, v in levels.items())}
        if before != after:
            text = (f"ResourceFlavor {name} selects {len(before)} node(s) of the dump but {len(after)} in the "
                    "replay: its quota may land on other nodes")
            comments.append(text)
            result.warnings.append(text)
    return comments


def _configuration_in_config_map(config_map: Mapping[str, Any]) -> dict[str, Any] | None:
    data = config_map.get("data")
    if not isinstance(data, Mapping):
        return None
    for text in data.values():
        try:
            documents = load_yaml_documents(str(text), "ConfigMap")  # aliases bounded here too
        except InputError:
            continue
        parsed = documents[0] if len(documents) == 1 else None
        if (isinstance(parsed, Mapping) and parsed.get("kind") == "Configuration"
                and str(parsed.get("apiVersion") or "").startswith(CONFIG_GROUP)):
            return dict(parsed)
    return None


def render_queues(kueue: KueueImport) -> str:
    """queues.yaml: one document per object, comments saying what the import changed."""
    parts = []
    for comments, document in kueue.documents:
        text = "".join(f"# {line}\n" for line in comments)
        text += yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=True)
        parts.append(text)
    return f"# Kueue objects imported by gpu-finops from {kueue.source}\n" + "---\n".join(parts)
