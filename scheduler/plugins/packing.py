"""GPU packing heuristics of the fragmentation study (FGD paper, USENIX ATC '23, §6).

The baselines the paper compares FGD with, besides Random and BestFit (`scoring.py`):

- **DotProd** (Tetris-style alignment, as the paper's simulator applies it): the dot
  product of the node's free resources and the pod's request, both as fractions of the
  node's capacity over (CPU, GPU); the *smaller* the product, the better the node
  (score 100 · (1 − product / 2)).
- **GpuPacking**: prefer, in this order, (1) a GPU already shared by other pods, the
  fuller the better; (2) free GPUs on a node that is already in use, the fuller the node
  the better; (3) an empty node, the smaller the better. Pods without GPUs score 0 everywhere.
- **GpuClustering** (Alibaba's production heuristic): keep pods of the same GPU request
  class together. Classes: ``share`` (below one GPU) and ``N-gpu`` (N whole GPUs). Tiers:
  the node holds only this class (75–100), this class among others (50–75), no GPU pod
  yet (25–50), only other classes (0–25); within a tier the fuller node wins. Pods
  without GPUs score 0 everywhere.

Each score depends only on the node's own state, so nodes in the same state score the
same and ties go to the lowest node index (a deterministic replay).
"""

from __future__ import annotations

from scheduler.model.workload import MILLI
from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, Holding, PodRequest, fullest_fitting

SHARE_CLASS = "share"


def request_class(milli: int) -> str | None:
    """GpuClustering's class of a request: None (no GPU), ``share`` or ``N-gpu``."""
    if milli <= 0:
        return None
    return SHARE_CLASS if milli < MILLI else f"{milli // MILLI}-gpu"


def holding_class(holding: Holding) -> str | None:
    return request_class(holding.milli)


def node_classes(state: ClusterState, node: int) -> frozenset[str]:
    """The request classes of the GPU pods on ``node``."""
    return frozenset(c for c in map(holding_class, state.pods_on_node[node].values()) if c)


def _used_fraction(state: ClusterState, node: int) -> float:
    capacity = state.nodes[node].gpus * MILLI
    return state.used_milli(node) / capacity if capacity else 0.0


class DotProd:
    name = names.DOT_PROD

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        spec = state.nodes[node]
        product = 0.0
        if spec.cpu_milli:
            product += (state.cpu_free[node] / spec.cpu_milli) * (request.cpu_milli / spec.cpu_milli)
        if spec.gpus:
            capacity = spec.gpus * MILLI
            product += ((capacity - state.used_milli(node)) / capacity) * (request.milli / capacity)
        return 100.0 * (1.0 - product / 2.0)


class GpuPacking:
    name = names.GPU_PACKING

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        if request.milli <= 0:
            return 0.0
        spec = state.nodes[node]
        if state.used_milli(node) == 0:  # tier 3: an empty node, smaller first
            return 100.0 / 3.0 * (1.0 - spec.gpus / (spec.gpus + 1.0))
        if request.milli < MILLI:
            fullest = fullest_fitting(state, node, request.milli)
            if fullest is not None and fullest < MILLI:  # tier 1: shares a GPU that is already in use
                return 200.0 / 3.0 + 100.0 / 3.0 * (1.0 - fullest / MILLI)
        # tier 2: whole free GPUs on a node already in use, fuller node first
        return 100.0 / 3.0 + 100.0 / 3.0 * _used_fraction(state, node)


class GpuClustering:
    name = names.GPU_CLUSTERING

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        wanted = request_class(request.milli)
        if wanted is None:
            return 0.0
        present = node_classes(state, node)
        if wanted in present:
            return 25.0 * (3 if len(present) == 1 else 2) + 25.0 * _used_fraction(state, node)
        tier = 0 if present else 1  # only other classes: last; a node without GPU pods: third
        return 25.0 * tier + 25.0 * _used_fraction(state, node)
