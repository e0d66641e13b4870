"""Fluent builders for the scheduler tests, in the style of Kueue's test wrappers
(pkg/util/testing/v1beta2/wrappers.go): ``make_<thing>(name)``, chained setters, ``.obj()``.

    make_workload("w1").pods(2).gpus(4).priority(5).queue("team-a").at(10).obj()   -> Workload
    make_node("n1").gpus(8).model("A100").obj()                                    -> Node
    make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8, borrowing_limit=4).obj()
    make_cohort("org").parent("root").quota("a100", gpus=12).obj()
    make_flavor("a100").gpu_model("A100").obj()
    make_local_queue("team-a").cluster_queue("team-a").obj()
    make_configuration().fair_sharing().obj()

Kueue objects build to their manifest (the mapping a user writes in YAML, as Kueue's wrappers
build API objects); `queue_config(*objects)` reads them through the real manifest reader, so
a test cannot build a configuration Kueue's validation would refuse. Trace rows and nodes
build to the model values the replay reads (`scheduler.model`); `trace_rows` and
`cluster_rows` turn them into the CSV rows of a trace and a cluster file.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from scheduler.admission import QueueConfig, parse_queue_config
from scheduler.model.cluster import Node
from scheduler.model.workload import Workload

API_VERSION = "kueue.x-k8s.io/v1beta2"
CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
RESOURCE_NAMES = {"gpus": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}

# ----------------------------------------------------------------- trace rows and nodes


class WorkloadBuilder:
    """One pod of one GPU, submitted at 0, running an hour; all-or-nothing (min_count = pods)."""

    def __init__(self, name: str) -> None:
        self._workload = Workload(workload_id=name, submit_time_s=0.0, duration_s=3600.0, pods=1, min_count=1,
                                  gpus_per_pod=1.0, tenant="t", source_row=2)
        self._min_count: int | None = None

    def _set(self, **fields: Any) -> WorkloadBuilder:
        self._workload = replace(self._workload, **fields)
        return self

    def pods(self, pods: int) -> WorkloadBuilder:
        return self._set(pods=pods)

    def min_count(self, count: int) -> WorkloadBuilder:
        self._min_count = count
        return self

    def gpus(self, per_pod: float) -> WorkloadBuilder:
        """GPUs of each pod."""
        return self._set(gpus_per_pod=float(per_pod))

    def cpu(self, milli_per_pod: int) -> WorkloadBuilder:
        return self._set(cpu_milli_per_pod=milli_per_pod)

    def model(self, *models: str) -> WorkloadBuilder:
        """The GPU models the pods accept (several: alternatives)."""
        return self._set(gpu_models=models)

    def priority(self, priority: int) -> WorkloadBuilder:
        return self._set(priority=priority)

    def queue(self, local_queue: str) -> WorkloadBuilder:
        return self._set(queue=local_queue)

    def tenant(self, tenant: str) -> WorkloadBuilder:
        return self._set(tenant=tenant)

    def at(self, submit_time_s: float) -> WorkloadBuilder:
        return self._set(submit_time_s=float(submit_time_s))

    def runs_for(self, duration_s: float) -> WorkloadBuilder:
        return self._set(duration_s=float(duration_s))

    def topology(self, *, required: str | None = None, preferred: str | None = None) -> WorkloadBuilder:
        """The trace's ``topology_required`` / ``topology_preferred`` (a level, or a node
        label key under Kueue TAS)."""
        return self._set(topology_required=required, topology_preferred=preferred)

    def obj(self) -> Workload:
        min_count = self._workload.pods if self._min_count is None else self._min_count
        return replace(self._workload, min_count=min_count)


def make_workload(name: str) -> WorkloadBuilder:
    return WorkloadBuilder(name)


class NodeBuilder:
    """Eight A100 GPUs in zone z1, block b1, rack r1."""

    def __init__(self, name: str) -> None:
        self._node = Node(name=name, gpu_model="A100", gpus=8, zone="z1", block="b1", rack="r1")

    def gpus(self, gpus: int) -> NodeBuilder:
        self._node = replace(self._node, gpus=gpus)
        return self

    def model(self, model: str) -> NodeBuilder:
        self._node = replace(self._node, gpu_model=model)
        return self

    def rack(self, rack: str) -> NodeBuilder:
        self._node = replace(self._node, rack=rack)
        return self

    def zone(self, zone: str) -> NodeBuilder:
        self._node = replace(self._node, zone=zone)
        return self

    def block(self, block: str) -> NodeBuilder:
        self._node = replace(self._node, block=block)
        return self

    def labels(self, labels: dict[str, str]) -> NodeBuilder:
        """Other Kubernetes labels (the cluster file's ``labels`` column)."""
        pairs = dict(self._node.labels)
        pairs.update(labels)
        self._node = replace(self._node, labels=tuple(sorted(pairs.items())))
        return self

    def obj(self) -> Node:
        return self._node


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def trace_rows(workloads: list[Workload]) -> list[dict[str, Any]]:
    """The rows of a trace CSV (`tests.scheduler.scenario.TRACE_COLUMNS`) for these workloads."""
    return [{
        "workload_id": w.workload_id, "submit_time": w.submit_time_s, "duration_s": w.duration_s, "pods": w.pods,
        "min_count": w.min_count, "gpus_per_pod": w.gpus_per_pod, "gpu_model": w.gpu_model_label or "",
        "tenant": w.tenant, "queue": w.queue or "", "priority": w.priority,
        "checkpoint_interval_s": "" if w.checkpoint_interval_s is None else w.checkpoint_interval_s,
        "topology_required": w.topology_required or "", "topology_preferred": w.topology_preferred or "",
        "parent_group": w.parent_group or "", "parent_min_groups": w.parent_min_groups or "",
        "parent_topology_required": w.parent_topology_required or "",
    } for w in workloads]


def cluster_rows(nodes: list[Node]) -> list[dict[str, Any]]:
    """The rows of a cluster CSV (`tests.scheduler.scenario.NODE_COLUMNS`) for these nodes."""
    return [{"node": n.name, "gpu_model": n.gpu_model, "gpus": n.gpus, "cpu_milli": n.cpu_milli,
             "memory_mib": n.memory_mib, "zone": n.zone or "", "block": n.block or "", "rack": n.rack or "",
             "pricing_category": n.pricing_category, "labels": ";".join(f"{k}={v}" for k, v in n.labels)}
            for n in nodes]


# -------------------------------------------------------------------------- Kueue objects


def _resources(quantities: dict[str, float | str]) -> list[dict[str, Any]]:
    return [{"name": RESOURCE_NAMES.get(key, key), "nominalQuota": value} for key, value in quantities.items()]


class _Quotas:
    """Resource groups built flavor by flavor: flavors covering the same resources share a group."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    def add(self, flavor: str, borrowing_limit: float | None, lending_limit: float | None, quantities: dict[str, float | str]) -> None:
        resources = _resources(quantities or {"gpus": 0})
        gpu = next((r for r in resources if r["name"] == RESOURCE_NAMES["gpus"]), resources[0])
        if borrowing_limit is not None:
            gpu["borrowingLimit"] = borrowing_limit
        if lending_limit is not None:
            gpu["lendingLimit"] = lending_limit
        covered = tuple(r["name"] for r in resources)
        self.groups.setdefault(covered, []).append({"name": flavor, "resources": resources})

    def manifest(self) -> list[dict[str, Any]]:
        return [{"coveredResources": list(covered), "flavors": flavors} for covered, flavors in self.groups.items()]


class ClusterQueueBuilder:
    def __init__(self, name: str) -> None:
        self.name = name
        self._spec: dict[str, Any] = {"namespaceSelector": {}}  # every namespace (null would match none)
        self._quotas = _Quotas()

    def cohort(self, cohort: str) -> ClusterQueueBuilder:
        self._spec["cohortName"] = cohort
        return self

    def quota(self, flavor: str, *, borrowing_limit: float | None = None, lending_limit: float | None = None,
              **quantities: float | str) -> ClusterQueueBuilder:
        """A flavor's nominal quota: ``gpus=8`` (nvidia.com/gpu), ``cpu="4"``, ``memory="64Gi"``;
        the limits apply to its GPUs (to its first resource when it has none)."""
        self._quotas.add(flavor, borrowing_limit, lending_limit, quantities)
        return self

    def strategy(self, strategy: str) -> ClusterQueueBuilder:
        self._spec["queueingStrategy"] = str(strategy)
        return self

    def preemption(self, *, within: str | None = None, reclaim: str | None = None, borrow: str | None = None,
                   max_priority_threshold: int | None = None) -> ClusterQueueBuilder:
        """withinClusterQueue, reclaimWithinCohort, borrowWithinCohort.policy (and its threshold)."""
        preemption: dict[str, Any] = {}
        if within is not None:
            preemption["withinClusterQueue"] = str(within)
        if reclaim is not None:
            preemption["reclaimWithinCohort"] = str(reclaim)
        if borrow is not None or max_priority_threshold is not None:
            preemption["borrowWithinCohort"] = {"policy": str(borrow or "Never")}
            if max_priority_threshold is not None:
                preemption["borrowWithinCohort"]["maxPriorityThreshold"] = max_priority_threshold
        self._spec["preemption"] = preemption
        return self

    def fungibility(self, *, when_can_borrow: str | None = None, when_can_preempt: str | None = None,
                    preference: str | None = None) -> ClusterQueueBuilder:
        fields = {"whenCanBorrow": when_can_borrow, "whenCanPreempt": when_can_preempt, "preference": preference}
        self._spec["flavorFungibility"] = {key: str(value) for key, value in fields.items() if value is not None}
        return self

    def weight(self, weight: float) -> ClusterQueueBuilder:
        self._spec["fairSharing"] = {"weight": weight}
        return self

    def stop_policy(self, policy: str) -> ClusterQueueBuilder:
        self._spec["stopPolicy"] = str(policy)
        return self

    def admission_mode(self, mode: str = "UsageBasedAdmissionFairSharing") -> ClusterQueueBuilder:
        """spec.admissionScope.admissionMode (admission fair sharing)."""
        self._spec["admissionScope"] = {"admissionMode": mode}
        return self

    def obj(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": self.name},
                "spec": {**self._spec, "resourceGroups": self._quotas.manifest()}}


def make_cluster_queue(name: str) -> ClusterQueueBuilder:
    return ClusterQueueBuilder(name)


class CohortBuilder:
    def __init__(self, name: str) -> None:
        self.name = name
        self._spec: dict[str, Any] = {"namespaceSelector": {}}  # every namespace (null would match none)
        self._quotas = _Quotas()

    def parent(self, parent: str) -> CohortBuilder:
        self._spec["parentName"] = parent
        return self

    def quota(self, flavor: str, *, borrowing_limit: float | None = None, lending_limit: float | None = None,
              **quantities: float | str) -> CohortBuilder:
        self._quotas.add(flavor, borrowing_limit, lending_limit, quantities)
        return self

    def weight(self, weight: float) -> CohortBuilder:
        self._spec["fairSharing"] = {"weight": weight}
        return self

    def obj(self) -> dict[str, Any]:
        spec = dict(self._spec)
        if self._quotas.groups:
            spec["resourceGroups"] = self._quotas.manifest()
        return {"apiVersion": API_VERSION, "kind": "Cohort", "metadata": {"name": self.name}, "spec": spec}


def make_cohort(name: str) -> CohortBuilder:
    return CohortBuilder(name)


class FlavorBuilder:
    def __init__(self, name: str) -> None:
        self.name = name
        self._labels: dict[str, str] = {}
        self._spec: dict[str, Any] = {}

    def gpu_model(self, model: str) -> FlavorBuilder:
        """Nodes of this GPU model (the ``nvidia.com/gpu.product`` nodeLabel)."""
        self._labels["nvidia.com/gpu.product"] = model
        return self

    def label(self, key: str, value: str) -> FlavorBuilder:
        self._labels[key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> FlavorBuilder:
        self._spec.setdefault("nodeTaints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def toleration(self, key: str, value: str = "", effect: str = "", operator: str = "Equal") -> FlavorBuilder:
        toleration = {"key": key, "operator": operator, "effect": effect}
        if value:
            toleration["value"] = value
        self._spec.setdefault("tolerations", []).append(toleration)
        return self

    def topology(self, name: str) -> FlavorBuilder:
        self._spec["topologyName"] = name
        return self

    def obj(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": self.name},
                "spec": {"nodeLabels": dict(self._labels), **self._spec}}


def make_flavor(name: str) -> FlavorBuilder:
    return FlavorBuilder(name)


class TopologyBuilder:
    def __init__(self, name: str) -> None:
        self.name = name
        self._levels: list[str] = []

    def levels(self, *node_labels: str) -> TopologyBuilder:
        """From the widest level to the narrowest (kubernetes.io/hostname last, if at all)."""
        self._levels = list(node_labels)
        return self

    def obj(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": "Topology", "metadata": {"name": self.name},
                "spec": {"levels": [{"nodeLabel": label} for label in self._levels]}}


def make_topology(name: str) -> TopologyBuilder:
    return TopologyBuilder(name)


class LocalQueueBuilder:
    """In the namespace of its own name, pointing at the ClusterQueue of its own name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._namespace = name
        self._cluster_queue = name
        self._weight: float | str | None = None

    def namespace(self, namespace: str) -> LocalQueueBuilder:
        self._namespace = namespace
        return self

    def cluster_queue(self, cluster_queue: str) -> LocalQueueBuilder:
        self._cluster_queue = cluster_queue
        return self

    def weight(self, weight: float | str) -> LocalQueueBuilder:
        """spec.fairSharing.weight (admission fair sharing)."""
        self._weight = weight
        return self

    def obj(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"clusterQueue": self._cluster_queue}
        if self._weight is not None:
            spec["fairSharing"] = {"weight": self._weight}
        return {"apiVersion": API_VERSION, "kind": "LocalQueue", "metadata": {"name": self.name, "namespace": self._namespace},
                "spec": spec}


def make_local_queue(name: str) -> LocalQueueBuilder:
    return LocalQueueBuilder(name)


class ConfigurationBuilder:
    """Kueue's own Configuration (v1beta2; waitForPodsReady off unless asked for)."""

    def __init__(self) -> None:
        self._document: dict[str, Any] = {"featureGates": {"DisableWaitForPodsReady": True}}

    def fair_sharing(self, *strategies: str) -> ConfigurationBuilder:
        self._document["fairSharing"] = {"preemptionStrategies": [str(s) for s in strategies]} if strategies else {}
        return self

    def wait_for_pods_ready(self, *, timeout: str = "5m", block_admission: bool = False, backoff_limit: int | None = None,
                            backoff_base_s: int = 60, recovery_timeout: str | None = None) -> ConfigurationBuilder:
        strategy: dict[str, Any] = {"backoffBaseSeconds": backoff_base_s}
        if backoff_limit is not None:
            strategy["backoffLimitCount"] = backoff_limit
        self._document["waitForPodsReady"] = {"timeout": timeout, "blockAdmission": block_admission,
                                              "requeuingStrategy": strategy}
        if recovery_timeout is not None:
            self._document["waitForPodsReady"]["recoveryTimeout"] = recovery_timeout
        self._document["featureGates"].pop("DisableWaitForPodsReady", None)
        return self

    def admission_fair_sharing(self, *, half_life: str = "10m", sampling_interval: str | None = "5m",
                               resource_weights: dict[str, float] | None = None) -> ConfigurationBuilder:
        """admissionFairSharing: usageHalfLifeTime, usageSamplingInterval, resourceWeights."""
        block: dict[str, Any] = {"usageHalfLifeTime": half_life}
        if sampling_interval is not None:
            block["usageSamplingInterval"] = sampling_interval
        if resource_weights is not None:
            block["resourceWeights"] = resource_weights
        self._document["admissionFairSharing"] = block
        return self

    def feature_gate(self, name: str, enabled: bool) -> ConfigurationBuilder:
        self._document["featureGates"][name] = enabled
        return self

    def obj(self) -> dict[str, Any]:
        return {"apiVersion": CONFIG_API_VERSION, "kind": "Configuration", **self._document}


def make_configuration() -> ConfigurationBuilder:
    return ConfigurationBuilder()


def manifests_yaml(*objects: dict[str, Any]) -> str:
    """A queues file: the objects as one YAML stream."""
    return yaml.safe_dump_all(objects, sort_keys=False)


def queue_config(*objects: dict[str, Any]) -> QueueConfig:
    """The objects read by the real manifest reader (Kueue's validation included)."""
    return parse_queue_config(manifests_yaml(*objects), source="queues.yaml")
