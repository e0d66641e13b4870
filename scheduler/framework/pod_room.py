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
and the pod asks for whole GPUs, the plan's outcome is counted:

- A node's free GPUs hold ⌊whole free ÷ whole⌋ pods. Where its free CPU and memory hold at
  least as many (`gpus_run_out_first`), a pod placed there takes exactly one of them, whichever
  node the search picks; so the plan places pods until the nodes' GPUs hold none: the sum
  over the nodes of the request's models (`GpuRoom.pods_by_gpus`), when that is below
  `needed` and the group has at least `needed` pods pending (else the plan stops earlier).
- The pod after them finds no node with the GPUs: its search is settled by the per-model
  counts (`no_fit.settled_by_room`), whose diagnosis reads nothing of free counts
  (`index_diagnosis`, no node visited), so it is the same on the state before the plan.
- A search stops early only at one feasible node more than numFeasibleNodesToFind: with no
  more nodes with room than that, every search of the plan processes every node, and the
  start stays where it was (it moves by the nodes processed: all of them).

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
    if (milli < MILLI or milli % MILLI or pending < needed or state.dra is not None or state.nominations
            or not search.inline or not search.gpu_first or state.candidates.excluded(request.selector)):
        return None
    whole = milli // MILLI
    nodes, pods = state.room.pods_by_gpus(request.models, whole)
    if pods >= needed or nodes > feasible_nodes_to_find(search.percentage, len(state.nodes)):
        return None
    if pods and (request.cpu_milli or request.memory_mib) and not _gpus_run_out_first(state, request, whole):
        return None
    return pods, (index_diagnosis(state, request, []) if explain else None)


def _gpus_run_out_first(state: ClusterState, request: PodRequest, whole: int) -> bool:
    arrays, flat = state.node_arrays, state.flat
    accepted = arrays.accepted_nodes(request.models)
    kernel = ROOM_KERNEL
    if kernel is not None:
        return kernel(flat.whole_free, flat.cpu_free, flat.memory_free, arrays.has_cpu, arrays.has_memory,
                      accepted, len(state.nodes), whole, request.cpu_milli, request.memory_mib)
    return gpus_run_out_first(state, range(len(state.nodes)) if accepted is None else accepted, whole,
                              request.cpu_milli, request.memory_mib)


def gpus_run_out_first(state: ClusterState, nodes: Sequence[int], whole: int, cpu: int, memory: int) -> bool:
    """Whether each of `nodes` whose free GPUs hold pods of `whole` GPUs has the free CPU and
    memory for as many of them (a node with no CPU or memory capacity does not model it)."""
    for node in nodes:
        pods = state.whole_free[node] // whole
        if not pods:
            continue
        spec = state.nodes[node]
        if cpu and spec.cpu_milli and state.cpu_free[node] // cpu < pods:
            return False
        if memory and spec.memory_mib and state.memory_free[node] // memory < pods:
            return False
    return True
