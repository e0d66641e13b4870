"""Score plugins over GPU allocation, as kube-scheduler's NodeResourcesFit strategies do.

LeastAllocated (the kube-scheduler default) spreads pods to the emptiest nodes; that is
the baseline that fragments GPU nodes. MostAllocated (bin packing, "BestFit") fills the
fullest node that fits. Random is the control in fragmentation studies.
"""

from __future__ import annotations

import random

from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, PodRequest


def _used_fraction_after(state: ClusterState, request: PodRequest, node: int) -> float:
    capacity = state.nodes[node].gpus * 1000
    if not capacity:
        return 0.0
    return (state.used_milli(node) + request.milli) / capacity


class LeastAllocated:
    name = names.LEAST_ALLOCATED
    # Within nodes of one GPU model and count, this score orders nodes by used GPUs, least
    # first: the framework may then walk `ClusterState.usage_index` instead of every node.
    index_order = "least"
    # The node search computes this score inline with the same arithmetic (`node_search.py`).
    inline_score = "least"

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        return 100.0 * (1.0 - _used_fraction_after(state, request, node))


class MostAllocated:
    name = names.MOST_ALLOCATED
    index_order = "most"
    inline_score = "most"

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        return 100.0 * _used_fraction_after(state, request, node)


class RandomScore:
    name = names.RANDOM_SCORE

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        return 100.0 * self._rng.random()
