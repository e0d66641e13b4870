"""kube-scheduler's search for feasible nodes on the whole cluster, one node at a time.

`findNodesThatFitPod` / `findNodesThatPassFilters` (pkg/scheduler `schedule_one.go`,
`algorithm.go` on master): nodes are filtered from `nextStartNodeIndex` in cluster order
until `numFeasibleNodesToFind` passed; the next node to pass cancels the search and is not
counted, and the index moves on by the nodes processed (feasible + failed). A node of
another GPU model fails NodeAffinity like any filter. Upstream filters in parallel; this is
the order one worker takes. `Diagnosis` is what every failed node adds up to.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.framework.interface import FilterPlugin, ScorePlugin
from scheduler.framework.node_heap import heap_choice, preorder_rank
from scheduler.framework.status import Code, Resource, Status
from scheduler.state.cluster_state import ClusterState, PodRequest

MILLI = 1000
MIN_FEASIBLE_NODES_TO_FIND = 100  # kube-scheduler's minFeasibleNodesToFind
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MODEL_MISMATCH = "node(s) didn't match GPU model"
# The reason GpuFit gives; the usage index counts the nodes it skips under it.

Kernel = Callable[..., tuple[int, int, int, bool, tuple[int, int, int, int]]]  # native_walk.walk (native_walk.pyi)
# The heap's root over the feasible nodes found so far, as the C walk keeps it in place:
# [found, top score, position of the root, its node] (`native_walk.c`'s RunningRoot).
RunningRoot = list[Any]
ROOT_DEPTH = 64  # pre-order ranks compare alike at any depth that holds both positions


def load_kernel() -> Kernel | None:
    """The node walk in C where it is built and the build runs compiled (`scheduler/compiled.py`
    keeps it out of the pure tree); else None: the walk in Python."""
    try:
        from scheduler.framework.native_walk import walk
    except ImportError:
        return None
    return walk


KERNEL = load_kernel()  # read by each PartialSearch (a test swaps it)


@dataclass(init=False)
class Diagnosis:
    total_nodes: int
    reasons: defaultdict[str, int]  # nodes per reason (a Counter builds through interpreted code)
    unresolvable: set[int]
    # The resources some node was short of (`Status.short_of`): what the queue decides by.
    short_of: set[Resource]

    # Written out rather than generated: mypyc compiles a dataclass's own methods, while the
    # dataclasses module's generated __init__ runs interpreted (every node search builds one).
    def __init__(self, total_nodes: int = 0, reasons: defaultdict[str, int] | None = None,
                 unresolvable: set[int] | None = None, short_of: set[Resource] | None = None) -> None:
        self.total_nodes = total_nodes
        self.reasons = defaultdict(int) if reasons is None else reasons
        self.unresolvable = set() if unresolvable is None else unresolvable
        self.short_of = set() if short_of is None else short_of

    def failed(self, node: int, status: Status) -> None:
        """`node` failed a filter with `status`."""
        self.reasons[status.reasons[0] if status.reasons else status.code.value] += 1
        if status.short_of is not None:
            self.short_of.add(status.short_of)
        if status.code is Code.UNRESOLVABLE:
            self.unresolvable.add(node)

    def failed_alike(self, status: Status, count: int, nodes: Sequence[int]) -> None:
        """`count` nodes failed a filter with `status`, as `failed` once per node; `nodes`
        lists them where the status is unresolvable (the set keeps those)."""
        self.reasons[status.reasons[0] if status.reasons else status.code.value] += count
        if status.short_of is not None:
            self.short_of.add(status.short_of)
        if status.code is Code.UNRESOLVABLE:
            assert len(nodes) == count, "the unresolvable nodes must be listed"
            self.unresolvable.update(nodes)

    def message(self) -> str:
        """kube-scheduler's FailedScheduling shape: '0/64 nodes are available: …'."""
        parts = ", ".join(f"{count} {reason}" for reason, count in sorted(self.reasons.items()))
        return f"0/{self.total_nodes} nodes are available: {parts}." if parts else (
            f"0/{self.total_nodes} nodes are available."
        )


