"""The search space of ``advise quotas`` over a Kueue manifest file, and one point's manifests.

Parameters (Optuna distributions, the same set for every trial so a multivariate sampler can
model them together):

- ``total:<flavor>`` (0 .. the flavor's GPUs) and ``share:<flavor>:<cq>`` (0 .. 1): the nominal
  GPU quotas of the flavor's ClusterQueues are ``total`` apportioned by the shares (largest
  remainder, ties to the earlier queue), so they are whole GPUs that sum to at most the
  flavor's GPUs, and any split of the simplex, one queue holding everything included, can be
  reached. A flavor with one ClusterQueue has ``total`` only.
- ``borrow:<flavor>:<cq>`` / ``lend:<flavor>:<cq>``: the GPU borrowingLimit / lendingLimit
  within the objectives' bounds (ClusterQueues in a cohort only, as Kueue's webhook allows;
  a lending limit above the nominal quota is cut to it).
- ``reclaim:<cq>`` / ``within:<cq>``: ``spec.preemption`` policies; ``fairshare:<cq>``:
  ``spec.fairSharing.weight``.

A ClusterQueue's CPU and memory quotas in a flavor follow its GPUs: they become the GPUs times
the flavor's CPU and memory per GPU on its nodes (borrowing and lending limits too, when they
are searched), so a new GPU quota is not cut short by a CPU quota written for the old one.
Everything else in the file (Configuration, flavors, cohorts, LocalQueues, comments aside) is
written back as it was read.
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu_finops.advise.objectives import Objectives
from scheduler.admission.manifests import read_queue_config
from scheduler.admission.manifests.quantities import in_form_of, quantity_to_milli
from scheduler.admission.objects import GPU_RESOURCE, QueueConfig, flavor_matches
from scheduler.errors import InputError
from scheduler.model.cluster import Cluster
from scheduler.trace.io import read_utf8
from scheduler.trace.yaml_input import load_yaml_documents

MILLI = 1000


@dataclass(frozen=True)
class FlavorCapacity:
    name: str
    gpus: int
    cpu_milli_per_gpu: float  # 0: the nodes do not model CPU
    memory_mib_per_gpu: float
    cluster_queues: tuple[str, ...]  # the ClusterQueues with a GPU quota in this flavor
    gpu_models: tuple[str, ...] = ()  # of the nodes it selects


@dataclass(frozen=True)
class Point:
    """One setting of every searched value; None keeps what the current manifests say."""

    nominal: dict[tuple[str, str], int] = field(default_factory=dict)  # (cq, flavor) -> GPUs
    borrowing: dict[tuple[str, str], int] = field(default_factory=dict)
    lending: dict[tuple[str, str], int] = field(default_factory=dict)
    reclaim: dict[str, str] = field(default_factory=dict)
    within: dict[str, str] = field(default_factory=dict)
    fair_sharing_weight: dict[str, float] = field(default_factory=dict)

    def columns(self) -> dict[str, Any]:
        """The point as flat columns for trials.csv and pareto.csv."""
        values: dict[str, Any] = {}
        for label, table in (("nominal", self.nominal), ("borrowing", self.borrowing), ("lending", self.lending)):
            for (cq, flavor), gpus in sorted(table.items()):
                values[f"{label}:{cq}:{flavor}"] = gpus
        for label, by_queue in (("reclaim", self.reclaim), ("within", self.within),
                                ("fairshare", self.fair_sharing_weight)):
            for cq, value in sorted(by_queue.items()):
                values[f"{label}:{cq}"] = value
        return values


class SearchSpace:
    def __init__(self, queues: Path, cluster: Cluster, objectives: Objectives) -> None:
        self.queues_path = Path(queues)
        self.config: QueueConfig = read_queue_config(self.queues_path)
        self.documents: list[Any] = load_yaml_documents(read_utf8(self.queues_path), self.queues_path)
        self.objectives = objectives
        for name in objectives.per_queue:
            if name not in self.config.cluster_queues:
                raise InputError(objectives.source, f"no ClusterQueue {name!r} in {self.queues_path.name}",
                                 field=f"search.cluster_queue.{name}")
        self.flavors = self._capacities(cluster)
        if objectives.nominal_quota and not any(f.cluster_queues for f in self.flavors):
            raise InputError(self.queues_path, f"no ClusterQueue has a {GPU_RESOURCE} quota in a flavor that selects "
                             "GPU nodes of the cluster: nothing to search")

    def _capacities(self, cluster: Cluster) -> tuple[FlavorCapacity, ...]:
        capacities = []
        for name, flavor in self.config.flavors.items():
            nodes = [n for n in cluster.nodes if n.gpus > 0 and flavor_matches(flavor, n)]
            gpus = sum(n.gpus for n in nodes)
            if gpus == 0:
                continue
            queues = tuple(cq.name for cq in self.config.cluster_queues.values()
                           if cq.quota(name, GPU_RESOURCE) is not None)
            capacities.append(FlavorCapacity(name, gpus, sum(n.cpu_milli for n in nodes) / gpus,
                                             sum(n.memory_mib for n in nodes) / gpus, queues,
                                             tuple(sorted({n.gpu_model for n in nodes}))))
        return tuple(capacities)

    # ------------------------------------------------------------------------ parameters

    def distributions(self) -> dict[str, Any]:
        import optuna.distributions as d

        params: dict[str, Any] = {}
        for flavor in self.flavors:
            if not flavor.cluster_queues:
                continue
            if self.objectives.nominal_quota:
                params[f"total:{flavor.name}"] = d.IntDistribution(0, flavor.gpus)
                if len(flavor.cluster_queues) > 1:
                    for cq in flavor.cluster_queues:
                        params[f"share:{flavor.name}:{cq}"] = d.FloatDistribution(0.0, 1.0)
            for cq in flavor.cluster_queues:
                bounds = self.objectives.bounds_of(cq)
                if self.config.cluster_queues[cq].cohort is None:
                    continue
                if bounds.borrowing_limit is not None:
                    params[f"borrow:{flavor.name}:{cq}"] = d.IntDistribution(*bounds.borrowing_limit)
                if bounds.lending_limit is not None:
                    params[f"lend:{flavor.name}:{cq}"] = d.IntDistribution(*bounds.lending_limit)
        for cq in self.config.cluster_queues:
            bounds = self.objectives.bounds_of(cq)
            if bounds.reclaim_within_cohort is not None:
                params[f"reclaim:{cq}"] = d.CategoricalDistribution(bounds.reclaim_within_cohort)
            if bounds.within_cluster_queue is not None:
                params[f"within:{cq}"] = d.CategoricalDistribution(bounds.within_cluster_queue)
            if bounds.fair_sharing_weight is not None:
                params[f"fairshare:{cq}"] = d.FloatDistribution(*bounds.fair_sharing_weight)
        return params

    def point(self, params: dict[str, Any]) -> Point:
        """The settings a trial's parameters stand for."""
        point = Point()
        for flavor in self.flavors:
            if f"total:{flavor.name}" in params:
                total = int(params[f"total:{flavor.name}"])
                shares = [float(params.get(f"share:{flavor.name}:{cq}", 1.0)) for cq in flavor.cluster_queues]
                for cq, gpus in zip(flavor.cluster_queues, apportion(total, shares), strict=True):
                    point.nominal[(cq, flavor.name)] = gpus
            for cq in flavor.cluster_queues:
                if f"borrow:{flavor.name}:{cq}" in params:
                    point.borrowing[(cq, flavor.name)] = int(params[f"borrow:{flavor.name}:{cq}"])
                if f"lend:{flavor.name}:{cq}" in params:
                    nominal = point.nominal.get((cq, flavor.name), self.current_nominal(cq, flavor.name))
                    point.lending[(cq, flavor.name)] = min(int(params[f"lend:{flavor.name}:{cq}"]), nominal)
        for cq in self.config.cluster_queues:
            for prefix, table in (("reclaim", point.reclaim), ("within", point.within)):
                if f"{prefix}:{cq}" in params:
                    table[cq] = str(params[f"{prefix}:{cq}"])
            if f"fairshare:{cq}" in params:
                point.fair_sharing_weight[cq] = round(float(params[f"fairshare:{cq}"]), 3)
        return point

    def current_nominal(self, cq: str, flavor: str) -> int:
        quota = self.config.cluster_queues[cq].quota(flavor, GPU_RESOURCE)
        return 0 if quota is None else quota.nominal_milli // MILLI

    def demand_params(self, asked: dict[tuple[str, str], float]) -> dict[str, Any] | None:
        """Parameters of the demand-proportional point: each flavor's GPUs shared among its
        ClusterQueues in proportion to the GPU-hours their workloads asked of its GPU models
        (``asked``: (cluster queue, GPU model) -> GPU-hours, from today's replay); borrowing
        limits at their upper bound, lending limits at their lower, the rest at its first
        choice. None without demand."""
        if not self.objectives.nominal_quota or not any(asked.values()):
            return None
        spread = {cq: sum(cq in f.cluster_queues for f in self.flavors) for cq in self.config.cluster_queues}
        gpu_hours = {(cq, f.name): sum(asked.get((cq, model), 0.0) for model in f.gpu_models)
                     + asked.get((cq, "*"), 0.0) / spread[cq]  # any GPU model: an equal share of each flavor
                     for f in self.flavors for cq in f.cluster_queues}
        params: dict[str, Any] = {}
        for name, dist in self.distributions().items():
            kind, *rest = name.split(":")
            if kind == "total":
                params[name] = dist.high
            elif kind == "share":
                flavor, cq = rest
                queues = next(f for f in self.flavors if f.name == flavor).cluster_queues
                total = sum(gpu_hours.get((q, flavor), 0.0) for q in queues)
                params[name] = gpu_hours.get((cq, flavor), 0.0) / total if total else 1.0 / len(queues)
            elif kind in ("borrow", "lend"):
                params[name] = dist.high if kind == "borrow" else dist.low
            elif kind in ("reclaim", "within"):
                params[name] = dist.choices[0]
            else:
                params[name] = 1.0 if dist.low <= 1.0 <= dist.high else dist.low
        return params

    def today_params(self) -> dict[str, Any]:
        """Parameters of the current manifests, each value brought within its bounds (a total
        above the flavor's GPUs is cut to them): today's point when it lies in the search space,
        else its nearest point there, so the study starts from what runs now."""
        params: dict[str, Any] = {}
        by_name = {f.name: f for f in self.flavors}
        for name, dist in self.distributions().items():
            kind, *rest = name.split(":")
            if kind in ("total", "share", "borrow", "lend"):
                flavor, queues = by_name[rest[0]], by_name[rest[0]].cluster_queues
                nominal = {cq: self.current_nominal(cq, flavor.name) for cq in queues}
            if kind == "total":
                params[name] = min(sum(nominal.values()), dist.high)
            elif kind == "share":
                total = sum(nominal.values())
                params[name] = nominal[rest[1]] / total if total else 1.0 / len(queues)
            elif kind in ("borrow", "lend"):
                quota = self.config.cluster_queues[rest[1]].quota(rest[0], GPU_RESOURCE)
                limit = None if quota is None else (quota.borrowing_limit_milli if kind == "borrow"
                                                    else quota.lending_limit_milli)
                value = dist.high if limit is None else limit // MILLI
                params[name] = max(dist.low, min(dist.high, value))
            elif kind in ("reclaim", "within"):
                preemption = self.config.cluster_queues[rest[0]].preemption
                policy = preemption.reclaim_within_cohort if kind == "reclaim" else preemption.within_cluster_queue
                text = str(getattr(policy, "value", policy))
                params[name] = text if text in dist.choices else dist.choices[0]
            else:
                weight = float(self.config.cluster_queues[rest[0]].fair_sharing_weight)
                params[name] = max(dist.low, min(dist.high, weight))
        return params

    # ------------------------------------------------------------------------- manifests

    def manifests(self, point: Point) -> list[Any]:
        documents = copy.deepcopy(self.documents)
        capacity = {f.name: f for f in self.flavors}
        today = self.point(self.today_params())
        for document in documents:
            if not (isinstance(document, dict) and document.get("kind") == "ClusterQueue"
                    and str(document.get("apiVersion", "")).startswith("kueue.x-k8s.io/")):
                continue
            cq = document["metadata"]["name"]
            spec = document.setdefault("spec", {})
            for group in spec.get("resourceGroups") or ():
                for flavor in group.get("flavors") or ():
                    key = (cq, flavor["name"])
                    per_gpu = capacity.get(flavor["name"])
                    for resource in flavor.get("resources") or ():
                        for table, field_name in ((point.nominal, "nominalQuota"), (point.borrowing, "borrowingLimit"),
                                                  (point.lending, "lendingLimit")):
                            if key not in table or (resource["name"] != GPU_RESOURCE and field_name == "lendingLimit"
                                                    and key not in point.nominal):
                                continue  # a CPU lending limit needs the CPU nominal quota it is cut to
                            if resource["name"] != GPU_RESOURCE and table[key] == _field(today, field_name).get(key):
                                continue  # GPUs unchanged: the CPU and memory the user gave stay as given
                            value = _quantity(resource["name"], table[key], per_gpu)
                            if value is not None:  # a resource the nodes do not model keeps its quota
                                resource[field_name] = _as_given(value, resource.get(field_name))
            if cq in point.reclaim:
                spec.setdefault("preemption", {})["reclaimWithinCohort"] = point.reclaim[cq]
            if cq in point.within:
                spec.setdefault("preemption", {})["withinClusterQueue"] = point.within[cq]
            if cq in point.fair_sharing_weight:
                spec.setdefault("fairSharing", {})["weight"] = _weight(point.fair_sharing_weight[cq])
        return documents

    def text(self, point: Point, header: str) -> str:
        """The point's manifests as the YAML file `write` writes."""
        return header + dump(self.manifests(point))

    def write(self, point: Point, path: Path, header: str) -> str:
        text = self.text(point, header)
        path.write_text(text, encoding="utf-8")
        return text

    def diff(self, point: Point, old_name: str, new_name: str) -> str:
        old, new = dump(self.documents).splitlines(keepends=True), dump(self.manifests(point)).splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, old_name, new_name))


