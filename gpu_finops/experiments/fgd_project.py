"""The FGD study under the project's earlier rules (``--rules project``), on the
scheduler's own pieces.

1. Resample the pod list with replacement (seeded) until the requested GPUs reach
   ``target_share`` of the cluster's GPU capacity, then shuffle (`fgd_workload`).
2. Place the pods one by one on an initially empty cluster, with no departures and no
   retries: `Framework.find_node` (filters GpuFit + NodeResourcesFit, one score plugin per
   policy, the replay's float scores) on a `ClusterState`. A pod that fits nowhere stays
   unplaced.
3. After each pod, record the arrived demand, the allocated GPUs and the cluster
   fragmentation F(M) for the target workload M (`scheduler.plugins.fgd`); the report is
   the artifact's (`fgd_report`).

Policies: Random, DotProd, GpuClustering, GpuPacking, BestFit (= MostAllocated), FGD.
docs/traces.md lists where these rules differ from the artifact's and what each changes.

Speed: nodes in the same state (spec, free CPU and memory, sorted free GPU shares, GPU
request classes on it) are interchangeable for every filter and score, so the framework
scores one representative per state (its lowest node index). For the deterministic
scores this picks exactly the node a scan of every node would (ties go to the lowest
index); Random draws a feasible node uniformly, by state weighted by its node count.
With ``tie_break="random"`` the candidates come in a weighted random order instead, so a
tie goes to a node drawn uniformly among the tied ones, as kube-scheduler breaks ties.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Sequence

from gpu_finops.experiments.fgd_report import PodSamples, PolicyResult, discrete_report
from gpu_finops.experiments.fgd_workload import Arrival
from scheduler.framework.interface import Unit
from scheduler.framework.profile import Profile, TieBreak
from scheduler.framework.runtime import Framework
from scheduler.model import Cluster
from scheduler.model.workload import MILLI
from scheduler.plugins import names
from scheduler.plugins.fgd import FragmentationMeasure, TargetWorkload
from scheduler.plugins.packing import node_classes
from scheduler.state.cluster_state import ClusterState, Holding, PodRequest, free_shares

POLICIES: dict[str, str] = {
    "Random": names.RANDOM_SCORE,
    "DotProd": names.DOT_PROD,
    "GpuClustering": names.GPU_CLUSTERING,
    "GpuPacking": names.GPU_PACKING,
    "BestFit": names.MOST_ALLOCATED,
    "FGD": names.FGD,
}
# How a score tie between nodes is broken: the scheduler's own rule (the lowest node
# index, deterministic), or kube-scheduler's selectHost (a tied node drawn uniformly).
TIE_BREAKS = ("lowest-index", "random")


def policy_profile(policy: str, workload: TargetWorkload) -> Profile:
    """A pod-by-pod profile with the policy's score plugin (FGD gets the target workload)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
    plugin = POLICIES[policy]
    args = {}
    if plugin == names.FGD:
        args[plugin] = {
            "tasks": [
                {"cpu_milli": t.cpu_milli, "gpus": t.gpus, "gpu_milli": t.gpu_milli, "models": list(t.models), "weight": p}
                for t, p in workload.types
            ]
        }
    # The candidates come in the artifact's order (or its weighted random one): the first best wins.
    return Profile(name=f"fgd-experiment-{policy}", unit=Unit.POD, scores=((plugin, 1.0),), plugin_args=args,
                   tie_break=TieBreak.LOWEST_INDEX)


# --------------------------------------------------------------------------- placement


GpuShape = tuple[str, int, tuple[int, ...]]  # (GPU model, GPU count, sorted free shares)
# (CPU capacity, memory capacity, free CPU, free memory, GPU request classes on the node)
GroupKey = tuple[int, int, int, int, frozenset[str]]


# What each policy's score reads of a node besides its GPU shape (model, GPU count, sorted
# free shares): nodes of one shape that agree on it score the same. Indices into the
# group key (cpu capacity, memory capacity, free cpu, free memory, GPU request classes).
_SCORE_READS: dict[str, tuple[int, ...]] = {
    "Random": (),
    "BestFit": (),
    "GpuPacking": (),
    "GpuClustering": (4,),
    "DotProd": (0, 2),
    "FGD": (0, 2),
}


