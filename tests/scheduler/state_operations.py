"""Random operation sequences on a `ClusterState` for the fuzz tests of what the state keeps
beside its lists (the native walk's int64 arrays, the per-model GPU room): allocations where
the pod fits, releases, what-ifs opened and rolled back or committed, reprieves, nominations."""

from __future__ import annotations

from scheduler.plugins.gpu_fit import GpuFit, NodeResourcesFit
from scheduler.state.cluster_state import ClusterState, PodRequest

Operation = tuple[int, PodRequest, str]  # (a random pick, a pod, what to do around it)


def fits(state: ClusterState, request: PodRequest, node: int) -> bool:
    return all(plugin.filter(state, request, node).ok for plugin in (GpuFit(), NodeResourcesFit()))


def operate(state: ClusterState, operations: list[Operation]) -> list[int]:
    """Allocate each pod where it fits, else release a pod; the scope opens a what-if (`open`),
    ends the innermost (`rollback`, `commit`), puts a released victim back (`reprieve`), or
    nominates / drops a nomination. Returns the marks of the what-ifs still open."""
    count = len(state.nodes)
    marks: list[int] = []
    for step, (pick, pod, scope) in enumerate(operations):
        if scope == "open":
            marks.append(state.mark())
        elif scope in ("rollback", "commit") and marks:
            (state.rollback if scope == "rollback" else state.commit)(marks.pop())
        elif scope == "reprieve" and state.holdings:  # a preemption what-if puts a victim back
            key = sorted(state.holdings)[pick % len(state.holdings)]
            state.restore(key, state.release(key))
        elif scope == "nominate":
            state.nominate((f"p{step}", 0), 20, [(pick % count, pod.milli)], [(0, pick % count)])
        elif scope == "unnominate":
            state.drop_nominations(f"p{pick % max(step, 1)}")
        node = pick % count
        if fits(state, pod, node):
            state.allocate((f"w{step}", 0), node, pod)
        elif state.holdings:
            state.release(sorted(state.holdings)[pick % len(state.holdings)])
    return marks
