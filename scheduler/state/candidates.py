"""Which nodes a pod request may use: its GPU models and its node selector.

A selector (a Kueue flavor's nodeLabels and tolerations, a TAS domain's labels) is checked
against the nodes' fixed labels and taints once per distinct selector; placement then asks
set membership, never labels (`ClusterState.candidates`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from types import MappingProxyType

from scheduler.model import Cluster, Node
from scheduler.model.cluster import NO_SELECTOR, NodeSelector

_NONE_EXCLUDED: Mapping[int, str] = MappingProxyType({})


class NodeCandidates:
    def __init__(self, cluster: Cluster, nodes_by_model: dict[str, list[int]]) -> None:
        self.nodes: tuple[Node, ...] = cluster.nodes
        self.nodes_by_model = nodes_by_model  # the state's: node indices per GPU model, in cluster order
        # Nodes a selector rules out, with kube-scheduler's reason, per selector; and the
        # candidate nodes per (models, selector). Labels and taints never change during a
        # replay, so each is computed once.
        self._tainted = cluster.tainted
        self._excluded: dict[NodeSelector, Mapping[int, str]] = {}
        self._candidates: dict[tuple[tuple[str, ...], NodeSelector], list[int]] = {}
        # What a diagnosis counts, per (models, selector), so that explaining a pod that fits
        # nowhere costs the nodes it visited, not the cluster (`no_fit.index_diagnosis`).
        self._candidate_sets: dict[tuple[tuple[str, ...], NodeSelector], frozenset[int]] = {}
        self._by_size: dict[tuple[tuple[str, ...], NodeSelector], tuple[list[int], list[int]]] = {}
        self._excluded_counts: dict[tuple[tuple[str, ...], NodeSelector], dict[str, int]] = {}
        self._model_counts: dict[tuple[str, ...], int] = {}
        # No node is too small for a pod of at most this many GPUs (a diagnosis skips that check).
        self.fewest_gpus = min((node.gpus for node in cluster.nodes), default=0)

    def excluded(self, selector: NodeSelector) -> Mapping[int, str]:
        """The nodes a pod with `selector` may not run on, each with kube-scheduler's reason
        (node affinity/selector, or an untolerated taint); empty when it may run anywhere."""
        if selector is NO_SELECTOR and not self._tainted:
            return _NONE_EXCLUDED  # the common case, without hashing the selector
        found = self._excluded.get(selector)
        if found is None:
            if selector == NO_SELECTOR and not self._tainted:
                found = {}
            else:
                found = {index: reason for index, node in enumerate(self.nodes)
                         if (reason := selector.admits(node)) is not None}
            self._excluded[selector] = found
        return found

    def candidate_nodes(self, models: tuple[str, ...], selector: NodeSelector = NO_SELECTOR) -> list[int]:
        """Node indices whose GPU model a request accepts and that its selector admits, in
        cluster order."""
        excluded = self.excluded(selector)
        if not excluded:
            return self.model_nodes(models)
        key = (models, selector)
        found = self._candidates.get(key)
        if found is None:
            found = self._candidates[key] = [n for n in self.model_nodes(models) if n not in excluded]
        return found

    def excluded_reasons(self, models: tuple[str, ...], selector: NodeSelector) -> dict[str, int]:
        """How many nodes of accepted models the selector rules out, by reason (a diagnosis)."""
        counts: dict[str, int] = {}
        for node, reason in self.excluded(selector).items():
            if not models or self.nodes[node].gpu_model in models:
                counts[reason] = counts.get(reason, 0) + 1
        return counts

    def model_nodes(self, models: tuple[str, ...]) -> list[int]:
        """Node indices whose GPU model a request accepts, whatever its selector."""
        if not models:
            return list(range(len(self.nodes)))
        if len(models) == 1:
            return self.nodes_by_model.get(models[0], [])
        return sorted(i for m in models for i in self.nodes_by_model.get(m, []))

    # -- what a diagnosis counts (labels, taints and capacities never change: each once) ----

    def candidate_set(self, models: tuple[str, ...], selector: NodeSelector) -> frozenset[int]:
        """`candidate_nodes` as a set."""
        key = (models, selector)
        found = self._candidate_sets.get(key)
        if found is None:
            found = self._candidate_sets[key] = frozenset(self.candidate_nodes(models, selector))
        return found

    def smaller_than(self, models: tuple[str, ...], selector: NodeSelector, milli: int) -> list[int]:
        """The candidate nodes with fewer than `milli` milli-GPUs in all (too small for a pod
        of `milli`), fewest GPUs first."""
        key = (models, selector)
        by_size = self._by_size.get(key)
        if by_size is None:
            ordered = sorted(self.candidate_nodes(models, selector), key=lambda n: (self.nodes[n].gpus, n))
            by_size = self._by_size[key] = ([self.nodes[n].gpus * 1000 for n in ordered], ordered)
        sizes, ordered = by_size
        return ordered[:bisect_left(sizes, milli)]

    def excluded_counts(self, models: tuple[str, ...], selector: NodeSelector) -> Mapping[str, int]:
        """`excluded_reasons`, counted once per (models, selector)."""
        key = (models, selector)
        found = self._excluded_counts.get(key)
        if found is None:
            found = self._excluded_counts[key] = self.excluded_reasons(models, selector)
        return found

    def model_node_count(self, models: tuple[str, ...]) -> int:
        """len(model_nodes(models)), counted once per models."""
        found = self._model_counts.get(models)
        if found is None:
            found = self._model_counts[models] = len(self.model_nodes(models))
        return found
