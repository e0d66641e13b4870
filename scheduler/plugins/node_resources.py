"""The default scheduler's resource scores, over CPU and memory (and GPUs when asked).

Source: kube-scheduler's noderesources plugins (fit.go, least_allocated.go,
most_allocated.go, balanced_allocation.go, resource_allocation.go). Scores are integers
0..100 computed in integer arithmetic, as upstream:

- **NodeResourcesFit** (score point), strategy LeastAllocated: per resource,
  (allocatable − requested) · 100 // allocatable; MostAllocated: requested · 100 //
  allocatable; the node's score is the weighted mean (integer division) over the resources
  the node has (allocatable 0: skipped). The default profile scores `cpu` and `memory`,
  weight 1 each; GPUs are not a default scoring resource.
- **NodeResourcesBalancedAllocation**: (1 − standard deviation of the requested/allocatable
  fractions) · 100, truncated; for two resources the deviation is |f1 − f2| / 2.

"Requested" includes the incoming pod. For CPU and memory, NodeResourcesFit counts a pod
that requests none as requesting 100 millicores and 200 MiB (upstream's non-zero
defaults); BalancedAllocation counts real requests. Nodes that do not model CPU or memory
(0 in the cluster file) have nothing to score for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from scheduler.model.workload import MILLI
from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, PodRequest

MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU_REQUEST = 100  # upstream's DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST_MIB = 200  # upstream's DefaultMemoryRequest (200 MiB)
CPU, MEMORY, GPU = "cpu", "memory", "nvidia.com/gpu"
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))


class Strategy(StrEnum):
    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"


def _resources(args: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """`resources = [{name = "cpu", weight = 1}, …]` from the profile's plugin_args."""
    given = args.get("resources")
    if given is None:
        return DEFAULT_RESOURCES
    parsed = []
    for item in given:
        name, weight = item.get("name"), item.get("weight", 1)
        if name not in (CPU, MEMORY, GPU):
            raise ValueError(f"resources: unknown resource {name!r}; known: {CPU}, {MEMORY}, {GPU}")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ValueError(f"resources: the weight of {name} must be a whole number >= 1, got {weight!r}")
        parsed.append((name, weight))
    return tuple(parsed)


def _allocatable_requested(state: ClusterState, request: PodRequest, node: int, resource: str,
                           non_zero: bool) -> tuple[int, int]:
    """(allocatable, requested including the incoming pod) in the resource's base unit."""
    spec = state.nodes[node]
    if resource == CPU:
        pod = request.cpu_milli or (DEFAULT_MILLI_CPU_REQUEST if non_zero else 0)
        used = spec.cpu_milli - state.cpu_free[node]
        if non_zero:
            used += DEFAULT_MILLI_CPU_REQUEST * state.pods_without_cpu[node]
        return spec.cpu_milli, used + pod
    if resource == MEMORY:
        pod = request.memory_mib or (DEFAULT_MEMORY_REQUEST_MIB if non_zero else 0)
        used = spec.memory_mib - state.memory_free[node]
        if non_zero:
            used += DEFAULT_MEMORY_REQUEST_MIB * state.pods_without_memory[node]
        return spec.memory_mib, used + pod
    return spec.gpus * MILLI, state.used_milli(node) + request.milli


class NodeResourcesFitScore:
    """NodeResourcesFit's Score point (its Filter point is `gpu_fit.NodeResourcesFit`)."""

    name = names.NODE_RESOURCES_FIT

    def __init__(self, strategy: Strategy = Strategy.LEAST_ALLOCATED,
                 resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> None:
        self.strategy = strategy
        self.resources = tuple(resources)

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> NodeResourcesFitScore:
        strategy = str(args.get("scoring_strategy", Strategy.LEAST_ALLOCATED))
        if strategy not in set(Strategy):
            raise ValueError(f"scoring_strategy must be {' or '.join(Strategy)}, got {strategy!r}")
        return NodeResourcesFitScore(Strategy(strategy), _resources(args))

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        total = weights = 0
        least = self.strategy is Strategy.LEAST_ALLOCATED
        for resource, weight in self.resources:
            allocatable, requested = _allocatable_requested(state, request, node, resource, non_zero=True)
            if allocatable == 0:
                continue
            if requested > allocatable:
                value = 0 if least else MAX_NODE_SCORE
            elif least:
                value = (allocatable - requested) * MAX_NODE_SCORE // allocatable
            else:
                value = requested * MAX_NODE_SCORE // allocatable
            total += value * weight
            weights += weight
        return total // weights if weights else 0


class NodeResourcesBalancedAllocation:
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> None:
        self.resources = tuple(resources)

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> NodeResourcesBalancedAllocation:
        return NodeResourcesBalancedAllocation(_resources(args))

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        fractions = []
        for resource, _ in self.resources:
            allocatable, requested = _allocatable_requested(state, request, node, resource, non_zero=False)
            if allocatable:
                fractions.append(min(1.0, requested / allocatable))
        if len(fractions) == 2:
            deviation = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            deviation = (sum((f - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
        else:
            deviation = 0.0
        return int((1 - deviation) * MAX_NODE_SCORE)
