"""A group plan that cannot succeed, counted instead of searched.

A pod group is planned pod by pod on a what-if of the live state (`cycle/planning.py`): a node
search from the rotating start for each pod, its allocation, and a rollback at the end. When
the group cannot get `needed` pods, all the plan leaves behind is how many pods it placed
before the first one failed, that pod's diagnosis and where the next search starts; its
searches, allocations and rollback are thrown away. On a full cluster most plans are of this
kind (a gang that waits for GPUs tries again after each release of its model), and each
of their successful searches walks every node.

Where the filters are the plain GpuFit (first) and NodeResourcesFit (their inline checks,
`PartialSearch.inline`), no DRA, no GPUs nominated, no node excluded by the pod's selector,
and the pod asks for whole GPUs or a fraction of one, the plan's outcome is counted:

- A node's free GPUs hold ⌊whole free ÷ GPUs per pod⌋ pods; for a fraction, ⌊1000 ÷ milli⌋ per
  whole free GPU plus each shared device's free share over the fraction (a slice goes to one
  device, any device holds its own count whichever device the pods before took). Where the
  node's free CPU and memory hold at least as many (`gpus_run_out_first`), a pod placed there
  takes exactly one of them, whichever node the search picks; so the plan places pods until
  the GPUs hold none: the sum over the nodes of the request's models (`GpuRoom.pods_by_gpus`,
  from the per-model counts of whole free GPUs and shared devices' free shares), when that is
  below `needed` and the group has at least `needed` pods pending (else the plan stops earlier).
- The pod after them finds no node with the GPUs: its search is settled by the per-model
  counts (`no_fit.settled_by_room`), whose diagnosis reads nothing of free counts
  (`index_diagnosis`, no node visited), so it is the same on the state before the plan.
- A search stops early only at one feasible node more than numFeasibleNodesToFind: with no
  more places with room than that (nodes, or for a fraction nodes with a whole free GPU and
  shared devices with the share: at least the nodes), every search of the plan processes
  every node, and the start stays where it was (it moves by the nodes processed: all of them).

A slice of a fresh device takes the node's next device id, which a plan's rollback does not
give back: a counted plan leaves later devices lower ids, in the same order (ids only break
ties between devices of one node, and a newer device has a higher id either way).

`replay --verify` runs the plan beside every counted one ("failing group plan counted from
free GPUs": the same pods placed, start and diagnosis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduler.framework.no_fit import index_diagnosis
from scheduler.framework.node_search import Diagnosis, PartialSearch, feasible_nodes_to_find
from scheduler.model.workload import MILLI
from scheduler.state.cluster_state import ClusterState, PodRequest

PLAN_COUNT_CHECK = "failing group plan counted from free GPUs"

RoomKernel = Callable[..., bool]  # native_walk.gpus_run_out_first (native_walk.pyi)


def load_room_kernel() -> RoomKernel | None:
    """`gpus_run_out_first` in C where the build has it (as `node_search.load_kernel`)."""
    try:
        from scheduler.framework.native_walk import gpus_run_out_first as kernel
    except ImportError:
        return None
    return kernel


ROOM_KERNEL = load_room_kernel()  # read by each count (a test swaps it)


def failing_plan(search: PartialSearch, state: ClusterState, request: PodRequest, pending: int, needed: int,
                 explain: bool) -> tuple[int, Diagnosis | None] | None:
    """(pods placed, the first failure's diagnosis when `explain`) of a plan of `pending` pods
    of `request` that cannot place `needed` of them, counted; None where the plan decides
    (it may succeed, or the count would not be exact: the conditions above)."""
    milli = request.milli
    if (milli <= 0 or (milli >= MILLI and milli % MILLI) or pending < needed or state.dra is not None
            or state.nominations or not search.inline or not search.gpu_first
            or state.candidates.excluded(request.selector)):
        return None
    places, pods = state.room.pods_by_gpus(request.models, milli)
    if pods >= needed or places > feasible_nodes_to_find(search.percentage, len(state.nodes)):
        return None
    if pods and (request.cpu_milli or request.memory_mib) and not _gpus_run_out_first(state, request):
        return None
    return pods, (index_diagnosis(state, request, []) if explain else None)


def _gpus_run_out_first(state: ClusterState, request: PodRequest) -> bool:
    arrays, flat = state.node_arrays, state.flat
    accepted = arrays.accepted_nodes(request.models)
    kernel = ROOM_KERNEL
    if kernel is not None:
        return kernel(flat.whole_free, flat.cpu_free, flat.memory_free, arrays.has_cpu, arrays.has_memory,
                      accepted, len(state.nodes), request.milli, request.cpu_milli, request.memory_mib,
                      state.shared_free)
    return gpus_run_out_first(state, range(len(state.nodes)) if accepted is None else accepted, request.milli,
                              request.cpu_milli, request.memory_mib)


def gpus_by_node(state: ClusterState, node: int, milli: int) -> int:
    """The pods of `milli` milli-GPUs (whole GPUs, or a fraction below 1000) the free GPUs of
    `node` hold: whole free GPUs, and for a fraction each shared device's free share too."""
    if milli >= MILLI:
        return state.whole_free[node] // (milli // MILLI)
    return state.whole_free[node] * (MILLI // milli) + sum(free // milli for free in state.shared_free[node].values())


def gpus_run_out_first(state: ClusterState, nodes: Sequence[int], milli: int, cpu: int, memory: int) -> bool:
    """Whether each of `nodes` whose free GPUs hold pods of `milli` milli-GPUs has the free CPU
    and memory for as many of them (a node with no CPU or memory capacity does not model it)."""
    for node in nodes:
        pods = gpus_by_node(state, node, milli)
        if not pods:
            continue
        spec = state.nodes[node]
        if cpu and spec.cpu_milli and state.cpu_free[node] // cpu < pods:
            return False
        if memory and spec.memory_mib and state.memory_free[node] // memory < pods:
            return False
    return True
