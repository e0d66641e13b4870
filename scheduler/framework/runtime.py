"""The framework runtime: builds a profile's plugins and runs Filter + Score for one pod.

`find_node` is the whole of a kube-scheduler pod attempt on a snapshot: filter every
candidate node, score the feasible ones by the profile's weights, take the best (ties to
the lowest node index). When nothing fits it returns a `Diagnosis`: how many nodes failed
for which reason, the raw material of every "why pending" message.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scheduler.framework import registry
from scheduler.framework.interface import FilterPlugin, QueueSortPlugin, ScorePlugin
from scheduler.framework.profile import Profile
from scheduler.framework.status import Code, Status
from scheduler.state import ClusterState, PodRequest

MODEL_MISMATCH = "node(s) didn't match GPU model"
# The reason GpuFit gives; the usage index counts the nodes it skips under it.
INSUFFICIENT_GPU = "Insufficient nvidia.com/gpu"


@dataclass
class Diagnosis:
    total_nodes: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    unresolvable: set[int] = field(default_factory=set)

    def message(self) -> str:
        """kube-scheduler's FailedScheduling shape: '0/64 nodes are available: …'."""
        parts = ", ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
        return f"0/{self.total_nodes} nodes are available: {parts}." if parts else (
            f"0/{self.total_nodes} nodes are available."
        )


class Framework:
    def __init__(self, profile: Profile, rng: random.Random) -> None:
        self.profile = profile

        def make(point: str, name: str) -> Any:
            return registry.build(point, name, profile.args(name), rng)

        self.queue_sort: QueueSortPlugin = make("queue_sort", profile.queue_sort)
        self.filters: list[FilterPlugin] = [make("filter", n) for n in profile.filters]
        self.scores: list[tuple[ScorePlugin, float]] = [(make("score", n), w) for n, w in profile.scores]
        self.permit = [make("permit", n) for n in profile.permit]
        self.post_filter = [make("post_filter", n) for n in profile.post_filter]

    @property
    def _index_order(self) -> str | None:
        """"least"/"most" when the profile scores by allocation alone (one such plugin)."""
        if len(self.scores) == 1:
            return getattr(self.scores[0][0], "index_order", None)
        return None

    def _find_by_index(self, state: ClusterState, request: PodRequest, explain: bool = True) -> tuple[int | None, Diagnosis | None]:
        """The node a full scan would choose, found by walking the usage index; when none
        fits, the same diagnosis a full scan would give."""
        most = self._index_order == "most"
        plugin = self.scores[0][0]
        best_node, best_score = None, -1.0
        visited_failures: list[tuple[int, Status]] = []
        for usage in state.usage_index.classes_for(request.models):
            for node in usage.in_order(request.milli, most):
                failed = self._first_failure(state, request, node)
                if failed is None:
                    score = plugin.score(state, request, node)
                    if score > best_score or (score == best_score and best_node is not None and node < best_node):
                        best_node, best_score = node, score
                    break  # the first feasible node of a class is that class's best
                visited_failures.append((node, failed))
        if best_node is not None or not explain:
            return best_node, None
        # Nothing fits. Nodes the walk did not visit lack the GPUs (their used level is too
        # high); the visited ones failed a filter each. Count them as a full scan would.
        diagnosis = Diagnosis(total_nodes=len(state.nodes))
        for node, failed in visited_failures:
            diagnosis.reasons[failed.reasons[0] if failed.reasons else failed.code.value] += 1
            if failed.code is Code.UNRESOLVABLE:
                diagnosis.unresolvable.add(node)
        visited = {node for node, _ in visited_failures}
        candidates = state.candidate_nodes(request.models)
        for node in candidates:
            if node not in visited:
                diagnosis.reasons[INSUFFICIENT_GPU] += 1
                if request.milli > state.nodes[node].gpus * 1000:
                    diagnosis.unresolvable.add(node)
        if len(state.nodes) - len(candidates):
            diagnosis.reasons[MODEL_MISMATCH] += len(state.nodes) - len(candidates)
        return None, diagnosis

    def _first_failure(self, state: ClusterState, request: PodRequest, node: int) -> Status | None:
        for plugin in self.filters:
            status = plugin.filter(state, request, node)
            if not status.ok:
                return status
        return None

    def feasible(self, state: ClusterState, request: PodRequest, node: int) -> bool:
        return all(f.filter(state, request, node).ok for f in self.filters)

    def find_node(
        self, state: ClusterState, request: PodRequest, nodes: list[int] | None = None,
        explain: bool = True,
    ) -> tuple[int | None, Diagnosis | None]:
        """The best feasible node, or None and (when `explain`) why no node fits.

        What-ifs that only need the answer pass explain=False: building the diagnosis
        touches every node."""
        if nodes is None and self._index_order is not None:
            return self._find_by_index(state, request, explain)
        candidates = state.candidate_nodes(request.models) if nodes is None else nodes
        best_node, best_score = None, -1.0
        diagnosis: Diagnosis | None = None
        for node in candidates:
            failed = None
            for plugin in self.filters:
                status = plugin.filter(state, request, node)
                if not status.ok:
                    failed = status
                    break
            if failed is not None:
                if diagnosis is None:
                    diagnosis = Diagnosis(total_nodes=len(state.nodes))
                diagnosis.reasons[failed.reasons[0] if failed.reasons else failed.code.value] += 1
                if failed.code is Code.UNRESOLVABLE:
                    diagnosis.unresolvable.add(node)
                continue
            score = sum(w * p.score(state, request, node) for p, w in self.scores) if self.scores else 0.0
            if score > best_score:
                best_node, best_score = node, score
        if best_node is not None:
            return best_node, None
        diagnosis = diagnosis or Diagnosis(total_nodes=len(state.nodes))
        mismatched = len(state.nodes) - len(candidates)
        if mismatched and nodes is None:
            diagnosis.reasons[MODEL_MISMATCH] += mismatched
        return None, diagnosis