class _StateClasses:
    """Nodes grouped by everything a filter or score reads, members sorted by index.

    Groups sit under their GPU shape, so a request skips every group whose GPUs cannot
    hold it with one check per shape. Groups whose free CPU or memory is short are skipped
    too (the framework's filters still run on every candidate passed on). Of the groups
    left, those a policy's score cannot tell apart (`_SCORE_READS`) give one candidate:
    their lowest node index, the one a full scan would keep on a tie."""

    def __init__(self, state: ClusterState, policy: str) -> None:
        self.state = state
        self.score_reads = _SCORE_READS[policy]
        self.by_shape: dict[GpuShape, dict[GroupKey, list[int]]] = {}
        self.key_of: list[tuple[GpuShape, GroupKey]] = []
        for node in range(len(state.nodes)):
            shape, rest = self._key(node)
            self.key_of.append((shape, rest))
            self.by_shape.setdefault(shape, {}).setdefault(rest, []).append(node)

    def _key(self, node: int) -> tuple[GpuShape, GroupKey]:
        state, spec = self.state, self.state.nodes[node]
        shape = (spec.gpu_model, spec.gpus, free_shares(state, node))
        rest = (spec.cpu_milli, spec.memory_mib, state.cpu_free[node], state.memory_free[node],
                node_classes(state, node))
        return shape, rest

    def members(self, node: int) -> list[int]:
        shape, rest = self.key_of[node]
        return self.by_shape[shape][rest]

    def feasible_groups(self, request: PodRequest) -> list[tuple[GpuShape, GroupKey, list[int]]]:
        """Every group whose GPUs, CPU and memory can hold ``request``."""
        found = []
        milli, cpu, memory, models = request.milli, request.cpu_milli, request.memory_mib, request.models
        for shape, groups in self.by_shape.items():
            model, _, free = shape
            if models and model not in models:
                continue
            if milli >= MILLI:
                whole = milli // MILLI
                if len(free) < whole or free[-whole] < MILLI:
                    continue
            elif milli and (not free or free[-1] < milli):
                continue
            for rest, group in groups.items():
                cpu_cap, memory_cap, cpu_free, memory_free, _ = rest
                if (not cpu_cap or cpu_free >= cpu) and (not memory_cap or memory_free >= memory):
                    found.append((shape, rest, group))
        return found

    def representatives(self, request: PodRequest, rng: random.Random | None) -> list[int]:
        """One candidate per set of groups the policy's score cannot tell apart.

        Without ``rng`` they come in node order, so a tie goes to the lowest index. With
        ``rng`` they come in a weighted random order (key u^(1/size), largest first:
        Efraimidis-Spirakis), so among tied candidates each is first with probability
        proportional to its node count: a tie goes to a node drawn uniformly, as
        kube-scheduler's selectHost does."""
        reads = self.score_reads
        best: dict[tuple[object, ...], list[int]] = {}  # score key → [lowest index, nodes]
        for shape, rest, group in self.feasible_groups(request):
            key = (shape, *(rest[i] for i in reads))
            found = best.get(key)
            if found is None:
                best[key] = [group[0], len(group)]
            else:
                found[0] = min(found[0], group[0])
                found[1] += len(group)
        if rng is None:
            return sorted(node for node, _ in best.values())
        # Sorted by index first so the draw does not depend on dictionary order.
        ranked = sorted((node, size) for node, size in best.values())
        return [node for _, node in sorted(((rng.random() ** (1.0 / size), node) for node, size in ranked), reverse=True)]

    def moved(self, node: int) -> None:
        shape, rest = self.key_of[node]
        groups = self.by_shape[shape]
        groups[rest].remove(node)
        if not groups[rest]:
            del groups[rest]
            if not groups:
                del self.by_shape[shape]
        shape, rest = self._key(node)
        self.key_of[node] = (shape, rest)
        bisect.insort(self.by_shape.setdefault(shape, {}).setdefault(rest, []), node)


def _place(state: ClusterState, key: str, node: int, request: PodRequest) -> None:
    """Allocate like the scheduler does. A pod without GPUs takes no device:
    `ClusterState.allocate` expects a GPU request (it would pick a device for 0 milli-GPUs),
    so such a pod's holding is applied directly, with no device."""
    if request.milli:
        state.allocate((key, 0), node, request)
    else:
        state.restore((key, 0), Holding(node, 0, None, request.cpu_milli, request.memory_mib))


def _choose_uniformly(
    classes: _StateClasses, framework: Framework, request: PodRequest, rng: random.Random
) -> int | None:
    """A feasible node drawn uniformly (Random-fit), one feasibility check per state."""
    groups = [g for _, _, g in classes.feasible_groups(request) if framework.feasible(classes.state, request, g[0])]
    if not groups:
        return None
    draw = rng.randrange(sum(len(g) for g in groups))
    for group in groups:
        if draw < len(group):
            return group[draw]
        draw -= len(group)
    raise AssertionError("unreachable: the draw is below the total")


def run_policy(
    cluster: Cluster,
    arrivals: Sequence[Arrival],
    policy: str,
    workload: TargetWorkload,
    *,
    seed: int = 42,
    tie_break: str = "lowest-index",
    progress: Callable[[int, int], None] | None = None,
) -> PolicyResult:
    """Place ``arrivals`` one by one under ``policy``; the artifact's report of the run."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"unknown tie break {tie_break!r}; known: {', '.join(TIE_BREAKS)}")
    state = ClusterState(cluster)
    framework = Framework(policy_profile(policy, workload), random.Random(seed))
    measure = FragmentationMeasure(workload)
    classes = _StateClasses(state, policy)
    draw_rng = random.Random(seed)
    tie_rng = random.Random(seed + 1) if tie_break == "random" else None  # own stream: Random draws stay put
    capacity = cluster.total_gpus
    if capacity <= 0:
        raise ValueError("the cluster has no GPUs")
    fragmented = measure.of_cluster(state)
    arrived = allocated = 0
    samples = PodSamples()
    for index, arrival in enumerate(arrivals, start=1):
        request = arrival.request
        arrived += request.milli
        if policy == "Random":
            node = _choose_uniformly(classes, framework, request, draw_rng)
        else:
            node, _ = framework.find_node(state, request, classes.representatives(request, tie_rng))
        if node is not None:
            before = measure.of_node(state, node)
            _place(state, arrival.key, node, request)
            fragmented += measure.of_node(state, node) - before
            allocated += request.milli
            classes.moved(node)
        samples.record(arrived, allocated, fragmented, capacity * MILLI - allocated, node is not None)
        if progress and index % 500 == 0:
            progress(index, len(arrivals))
    return discrete_report(policy, seed, capacity, samples)