def scan_nodes(filters: Sequence[FilterPlugin], scores: Sequence[tuple[ScorePlugin, float]], state: ClusterState,
               request: PodRequest, candidates: Sequence[int], heap: bool,
               key: Callable[[int], int] | None) -> tuple[int | None, Diagnosis]:
    """Every candidate filtered in its order and the feasible ones scored: the best node
    (ties: the heap's root when `heap`, else the least `key`, else the first) and the
    failed nodes' diagnosis (counted only when no node is feasible: nobody reads it
    otherwise)."""
    best_node, best_score, best_key, tied = None, -1.0, 0, False
    scored: list[tuple[float, int]] = []
    failures: list[tuple[int, Status]] = []
    for node in candidates:
        failed = None
        for plugin in filters:
            status = plugin.filter(state, request, node)
            if not status.ok:
                failed = status
                break
        if failed is not None:
            if best_node is None:
                failures.append((node, failed))
            continue
        score = sum(w * p.score(state, request, node) for p, w in scores) if scores else 0.0
        if heap:
            scored.append((score, node))
        if score > best_score:
            best_node, best_score, tied = node, score, False
            if key is not None:
                best_key = key(node)
        elif score == best_score:
            tied = True
            if key is not None and (node_key := key(node)) < best_key:
                best_node, best_key = node, node_key
    diagnosis = Diagnosis(total_nodes=len(state.nodes))
    if best_node is None:
        for node, failed in failures:
            diagnosis.failed(node, failed)
    elif heap and tied:
        return heap_choice(scored), diagnosis
    return best_node, diagnosis


