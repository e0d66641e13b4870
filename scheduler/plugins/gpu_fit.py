"""Filters: GPUs of an accepted model and count, then CPU and memory (NodeResourcesFit).

The GPU model constraint is applied before filters run (`NodeCandidates.candidate_nodes`),
so nodes of other models are counted as "didn't match GPU model" without a filter call.
"""

from __future__ import annotations

from scheduler.dra.allocator import AllocationFailed
from scheduler.dra.state import FRACTION_ON_DRA_NODE, DraState
from scheduler.framework.status import Resource, Status
from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, PodRequest

INSUFFICIENT_GPU = "Insufficient nvidia.com/gpu"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"


# Statuses are immutable, so the few distinct answers are built once: filters run for
# every node of every attempt.
_NO_GPU = Status.unschedulable(names.GPU_FIT, INSUFFICIENT_GPU, short_of=Resource.GPU)
_NEVER_GPU = Status.unresolvable(names.GPU_FIT, INSUFFICIENT_GPU, short_of=Resource.GPU)
_NO_CPU = Status.unschedulable(names.NODE_RESOURCES_FIT, INSUFFICIENT_CPU, short_of=Resource.CPU)
_NO_MEMORY = Status.unschedulable(names.NODE_RESOURCES_FIT, INSUFFICIENT_MEMORY, short_of=Resource.MEMORY)
_OK = Status.success()


class GpuFit:
    name = names.GPU_FIT
    # The node search may take a node as passing without calling `filter` when its whole
    # free GPUs surely hold the request and no GPUs are nominated (`node_search.PartialSearch`).
    inline_fit = "gpus"
    # Without nominations, decides by whole free GPUs (a fraction: or a shared device's free
    # milli-GPUs) alone: the native walk decides so without calling `filter` (`node_search.py`).
    fails_inline = True
    # What it fails a node with, as the native walk names it: GPUs short now; the request
    # beyond every GPU of the node (unresolvable).
    inline_statuses = (_NO_GPU, _NEVER_GPU)

    def filter(self, state: ClusterState, request: PodRequest, node: int) -> Status:
        # GPUs nominated to a higher-priority preemptor are not free to this pod.
        kept = state.nominations.held_for_higher(node, request.priority) if state.nominations else 0
        if request.milli and not state.gpu_fits(node, request.milli, kept):
            return _NEVER_GPU if request.milli > state.nodes[node].gpus * 1000 else _NO_GPU
        return _OK


class GpuFitWithDevices(GpuFit):
    """GpuFit on a cluster with DRA inputs: a pod with claims, and any pod on a node whose GPUs
    are published as devices, goes through the DynamicResources filter instead. A replay
    without DRA inputs keeps the plain GpuFit: its hot loop never asks.

    No inline fit: free whole GPUs in the count view do not say that the allocator finds
    devices (selectors, constraints, taints), so the node search calls the filter on every
    node."""

    inline_fit = ""

    fails_inline = False  # a claim's devices decide, not the GPU count

    def filter(self, state: ClusterState, request: PodRequest, node: int) -> Status:
        dra = state.dra
        if dra is not None and dra.involves(node, request.claims):
            return dynamic_resources(dra, request, node)
        return GpuFit.filter(self, state, request, node)


def with_devices(filters: list) -> list:
    """The profile's filters with GpuFit in its DRA form (`GpuFitWithDevices`), in place."""
    return [GpuFitWithDevices() if type(plugin) is GpuFit else plugin for plugin in filters]


def dynamic_resources(dra: DraState, request: PodRequest, node: int) -> Status:
    """The DynamicResources filter (`plugins/dynamicresources/dynamicresources.go` Filter):
    the allocator finds the pod's devices on the node, or the node fails in upstream's words."""
    try:
        plan = dra.plan(node, request.claims, request.milli)
    except AllocationFailed as error:  # upstream: an error status, the pod cannot be scheduled
        return Status.unresolvable(names.DYNAMIC_RESOURCES, str(error), short_of=Resource.GPU)
    if isinstance(plan, str):
        if plan == FRACTION_ON_DRA_NODE:
            return Status.unresolvable(names.DYNAMIC_RESOURCES, plan, short_of=Resource.GPU)
        return Status.unschedulable(names.DYNAMIC_RESOURCES, plan, short_of=Resource.GPU)
    return _OK


class NodeResourcesFit:
    name = names.NODE_RESOURCES_FIT
    inline_fit = "cpu_memory"  # checked inline by the node search, as `filter` does
    fails_inline = True  # fails exactly the nodes short of CPU or memory
    inline_statuses = (_NO_CPU, _NO_MEMORY)  # CPU checked first

    def filter(self, state: ClusterState, request: PodRequest, node: int) -> Status:
        cpu_ok, memory_ok = state.resources_fit(node, request)
        if not cpu_ok:
            return _NO_CPU
        if not memory_ok:
            return _NO_MEMORY
        return _OK
