"""Node searches that find nothing, settled from the usage index instead of walked.

When no node passes the filters, kube-scheduler's search from the rotating start
(`node_search.PartialSearch`) processes every node of the cluster, asks each one's filters
why it fails, and leaves the start where it was (it moves by the nodes processed: all of
them). On a cluster of 10,000 nodes that is the costliest search there is, and a gang that
does not fit makes one per attempt, its diagnosis a filter call per node.

GpuFit fails every node whose free milli-GPUs are fewer than the request (a whole-GPU
request needs that many whole free devices, a fraction one device with that much free;
either is at most the node's free milli-GPUs, fewer still with GPUs nominated to others).
The usage index (`state/usage_index.py`) lists, per (GPU model, GPU count), the nodes with
enough free milli-GPUs. When GpuFit is the profile's first filter, the nodes it does not list
fail GpuFit first, and that status is all a diagnosis reads of them; the listed ones are
filtered here, and when none passes the search is settled: nothing feasible, the diagnosis
counted as `index_diagnosis` counts it, the start unmoved. When one passes, the search runs
as it always does, having cost one filter call here (the least used node is tried first).

Before the usage index is asked, the per-model counts of whole free GPUs and of shared
devices' free shares (`state/gpu_room.py`, kept on every change at a few dict updates) may
already say that no node of the request's models has the room GpuFit needs
(`settled_by_room`): the search is settled with no node visited. This runs on every search
from the rotating start, the heap's root (`PartialSearch.run_root`, every shipped profile)
included, where the usage index is not asked: keeping it on every allocation costs more than
the failing walks it saves there.

`replay --verify` runs the search beside every settled one ("failing node search settled by
the usage index", "failing node search settled by free GPUs per model": the same empty list,
diagnosis and next start; for the latter also the counts against a recount of the state).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework.index_walk import first_failure
from scheduler.framework.interface import FilterPlugin
from scheduler.framework.node_search import MODEL_MISMATCH, Diagnosis
from scheduler.framework.status import Resource, Status
from scheduler.state.cluster_state import ClusterState, PodRequest

INSUFFICIENT_GPU = "Insufficient nvidia.com/gpu"
NO_FIT_CHECK = "failing node search settled by the usage index"
ROOM_CHECK = "failing node search settled by free GPUs per model"


def settles(filters: Sequence[FilterPlugin], state: ClusterState, request: PodRequest) -> bool:
    """Whether `settled_no_fit` may answer for this search: the first filter is the plain
    GpuFit (decided by GPU counts; DRA devices are not in the usage index) and the pod
    asks for GPUs."""
    return (bool(request.milli) and state.dra is None and bool(filters)
            and getattr(filters[0], "inline_fit", "") == "gpus")


def settled_by_room(state: ClusterState, request: PodRequest) -> Diagnosis | None:
    """The diagnosis of a search in which no node can pass GpuFit, from the per-model counts
    of whole free GPUs and shared devices' free shares (`state/gpu_room.py`), or None when
    some node of an accepted model has the room (the search decides). Only where `settles`
    says so: then every candidate fails GpuFit first, and a diagnosis reads nothing else of
    it, so the diagnosis is `index_diagnosis` with no node visited."""
    if not state.room.none_fits(request.models, request.milli):
        return None
    return index_diagnosis(state, request, [])


def settled_no_fit(filters: Sequence[FilterPlugin], state: ClusterState, request: PodRequest) -> Diagnosis | None:
    """The diagnosis of a search in which no node is feasible, or None when some node may
    be (the search decides). Only where `settles` says so."""
    excluded = state.candidates.excluded(request.selector)
    failures: list[tuple[int, Status]] = []
    for usage in state.usage_index.classes_for(request.models):
        for node in usage.in_order(request.milli, False):  # least used first: the likeliest to pass
            if excluded and node in excluded:
                continue  # NodeAffinity / TaintToleration: counted by the selector's reason
            failed = first_failure(filters, state, request, node)
            if failed is None:
                return None
            failures.append((node, failed))
    return index_diagnosis(state, request, failures)


def index_diagnosis(state: ClusterState, request: PodRequest, visited_failures: list[tuple[int, Status]]) -> Diagnosis:
    """Nothing fits. Nodes the usage index did not list lack the GPUs (their used level
    is too high); the listed ones failed a filter each. Count them as a full scan would,
    from counts kept per (models, selector) (`NodeCandidates`): this runs for every pod that
    fits nowhere, and costs the visited nodes and the nodes too small for the pod, not the
    cluster. `replay --verify` compares it with a scan ("node chosen through the usage
    index", "failing node search settled by the usage index")."""
    diagnosis = Diagnosis(total_nodes=len(state.nodes))
    for node, failed in visited_failures:
        diagnosis.failed(node, failed)
    visited = {node for node, _ in visited_failures}
    kept = state.candidates
    candidates = kept.candidate_set(request.models, request.selector)
    unvisited = len(candidates) - sum(1 for node in visited if node in candidates)
    if unvisited:  # counted, not walked
        diagnosis.reasons[INSUFFICIENT_GPU] += unvisited
        diagnosis.short_of.add(Resource.GPU)
    if request.milli > kept.fewest_gpus * 1000:  # only then can a node be too small for the pod
        for node in kept.smaller_than(request.models, request.selector, request.milli):
            if node not in visited:
                diagnosis.unresolvable.add(node)
    mismatched = len(state.nodes) - kept.model_node_count(request.models)
    if mismatched:
        diagnosis.reasons[MODEL_MISMATCH] += mismatched
    for reason, count in kept.excluded_counts(request.models, request.selector).items():
        diagnosis.reasons[reason] += count
    return diagnosis
