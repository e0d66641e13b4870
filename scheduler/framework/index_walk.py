"""The usage-index walk: the node a full scan of the cluster would choose, found without
scanning it, when a profile scores by GPU allocation alone (`runtime.index_order`).

The usage index (`scheduler/state/usage_index.py`) hands each class's nodes best score first, in
levels of equal use. Without keyed ties the first feasible node of a class is the class's
best (the lowest index among its best). With keyed ties (`tie_keys.py`) the nodes of one
level score alike, so they are tried in key order: the level's first feasible node is its
least key, and the walk goes on while a level can still score as well as the best found.
Both return the nodes that failed a filter on the way, from which `Framework` builds the
diagnosis a full scan would give; `find_node` checks the walk against the scan under
`replay --verify`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from scheduler.framework.interface import FilterPlugin, ScorePlugin
from scheduler.framework.status import Status
from scheduler.framework.tie_keys import SaltTable
from scheduler.state.cluster_state import ClusterState, PodRequest

Failures = list[tuple[int, Status]]


def first_failure(filters: Sequence[FilterPlugin], state: ClusterState, request: PodRequest, node: int) -> Status | None:
    """The first filter's failing status on `node`, or None when every filter passes."""
    for plugin in filters:
        status = plugin.filter(state, request, node)
        if not status.ok:
            return status
    return None


def by_node_index(state: ClusterState, request: PodRequest, filters: Sequence[FilterPlugin], plugin: ScorePlugin,
                  most: bool) -> tuple[int | None, Failures]:
    """The best feasible node with ties to the lowest index, and the nodes that failed."""
    best_node, best_score = None, -1.0
    failures: Failures = []
    excluded = state.candidates.excluded(request.selector)
    for usage in state.usage_index.classes_for(request.models):
        for node in usage.in_order(request.milli, most):
            if excluded and node in excluded:
                continue  # NodeAffinity / TaintToleration: not a candidate
            failed = first_failure(filters, state, request, node)
            if failed is None:
                score = plugin.score(state, request, node)
                if score > best_score or (score == best_score and best_node is not None and node < best_node):
                    best_node, best_score = node, score
                break  # the first feasible node of a class is that class's best
            failures.append((node, failed))
    return best_node, failures


def keyed(state: ClusterState, request: PodRequest, filters: Sequence[FilterPlugin], plugin: ScorePlugin,
          most: bool, base: int, salts: SaltTable) -> tuple[int | None, Failures]:
    """The best feasible node of least key (`base`, `salts`: `TieKeys`): the classes best
    first level first, each level's least-key feasible node, while a level can still score
    as well as the best; and the nodes that failed."""
    best_node, best_score, best_key = None, -1.0, 0
    failures: Failures = []
    excluded = state.candidates.excluded(request.selector)
    heads: list[tuple[float, int, list[int], Iterator[list[int]]]] = []
    for usage in state.usage_index.classes_for(request.models):
        levels = usage.levels_in_order(request.milli, most)
        first = next(levels, None)
        if first is not None:
            heads.append((plugin.score(state, request, first[0]), len(heads), first, levels))
    heads.sort(key=lambda head: -head[0])
    for score, _, first, levels in heads:
        if score < best_score:
            break  # this class, and every one after it, scores lower
        level: list[int] | None = first
        while level is not None:
            if level is not first:
                score = plugin.score(state, request, level[0])
                if score < best_score:
                    break  # the class's later levels score lower still
            found = _least_feasible(state, request, filters, level, base, salts, excluded, failures)
            if found is not None:
                key, node = found
                if score > best_score or key < best_key:
                    best_node, best_score, best_key = node, score, key
            level = next(levels, None)
    return best_node, failures


def _least_feasible(state: ClusterState, request: PodRequest, filters: Sequence[FilterPlugin], level: list[int],
                    base: int, salts: SaltTable, excluded: Mapping[int, str],
                    failures: Failures) -> tuple[int, int] | None:
    """(key, node) of the level's feasible node of least key, or None (each node that failed
    a filter recorded): the least key first, the rest in key order only when it does not fit."""
    key, node = salts.least(base, level) if len(level) > 1 else (salts.key(base, level[0]), level[0])
    if not (excluded and node in excluded):
        failed = first_failure(filters, state, request, node)
        if failed is None:
            return key, node
        failures.append((node, failed))
    first = node
    for node in salts.in_key_order(base, level):
        if node == first or (excluded and node in excluded):
            continue  # NodeAffinity / TaintToleration: not a candidate
        failed = first_failure(filters, state, request, node)
        if failed is None:
            return salts.key(base, node), node
        failures.append((node, failed))
    return None