class PartialSearch:
    """One profile's filters and weighted scores, and its percentage_of_nodes_to_score.

    `run` is the search; when the filters are GpuFit and NodeResourcesFit (in any order) and
    no GPUs are nominated, a node that surely passes both (whole free GPUs enough for a
    request of whole GPUs, any whole free GPU for a fraction, CPU and memory free) is taken
    as feasible without calling them, and a single score plugin is called directly: the
    plugins run only on the nodes that may fail. `run_plain` calls every filter on every
    node, as written upstream (and LeastAllocated / MostAllocated on GPUs are computed inline,
    with the plugins' own arithmetic); `replay --verify` compares the two
    ('partial node search with inline fit checks')."""

    def __init__(self, filters: Sequence[FilterPlugin], scores: Sequence[tuple[ScorePlugin, float]],
                 percentage: float, kernel: Kernel | None = None) -> None:
        self.filters, self.scores, self.percentage = filters, scores, percentage
        self.kernel = KERNEL if kernel is None else kernel
        kinds = [getattr(plugin, "inline_fit", "") for plugin in filters]
        self.inline = len(kinds) == 2 and set(kinds) == {"gpus", "cpu_memory"}
        # The statuses the native walk names a failed node by (GPUs short, GPUs never, CPU,
        # memory: the plugins' `inline_statuses`), and which filter fails a node first.
        self.gpu_first = bool(kinds) and kinds[0] == "gpus"
        self.inline_statuses: tuple[Status, ...] = tuple(
            status for kind in ("gpus", "cpu_memory") for plugin in filters
            if getattr(plugin, "inline_fit", "") == kind for status in getattr(plugin, "inline_statuses", ()))

    def free_whole_gpus(self, state: ClusterState) -> list[int]:
        """Whole free GPUs per node, as the inline check reads them."""
        return state.whole_free

    def run_root(self, state: ClusterState, request: PodRequest, start: int) -> tuple[int | None, Diagnosis, int]:
        """`run` for a caller that needs only the heap's root of the feasible nodes
        (`heap_choice`; None: none feasible): with the C walk, the root is kept as the walk
        finds each node, and no (score, node) pair is made."""
        root: RunningRoot = [0, 0.0, -1, -1]
        feasible, diagnosis, next_start = self.run(state, request, start, root)
        if feasible:  # the Python walk listed them
            return heap_choice(feasible), diagnosis, next_start
        return (root[3] if root[0] else None), diagnosis, next_start

    def run(self, state: ClusterState, request: PodRequest, start: int, root: RunningRoot | None = None
            ) -> tuple[list[tuple[float, int]], Diagnosis, int]:
        """(score, node) of the feasible nodes in scan order, the failed nodes' diagnosis
        (built only when no node is feasible: nobody reads it otherwise), and where the next
        search starts. With `root` the C walk (where it runs, with a finite weight) keeps
        the heap's root there instead and lists nothing (`run_root`)."""
        if not self.inline or state.nominations:
            return self.run_plain(state, request, start)
        count = len(state.nodes)
        wanted = feasible_nodes_to_find(self.percentage, count)
        feasible: list[tuple[float, int]] = []
        diagnosis = Diagnosis(total_nodes=count)
        excluded = state.candidates.excluded(request.selector)
        filters, scores = self.filters, self.scores
        single, weight = (scores[0][0], scores[0][1]) if len(scores) == 1 else (None, 0.0)
        # LeastAllocated / MostAllocated on GPUs: the same arithmetic as the plugin, inline
        allocation = getattr(single, "inline_score", "") if single is not None else ""
        used = state.used
        nodes, whole_free = state.nodes, self.free_whole_gpus(state)
        cpu_free, memory_free = state.cpu_free, state.memory_free
        models, milli, cpu, memory = request.models, request.milli, request.cpu_milli, request.memory_mib
        whole = (milli + MILLI - 1) // MILLI  # whole GPUs that surely hold the request
        failures: list[tuple[int, Status]] = []
        processed = 0
        kernel = self.kernel
        if kernel is not None and allocation:  # the walk in C: the same decisions, node by node
            processed = native_walk(kernel, self, state, request, start, wanted, feasible, diagnosis, failures,
                                    excluded, allocation == "least", weight, root if math.isfinite(weight) else None)
        else:
            for i in range(count):
                node = start + i
                if node >= count:
                    node -= count
                spec = nodes[node]
                if models and spec.gpu_model not in models:
                    diagnosis.reasons[MODEL_MISMATCH] += 1
                    processed += 1
                    continue
                if excluded and node in excluded:
                    diagnosis.reasons[excluded[node]] += 1
                    processed += 1
                    continue
                if not (whole_free[node] >= whole and (not spec.cpu_milli or cpu_free[node] >= cpu)
                        and (not spec.memory_mib or memory_free[node] >= memory)):
                    failed = None  # not surely fitting: the filters decide
                    for plugin in filters:
                        status = plugin.filter(state, request, node)
                        if not status.ok:
                            failed = status
                            break
                    if failed is not None:
                        failures.append((node, failed))
                        processed += 1
                        continue
                if len(feasible) == wanted:
                    break  # one feasible node more than wanted: the search is cancelled
                if allocation and spec.gpus:
                    fraction = (used[node] + milli) / (spec.gpus * MILLI)
                    feasible.append((weight * (100.0 * (1.0 - fraction) if allocation == "least" else 100.0 * fraction),
                                     node))
                elif single is not None:
                    feasible.append((weight * single.score(state, request, node), node))
                else:
                    feasible.append((sum(w * p.score(state, request, node) for p, w in scores), node))
                processed += 1
        if not feasible and not (root and root[0]):
            for node, failed in failures:
                diagnosis.failed(node, failed)
        return feasible, diagnosis, (start + processed) % count if count else 0

    def run_plain(self, state: ClusterState, request: PodRequest, start: int
                  ) -> tuple[list[tuple[float, int]], Diagnosis, int]:
        """`run` with every filter called on every node."""
        count = len(state.nodes)
        wanted = feasible_nodes_to_find(self.percentage, count)
        feasible: list[tuple[float, int]] = []
        diagnosis = Diagnosis(total_nodes=count)
        excluded = state.candidates.excluded(request.selector)
        filters, scores = self.filters, self.scores
        processed = 0
        for i in range(count):
            node = start + i
            if node >= count:
                node -= count
            if request.models and state.nodes[node].gpu_model not in request.models:
                diagnosis.reasons[MODEL_MISMATCH] += 1
                processed += 1
                continue
            if excluded and node in excluded:
                diagnosis.reasons[excluded[node]] += 1
                processed += 1
                continue
            failed = None
            for plugin in filters:
                status = plugin.filter(state, request, node)
                if not status.ok:
                    failed = status
                    break
            if failed is not None:
                diagnosis.failed(node, failed)
                processed += 1
                continue
            if len(feasible) == wanted:
                break  # one feasible node more than wanted: the search is cancelled
            feasible.append((sum(w * p.score(state, request, node) for p, w in scores), node))
            processed += 1
        return feasible, diagnosis, (start + processed) % count if count else 0


