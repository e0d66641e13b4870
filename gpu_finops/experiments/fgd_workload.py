"""The FGD study's workload: the pods that arrive, in which order, and FGD's target
workload M, under the artifact's rules and under the project's earlier ones.

Artifact: ``hkust-adsl/kubernetes-scheduler-simulator`` (docs/traces.md names each file).

- **Typical pods** (`typical_pods`, `pkg/utils/frag.go` GetTypicalPods, called from
  `pkg/simulator/core.go` before the workload is tuned): the pod shapes of the *original*
  pod list (CPU request, GPU count, milli-GPUs per GPU, GPU type string), counted, ranked
  most frequent first, and cut after the first shapes whose count reaches 95 % of the pods
  (`--pod-popularity-threshold 95`); the kept shares are renormalised to sum to 1.
  CPU-only pods take part (`isInvolvedCpuPods: true`).
- **Arrivals** (`artifact_arrivals`, `pkg/simulator/simulator.go` SortClusterPods and
  TunePodsByNodeTotalResource): the original pods sorted by name and shuffled; then, when
  their GPU request is below ``tune`` × capacity, pods drawn with replacement from the
  list (sorted by name) are appended, *not* shuffled, until the next draw would pass the
  target; when above, randomly chosen pods are removed until it no longer is.

The project's earlier rules (``--rules project``): `resample_arrivals` draws every pod with
replacement until the demand reaches the target, then shuffles; `target_workload` takes M
from those arrivals (by default all of their shapes).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cmp_to_key

from scheduler.model.workload import MILLI
from scheduler.plugins.fgd import TargetWorkload, TaskType
from scheduler.state.cluster_state import PodRequest
from scheduler.trace.openb import OpenbPod

DEFAULT_POPULARITY_PCT = 95  # generate_config_and_run.py --pod-popularity-threshold


@dataclass(frozen=True, slots=True)
class Arrival:
    """One pod of the arrival sequence."""

    key: str  # unique per arrival: the same pod can be drawn several times
    pod: str
    request: PodRequest

    @property
    def gpu_milli(self) -> int:
        return self.request.milli


def request_of(pod: OpenbPod) -> PodRequest:
    return PodRequest(pod.total_gpu_milli, pod.cpu_milli, pod.memory_mib, pod.gpu_models)


def pod_shape(pod: OpenbPod) -> TaskType:
    """The artifact's PodResource: (CPU, GPU count, milli per GPU, GPU types). A CPU-only
    pod has no GPU type (`data/pod_csv_to_yaml.py` writes one only for GPU pods)."""
    if not pod.num_gpu:
        return TaskType(pod.cpu_milli, 0, 0, ())
    return TaskType(pod.cpu_milli, pod.num_gpu, pod.gpu_milli, pod.gpu_models)


def _before(a: tuple[TaskType, int], b: tuple[TaskType, int]) -> int:
    """Most frequent first; equal counts in the reverse of the artifact's PodResource.Less
    (CPU, then milli per GPU, then GPU count, then the type string): largest first."""
    (shape_a, count_a), (shape_b, count_b) = a, b
    key_a = (count_a, shape_a.cpu_milli, shape_a.gpu_milli, shape_a.gpus, "|".join(shape_a.models))
    key_b = (count_b, shape_b.cpu_milli, shape_b.gpu_milli, shape_b.gpus, "|".join(shape_b.models))
    return -1 if key_a > key_b else 1 if key_a < key_b else 0


def typical_pods(
    pods: Sequence[OpenbPod], popularity_pct: float = DEFAULT_POPULARITY_PCT, *, include_cpu_only: bool = True
) -> tuple[tuple[TaskType, float], ...]:
    """The target workload M: the most frequent pod shapes covering ``popularity_pct`` % of
    the pods, each with its share (floats computed in the artifact's order, so sums of
    shares reproduce its fragmentation bit for bit)."""
    if not 0 < popularity_pct <= 100:
        raise ValueError(f"the popularity threshold must be in (0, 100] %, got {popularity_pct}")
    counts = Counter(pod_shape(p) for p in pods if include_cpu_only or p.num_gpu)
    if not counts:
        raise ValueError("the target workload needs at least one pod")
    total = float(sum(counts.values()))
    ranked = sorted(counts.items(), key=cmp_to_key(_before))
    expected = popularity_pct * total / 100.0
    kept: list[tuple[TaskType, float]] = []
    cumulative = 0.0
    while cumulative < expected and len(kept) < len(ranked):
        shape, count = ranked[len(kept)]
        cumulative += count
        kept.append((shape, count / total))
    if len(kept) == len(ranked):
        return tuple(kept)
    covered = cumulative / total
    return tuple((shape, share / covered) for shape, share in kept)


def artifact_arrivals(
    pods: Sequence[OpenbPod], capacity_gpus: int, tune: float, rng: random.Random
) -> list[Arrival]:
    """The artifact's arrival sequence for a cluster of ``capacity_gpus`` GPUs."""
    if not pods:
        raise ValueError("the pod list is empty")
    if not any(p.total_gpu_milli for p in pods):
        raise ValueError("no pod of the list asks for a GPU: the demand can never reach the target")
    by_name = sorted(pods, key=lambda p: p.name)
    order = list(by_name)
    rng.shuffle(order)
    arrivals = [Arrival(p.name, p.name, request_of(p)) for p in order]
    total = sum(p.total_gpu_milli for p in pods)
    target = tune * float(capacity_gpus * MILLI)
    if total > target:
        while total > target:
            removed = arrivals.pop(rng.randrange(len(arrivals)))
            total -= removed.request.milli
    elif total < target:
        drawn = 0
        while True:
            pod = by_name[rng.randrange(len(by_name))]
            # The artifact checks the next pod's milli-GPUs *per GPU* against the target
            # (an 8-GPU pod counts 1000 there) but adds its whole request: kept as it is.
            if total + pod.gpu_milli > target:
                break
            total += pod.total_gpu_milli
            arrivals.append(Arrival(f"{pod.name}-tuned-{drawn}", pod.name, request_of(pod)))
            drawn += 1
    return arrivals


def resample_arrivals(
    pods: Sequence[OpenbPod], capacity_gpus: float, target_share: float, seed: int
) -> list[Arrival]:
    """The project's rule: draw pods with replacement until their GPU requests reach
    ``target_share`` of the capacity, then shuffle (one seeded generator for both)."""
    if not pods:
        raise ValueError("the pod list is empty")
    if not any(p.total_gpu_milli for p in pods):
        raise ValueError("no pod of the list asks for a GPU: the demand can never reach the target")
    rng = random.Random(seed)
    target_milli = target_share * capacity_gpus * MILLI
    drawn: list[Arrival] = []
    total = 0
    while total < target_milli:
        pod = pods[rng.randrange(len(pods))]
        drawn.append(Arrival(f"{pod.name}#{len(drawn)}", pod.name, request_of(pod)))
        total += pod.total_gpu_milli
    rng.shuffle(drawn)
    return drawn


def target_workload(arrivals: Sequence[Arrival], popularity_threshold: float = 1.0) -> TargetWorkload:
    """The project's M: the shapes of the arriving pods, cut at ``popularity_threshold``."""
    return TargetWorkload.from_tasks(
        (TaskType.of_request(a.request) for a in arrivals), popularity_threshold=popularity_threshold
    )