def apportion(total: int, shares: list[float]) -> list[int]:
    """Whole parts of ``total`` in proportion to ``shares`` (largest remainder); they sum to
    ``total`` (to 0 when every share is 0)."""
    weight = sum(shares)
    if total <= 0 or weight <= 0:
        return [0] * len(shares)
    exact = [total * s / weight for s in shares]
    parts = [int(x) for x in exact]
    order = sorted(range(len(shares)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def _quantity(resource: str, gpus: int, capacity: FlavorCapacity | None) -> Any:
    if resource == GPU_RESOURCE:
        return gpus
    if capacity is None:
        return None
    if resource == "cpu" and capacity.cpu_milli_per_gpu:
        milli = round(gpus * capacity.cpu_milli_per_gpu)
        return milli // MILLI if milli % MILLI == 0 else f"{milli}m"
    if resource == "memory" and capacity.memory_mib_per_gpu:
        return f"{round(gpus * capacity.memory_mib_per_gpu)}Mi"
    return None


def _field(point: Point, field_name: str) -> dict[tuple[str, str], int]:
    return {"nominalQuota": point.nominal, "borrowingLimit": point.borrowing, "lendingLimit": point.lending}[field_name]


def _as_given(value: Any, given: Any) -> Any:
    """``value`` in the unit and form of the quantity the user's manifest had there, when
    there was one and the amount can be written so (see ``quantities.in_form_of``)."""
    if given is None:
        return value
    kept = in_form_of(quantity_to_milli(value), given)
    return value if kept is None else kept


def _weight(value: float) -> Any:
    return int(value) if float(value).is_integer() else str(value)


def dump(documents: list[Any]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, explicit_start=True)
