"""Fragmentation Gradient Descent (FGD): score a node by how much a placement grows the
cluster's GPU fragmentation (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
Workloads with Fragmentation Gradient Descent", USENIX ATC '23).

Definitions (docs/traces.md says where they are interpreted):

- A **target workload** M is a distribution over task types m (CPU request, number of
  GPUs, GPU share per GPU, allowed GPU models) with popularity p_m, summing to 1.
- The **fragmentation of node n for task m**, F_n(m), in milli-GPUs: if m cannot run on n
  at all (it asks for no GPU, or for another GPU model, or n lacks the CPU, or fewer of
  n's GPUs have room for m's per-GPU share than m needs), every unallocated GPU share of n
  is a fragment: F_n(m) = Σ_g free_g. Otherwise only the GPUs whose free share is smaller
  than m's per-GPU request are fragments: F_n(m) = Σ_{g: free_g < d_m} free_g.
- The **fragmentation of node n for the workload**: F_n(M) = Σ_m p_m F_n(m); of the
  cluster: F(M) = Σ_n F_n(M). The fragmentation ratio is F(M) / Σ_n Σ_g free_g.
- The **FGD score** of placing a task on n is the growth of F(M) it causes, which is the
  growth of F_n(M) alone (no other node changes): Δ = F_n(M) after − F_n(M) before.
  FGD picks the node with the smallest Δ; as a Score plugin (higher is better, 0..100)
  it returns 100 · sigmoid(−Δ / 1000).

The GPU a shared task lands on within the node is the one `ClusterState.allocate` takes
(the fullest device it fits on), and Δ is computed for exactly that device, so the score
and the placement agree. Memory is not part of the measure (as in the paper).

Node states repeat a lot (a sorted tuple of free shares, the free CPU, the model), so
F_n(M) is memoised per state in the measure object; the workload's task types are
grouped by GPU shape with their CPU requests sorted, so one state costs a few bisects.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.errors import InputError
from scheduler.model.workload import MILLI
from scheduler.plugins import names
from scheduler.state.cluster_state import ClusterState, PodRequest, free_shares

DEFAULT_POPULARITY_THRESHOLD = 1.0


@dataclass(frozen=True, slots=True, order=True)
class TaskType:
    """One task shape of the target workload. ``gpus = 0`` is a CPU-only task."""

    cpu_milli: int
    gpus: int
    gpu_milli: int  # per GPU: 1..1000, 0 when gpus == 0
    models: tuple[str, ...] = ()

    @staticmethod
    def of_request(request: PodRequest) -> TaskType:
        """The task type of a pod request (milli >= 1000 means whole GPUs)."""
        if request.milli <= 0:
            return TaskType(request.cpu_milli, 0, 0, request.models)
        if request.milli < MILLI:
            return TaskType(request.cpu_milli, 1, request.milli, request.models)
        return TaskType(request.cpu_milli, request.milli // MILLI, MILLI, request.models)


@dataclass(frozen=True)
class TargetWorkload:
    """Task types with their popularity (summing to 1), most popular first."""

    types: tuple[tuple[TaskType, float], ...]

    @staticmethod
    def from_tasks(
        tasks: Iterable[TaskType],
        *,
        popularity_threshold: float = DEFAULT_POPULARITY_THRESHOLD,
        include_cpu_only: bool = True,
    ) -> TargetWorkload:
        """The empirical distribution of ``tasks``, cut to the most popular types that
        together cover ``popularity_threshold`` of the tasks, then renormalised."""
        if not 0 < popularity_threshold <= 1:
            raise ValueError(f"popularity_threshold must be in (0, 1], got {popularity_threshold}")
        counts = Counter(t for t in tasks if include_cpu_only or t.gpus > 0)
        total = sum(counts.values())
        if not total:
            raise ValueError("the target workload needs at least one task")
        # Most popular first; ties in a fixed order so the cut is deterministic.
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        kept: list[tuple[TaskType, int]] = []
        covered = 0
        for task, count in ranked:
            if covered >= popularity_threshold * total:
                break
            kept.append((task, count))
            covered += count
        return TargetWorkload(tuple((task, count / covered) for task, count in kept))

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> TargetWorkload:
        """From profile arguments: ``tasks = [{gpus, gpu_milli, cpu_milli, models, weight}]``.

        Without ``tasks`` a generic mix is used: whole 1/2/4/8-GPU tasks and 1/2 and 1/4
        GPU shares, equally likely, no CPU request."""
        raw = args.get("tasks")
        if raw is None:
            mix = [TaskType(0, g, MILLI) for g in (1, 2, 4, 8)] + [TaskType(0, 1, 500), TaskType(0, 1, 250)]
            return TargetWorkload(tuple((t, 1 / len(mix)) for t in mix))
        weighted: list[tuple[TaskType, float]] = []
        for index, item in enumerate(raw):
            try:
                gpus = int(item.get("gpus", 1))
                gpu_milli = int(item.get("gpu_milli", MILLI if gpus else 0))
                models = item.get("models", ())
                models = tuple(models.split("|")) if isinstance(models, str) else tuple(models)
                task = TaskType(int(item.get("cpu_milli", 0)), gpus, gpu_milli, models)
                weight = float(item.get("weight", 1.0))
            except (AttributeError, TypeError, ValueError) as exc:
                raise InputError("profile", f"not a task: {exc}", field=f"plugin_args.FGD.tasks[{index}]") from None
            if weight <= 0 or gpus < 0 or not (0 <= gpu_milli <= MILLI):
                raise InputError("profile", "weight > 0, gpus >= 0 and gpu_milli in 0..1000 needed",
                                 field=f"plugin_args.FGD.tasks[{index}]")
            weighted.append((task, weight))
        if not weighted:
            raise InputError("profile", "at least one task is needed", field="plugin_args.FGD.tasks")
        total = sum(w for _, w in weighted)
        return TargetWorkload(tuple((t, w / total) for t, w in weighted))


NodeKey = tuple[str, int, tuple[int, ...]]  # (GPU model, free CPU or -1 = not modelled, sorted free shares)


class FragmentationMeasure:
    """F_n(M) for node states, memoised. One instance per target workload."""

    def __init__(self, workload: TargetWorkload) -> None:
        self.workload = workload
        # GPU shape (gpus, per-GPU share, models) → (sorted CPU requests, cumulative mass).
        shapes: dict[tuple[int, int, tuple[str, ...]], list[tuple[int, float]]] = {}
        for task, share in workload.types:
            if task.gpus > 0:  # a CPU-only task finds every free GPU share a fragment
                shapes.setdefault((task.gpus, task.gpu_milli, task.models), []).append((task.cpu_milli, share))
        self._shapes: list[tuple[int, int, frozenset[str], list[int], list[float]]] = []
        for (gpus, milli, models), entries in sorted(shapes.items()):
            entries.sort()
            cumulative = [0.0]
            for _, share in entries:
                cumulative.append(cumulative[-1] + share)
            self._shapes.append((gpus, milli, frozenset(models), [cpu for cpu, _ in entries], cumulative))
        self._memo: dict[NodeKey, float] = {}

    # -- node states -------------------------------------------------------------------

    @staticmethod
    def key(state: ClusterState, node: int) -> NodeKey:
        spec = state.nodes[node]
        cpu = state.cpu_free[node] if spec.cpu_milli else -1
        return (spec.gpu_model, cpu, free_shares(state, node))

    @staticmethod
    def key_after(state: ClusterState, node: int, request: PodRequest, before: NodeKey | None = None) -> NodeKey:
        """The node's key once ``request`` is allocated the way `ClusterState.allocate` does."""
        model, cpu, free = before or FragmentationMeasure.key(state, node)
        if cpu >= 0:
            cpu -= request.cpu_milli
        if request.milli >= MILLI:
            whole = request.milli // MILLI
            # Sorted ascending: whole free devices (== MILLI) are at the end.
            free = (0,) * whole + free[: len(free) - whole]
            free = tuple(sorted(free))
        elif request.milli > 0:
            at = bisect.bisect_left(free, request.milli)  # the fullest device it fits on
            if at == len(free):
                return (model, cpu, free)  # does not fit: filters keep such nodes out
            free = tuple(sorted(free[:at] + (free[at] - request.milli,) + free[at + 1 :]))
        return (model, cpu, free)

    def of_key(self, key: NodeKey) -> float:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._fragmentation(*key)
        return found

    def of_node(self, state: ClusterState, node: int) -> float:
        return self.of_key(self.key(state, node))

    def growth(self, state: ClusterState, node: int, request: PodRequest) -> float:
        """Δ F_n(M) of allocating ``request`` on ``node`` (the FGD gradient)."""
        before = self.key(state, node)
        return self.of_key(self.key_after(state, node, request, before)) - self.of_key(before)

    def of_cluster(self, state: ClusterState) -> float:
        return sum(self.of_node(state, node) for node in range(len(state.nodes)))

    def _fragmentation(self, model: str, cpu_free: int, free: tuple[int, ...]) -> float:
        free_total = sum(free)
        if not free_total:
            return 0.0
        usable = 0.0  # Σ over tasks that fit of p_m · (free − F_n(m))
        for gpus, milli, models, cpus, cumulative in self._shapes:
            if models and model not in models:
                continue
            fitting = len(free) - bisect.bisect_left(free, milli)
            if fitting < gpus:
                continue
            mass = cumulative[-1] if cpu_free < 0 else cumulative[bisect.bisect_right(cpus, cpu_free)]
            if mass:
                fragments = sum(share for share in free if share < milli)
                usable += mass * (free_total - fragments)
        return free_total - usable


class FgdScore:
    """Score = 100 · sigmoid(−Δ/1000): the smaller the fragmentation growth, the better."""

    name = names.FGD

    def __init__(self, measure: FragmentationMeasure) -> None:
        self.measure = measure

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> FgdScore:
        return FgdScore(FragmentationMeasure(TargetWorkload.from_args(args)))

    def score(self, state: ClusterState, request: PodRequest, node: int) -> float:
        delta = self.measure.growth(state, node, request) / MILLI
        return 100.0 / (1.0 + math.exp(max(-50.0, min(50.0, delta))))