def run_listed(search: PartialSearch, state: ClusterState, request: PodRequest, listed: array[int]
               ) -> tuple[int | None, Diagnosis] | None:
    """`scan_nodes` over a node list under the heap's tie order, walked in C: the heap's
    root of the feasible nodes of `listed` (ascending, every one of an accepted GPU model
    and admitted by the request's selector: `NodeArrays.listed_nodes`) and, when none is
    feasible, the diagnosis of them all. The walk visits the list from its first node and
    is never cancelled (asked for one feasible node more than the list holds); nodes off
    the list are not counted. None where the C walk does not run (the caller scans)."""
    kernel = search.kernel
    if kernel is None or not search.inline or state.nominations or len(search.scores) != 1:
        return None
    single, weight = search.scores[0]
    allocation = getattr(single, "inline_score", "")
    if not allocation or not math.isfinite(weight):
        return None
    root: RunningRoot = [0, 0.0, -1, -1]
    feasible: list[tuple[float, int]] = []
    diagnosis = Diagnosis(total_nodes=len(state.nodes))
    failures: list[tuple[int, Status]] = []
    native_walk(kernel, search, state, request, 0, len(listed) + 1, feasible, diagnosis, failures, {},
                allocation == "least", weight, root, listed)
    if not root[0]:
        for node, failed in failures:
            diagnosis.failed(node, failed)
    return (root[3] if root[0] else None), diagnosis


