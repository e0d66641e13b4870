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
from scheduler.framework.status import Code
from scheduler.state import ClusterState, PodRequest

MODEL_MISMATCH = "node(s) didn't match GPU model"


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

    def feasible(self, state: ClusterState, request: PodRequest, node: int) -> bool:
        return all(f.filter(state, request, node).ok for f in self.filters)

    def find_node(
        self, state: ClusterState, request: PodRequest, nodes: list[int] | None = None
    ) -> tuple[int | None, Diagnosis | None]:
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
