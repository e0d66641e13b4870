"""The node walk alone: `PartialSearch.run` with the C kernel (`scheduler/framework/native_walk.c`)
and without it, on the same searches, then the heap's root of each search's feasible list
(`heap_choice` with the C `heap_root` and the Python rule); apart from `make bench`: a
micro-benchmark of the kernels.

    python -m benchmarks.native_walk [--nodes 2000] [--searches 3000] [--fill 0.5,0.9]

A cluster of `--nodes` 8-GPU nodes of two GPU models with CPU and memory modelled is filled to
each `--fill` share of its GPUs by random pods of 1, 2, 4 or 8 GPUs; then `--searches`
random searches (half a GPU or 1-8 GPUs, a model or any, a rotating start) run once per walk,
CPU time measured per walk. Printed per fill and walk: µs per search, ns per node visited (the nodes
the search processed, as the rotating start counts them) and the share of visited nodes the
kernel handed back to Python (nodes not surely fitting: the filters decide). The walks'
answers are compared (the same feasible lists and next starts) before any time is printed;
then µs per root over the searches' feasible lists, with the mean tied best entries (the
roots compared first), and µs per search with its root kept during the C walk (`run_root`).

Run under another checkout's build (its compiled modules, without the kernel) to measure the
mypyc walk: `PYTHONPATH=OTHER python benchmarks/native_walk.py --label mypyc`.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from scheduler.framework import node_heap, node_search
from scheduler.framework.node_search import PartialSearch
from scheduler.model import Cluster, Node
from scheduler.plugins.gpu_fit import GpuFit, NodeResourcesFit
from scheduler.plugins.scoring import LeastAllocated
from scheduler.state.cluster_state import ClusterState, PodRequest

MODELS = ("A100", "H100")


def filled_state(nodes: int, fill: float, seed: int) -> ClusterState:
    """`nodes` 8-GPU nodes, `fill` of their GPUs taken by random pods that fit."""
    rng = random.Random(seed)
    cluster = Cluster(tuple(Node(f"n{i}", MODELS[i % 2], 8, cpu_milli=128_000, memory_mib=1_048_576)
                            for i in range(nodes)))
    state = ClusterState(cluster)
    target, taken, pod = int(nodes * 8 * fill), 0, 0
    fits = (GpuFit(), NodeResourcesFit())
    while taken < target:
        gpus = rng.choice((1, 2, 4, 8))
        request = PodRequest(gpus * 1000, cpu_milli=gpus * 8000, memory_mib=gpus * 65536)
        node = rng.randrange(nodes)
        if all(f.filter(state, request, node).ok for f in fits):
            state.allocate((f"w{pod}", 0), node, request)
            taken += gpus
        pod += 1
    return state


def searches(count: int, nodes: int, seed: int) -> list[tuple[PodRequest, int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        milli = rng.choice((500, 1000, 1000, 2000, 4000, 8000))  # a fraction: full nodes go back to Python
        models = rng.choice(((), ("A100",), ("H100",)))
        out.append((PodRequest(milli, cpu_milli=milli * 8, memory_mib=milli * 64, models=models),
                    rng.randrange(nodes)))
    return out


def timed(search: PartialSearch, state: ClusterState, calls: list[tuple[PodRequest, int]]) -> tuple[float, int]:
    """CPU seconds for every call, and the nodes visited (answers not kept while timed: a
    list of every search's feasible nodes would make the collector's work part of the time)."""
    count = len(state.nodes)
    visited = 0
    began = time.process_time()
    for request, start in calls:
        next_start = search.run(state, request, start)[2]
        visited += (next_start - start) % count or count
    return time.process_time() - began, visited


def timed_roots(search: PartialSearch, state: ClusterState, calls: list[tuple[PodRequest, int]]
                ) -> tuple[float, list[int | None]]:
    """CPU seconds for every call of `run_root` (the root kept during the walk), and the roots."""
    roots = []
    began = time.process_time()
    for request, start in calls:
        roots.append(search.run_root(state, request, start)[0])
    return time.process_time() - began, roots


def answers(search: PartialSearch, state: ClusterState, calls: list[tuple[PodRequest, int]]
            ) -> list[tuple[list[tuple[float, int]], int]]:
    return [(feasible, next_start) for feasible, _, next_start in (search.run(state, r, s) for r, s in calls)]


def handed_back(state: ClusterState, calls: list[tuple[PodRequest, int]], search: PartialSearch) -> int:
    """Nodes the kernel hands back to Python over these calls (counted by wrapping it)."""
    kernel = search.kernel
    counted = [0]

    def counting(*args: object) -> tuple[int, int, int, bool, tuple[int, int, int, int]]:
        answer = kernel(*args)
        counted[0] += answer[3]
        return answer

    search.kernel = counting
    for request, start in calls:
        search.run(state, request, start)
    search.kernel = kernel
    return counted[0]


def time_roots(feasible_lists: list[list[tuple[float, int]]], label: str, fill: float) -> None:
    """µs per heap root over the lists, with the C root where loaded and the Python rule."""
    lists = [scored for scored in feasible_lists if scored]
    roots: list[tuple[str, Callable[[list[tuple[float, int]]], int | None]]] = []
    if node_heap.HEAP_ROOT is not None:
        roots.append(("C heap_root", node_heap.HEAP_ROOT))
    roots.append((label, node_heap.python_heap_choice))
    expected = [node_heap.SortedScoredNodes(scored).peek() for scored in lists]
    tied = sum(sum(1 for score, _ in scored if score == max(s for s, _ in scored)) for scored in lists) / len(lists)
    for name, root in roots:
        if [root(scored) for scored in lists] != expected:
            raise SystemExit(f"{name} disagrees with the heap: the root is wrong")
        began = time.process_time()
        for scored in lists:
            root(scored)
        spent = time.process_time() - began
        print(f"fill {fill:.0%}  {name:<18} {spent / len(lists) * 1e6:8.1f} µs/root  "
              f"({sum(map(len, lists)) / len(lists):.0f} entries, {tied:.0f} tied best)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=3000)
    parser.add_argument("--fill", default="0.5,0.9", help="shares of the GPUs taken (comma list)")
    parser.add_argument("--label", default="", help="what the walk without the kernel is (pure, mypyc)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    kernel = getattr(node_search, "KERNEL", None)
    plain_label = args.label or ("pure Python" if str(node_search.__file__).endswith(".py") else "mypyc")
    print(f"nodes={args.nodes} searches={args.searches} kernel={'built' if kernel else 'absent'}")
    for fill in (float(share) for share in args.fill.split(",")):
        state = filled_state(args.nodes, fill, args.seed)
        calls = searches(args.searches, args.nodes, args.seed + 1)
        search = PartialSearch([GpuFit(), NodeResourcesFit()], [(LeastAllocated(), 1.0)], 0)
        walks: list[tuple[str, object]] = []
        if kernel is not None:
            walks.append(("C kernel", kernel))
        walks.append((plain_label, None))
        expected: list[tuple[list[tuple[float, int]], int]] = []
        for label, walk in walks:
            if hasattr(search, "kernel"):
                search.kernel = walk
            found = answers(search, state, calls)  # also the warm-up
            if expected and found != expected:
                raise SystemExit("the walks disagree: the kernel is wrong")
            expected = found
            spent, visited = timed(search, state, calls)
            back = ""
            if walk is not None:
                back = f"  handed back {handed_back(state, calls, search) / visited:.1%} of visited nodes"
            print(f"fill {fill:.0%}  {label:<18} {spent / len(calls) * 1e6:8.1f} µs/search  "
                  f"{spent / visited * 1e9:7.1f} ns/node visited  ({visited / len(calls):.0f} nodes/search){back}")
        time_roots([feasible for feasible, _ in expected], plain_label, fill)
        if kernel is not None:  # the search and its root in one: the walk keeps the root
            search.kernel = kernel
            spent, kept = timed_roots(search, state, calls)
            if kept != [node_heap.heap_choice(feasible) if feasible else None for feasible, _ in expected]:
                raise SystemExit("the root kept during the walk disagrees with the listed search's")
            print(f"fill {fill:.0%}  {'C walk, root kept':<18} {spent / len(calls) * 1e6:8.1f} µs/search with its root")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