def native_walk(kernel: Kernel, search: PartialSearch, state: ClusterState, request: PodRequest, start: int,
                wanted: int, feasible: list[tuple[float, int]], diagnosis: Diagnosis,
                failures: list[tuple[int, Status]], excluded: Mapping[int, str], least: bool, weight: float,
                root: RunningRoot | None = None, listed: array[int] | None = None) -> int:
    """`PartialSearch.run`'s walk with the kernel owning the loop: it hands back each node
    that needs the filters (or is excluded, or that it cannot score exactly), resolved here as
    the Python walk does; returns the nodes processed. The kernel visits only the nodes of
    the accepted GPU models (`NodeArrays.accepted_nodes`) and counts the nodes of other models
    it walks past as mismatched, as this walk counts them one by one.
    Where every filter decides as the inline check does (`fails_inline`; no DRA), the kernel
    decides every node (a fraction by the shared devices' free milli-GPUs) and names the
    status of the first filter that fails a node by its kind (`inline_statuses`): a search
    that finds nothing adds the kinds' counts to the diagnosis, without a call per failed
    node (the reasons' counts, `short_of` and the unresolvable nodes `failed` would give).
    With `root`, the feasible nodes are folded into it (`fold_root`, by the kernel as it goes)
    instead of listed. With `listed` (`run_listed`) the kernel visits those nodes
    instead of the accepted models' and nothing it walks past is counted."""
    count, nodes, arrays, filters = len(state.nodes), state.nodes, state.node_arrays, search.filters
    whole_free, cpu_free, memory_free, used = search.free_whole_gpus(state), state.cpu_free, state.memory_free, state.used
    flat = state.flat  # what the kernel reads of whole_free, cpu_free, memory_free and used
    milli, cpu, memory = request.milli, request.cpu_milli, request.memory_mib
    whole = (milli + MILLI - 1) // MILLI
    accepted = arrays.accepted_nodes(request.models) if listed is None else listed  # the kernel visits only these
    single = search.scores[0][0]
    plain_filters = (state.dra is None and len(search.inline_statuses) == 4
                     and all(getattr(plugin, "fails_inline", False) for plugin in filters))
    failed_kinds = [0, 0, 0, 0]  # nodes the kernel failed, by kind (native_walk.c's FAILED_*)
    never: list[int] = []  # the nodes it failed as unresolvable
    i = processed = 0
    while True:
        i, processed, mismatched, at_node, kinds = kernel(
            feasible, flat.whole_free, flat.cpu_free, flat.memory_free, flat.used, arrays.gpus, arrays.has_cpu,
            arrays.has_memory, accepted, excluded if excluded else None, start, count, i, processed, wanted,
            whole, cpu, memory, milli, least, weight, never, plain_filters, state.shared_free, root, search.gpu_first)
        if mismatched and listed is None:
            diagnosis.reasons[MODEL_MISMATCH] += mismatched
        for kind, failed_count in enumerate(kinds):
            failed_kinds[kind] += failed_count
        found = len(feasible) if root is None else root[0]
        if not at_node:
            if not found:  # the diagnosis is read: the kinds' statuses
                for status, failed_count in zip(search.inline_statuses, failed_kinds, strict=True):
                    if failed_count:
                        diagnosis.failed_alike(status, failed_count, never)
            return processed
        node = start + i
        if node >= count:
            node -= count
        i += 1
        processed += 1  # undone below where the search is cancelled at this node
        if excluded and node in excluded:
            diagnosis.reasons[excluded[node]] += 1
            continue
        spec = nodes[node]
        if not (whole_free[node] >= whole and (not spec.cpu_milli or cpu_free[node] >= cpu)
                and (not spec.memory_mib or memory_free[node] >= memory)):
            failed = None
            for plugin in filters:
                status = plugin.filter(state, request, node)
                if not status.ok:
                    failed = status
                    break
            if failed is not None:
                failures.append((node, failed))
                continue
        if found == wanted:
            return processed - 1  # one feasible node more than wanted: the search is cancelled
        if spec.gpus:
            fraction = (used[node] + milli) / (spec.gpus * MILLI)
            score = weight * (100.0 * (1.0 - fraction) if least else 100.0 * fraction)
        else:
            score = weight * single.score(state, request, node)
        if root is None:
            feasible.append((score, node))
        else:
            fold_root(root, score, node)


def fold_root(root: RunningRoot, score: float, node: int) -> None:
    """A feasible node of `score` found at the next position, folded into the running root
    (`heap_choice`'s rule as the nodes come: the best score, then the least pre-order rank;
    the kernel's `fold_root`)."""
    position = root[0]
    root[0] = position + 1
    if position == 0 or score > root[1] or (
            score == root[1] and preorder_rank(position, ROOT_DEPTH) < preorder_rank(root[2], ROOT_DEPTH)):
        root[1], root[2], root[3] = score, position, node


def feasible_nodes_to_find(percentage: float, nodes: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind (0 %: the adaptive default)."""
    if nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return nodes
    if percentage == 0:
        percentage = float(max(50 - nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND))  # exact: small integers
    return max(int(nodes * percentage // 100), MIN_FEASIBLE_NODES_TO_FIND)
