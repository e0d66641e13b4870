"""The artifact's scheduling rules, one function each, over the cluster held as arrays.

Artifact: ``hkust-adsl/kubernetes-scheduler-simulator`` (paths below are in it). Every
score is the artifact's integer (Go ``int64`` truncation) in 0..100, computed with the same
floating-point operations in the same order, so ties fall where they fall there:

- Random (`pkg/simulator/plugin/random_score.go`): one feasible node drawn uniformly
  (PreScore) scores 100, the others 0.
- DotProd (`dot_product_score.go`, ``-dimext merge -norm max``): node free (CPU, GPU) and
  pod request, both divided by the largest node spec (128 CPUs, 8 GPUs); score
  ``int(100 · (1 − dot / 2))``.
- GpuClustering (`gpu_clustering_score.go`): node classes of GPU pods (``share-gpu``,
  ``N-gpu``); only the pod's class 75, with others 50, none yet 25, only others 0, plus
  ``25 · (8000 − free milli-GPUs) / 8000`` in integers; pods without GPUs 0.
- GpuPacking (`gpu_packing_score.go`): an untouched node ``max(33 − GPUs, GPUs)``; a used
  node whose pick takes whole free GPUs ``max(50 − taken, 33)``; else the picked shared
  GPUs' free share ``max(100 − Σ(free·100/1000)/10, 50)``; pods without GPUs 0.
- BestFit (`best_fit_score.go`): ``int(100 · (1 − ½(CPU left after)/128000 − ½(GPU left
  after)/8000))``; its min-max normalisation is one-to-one on integers, so it is left out.
- FGD (`fgd_score.go`): ``int(100 · sigmoid((F_before − F_after)/1000))``, for a shared
  GPU the best device of the node.

Ties between nodes (`vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go`
selectHost, in the artifact's kube-scheduler fork): the lexicographically smallest node
name wins, and node names are prefixed with a seeded permutation (`simulator.go`
syncClusterResourceList): the node first in a random order fixed per seed.

GPU selection inside a node (`open_gpu_share.go` Reserve, ``-gpusel``): whole-GPU pods take
the first free devices by index; a shared pod takes the fullest device it fits on
(``best``: DotProd, GpuClustering, GpuPacking, BestFit), a uniformly drawn fitting device
(``random``: Random), or FGD's best-scoring device, first by index (FGD).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scheduler.model import Cluster
from scheduler.model.workload import MILLI
from scheduler.plugins.fgd import TaskType
from scheduler.state.cluster_state import PodRequest

MAX_SCORE = 100
MAX_SPEC_CPU = 128_000  # pkg/type/open-gpu-share/utils/const.go MaxSpecCpu
MAX_SPEC_GPU = 8_000  # MaxSpecGpu
SHARE = 0  # GpuClustering class index of a shared GPU; k > 0 is "k-gpu"

# Fragment categories of the artifact's measure (`pkg/utils/frag.go`), in its bin order.
Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS = range(7)

StateKey = tuple[str, int, tuple[int, ...]]  # (GPU model, free CPU or -1, sorted non-zero free shares)


@dataclass(frozen=True, slots=True)
class Pod:
    """What the rules read of a pod (the artifact's PodResource, plus memory)."""

    cpu: int
    memory: int
    gpus: int  # 0 for a CPU-only pod
    milli: int  # per GPU: < 1000 only when gpus == 1 (a shared GPU)
    models: tuple[str, ...] = ()

    @staticmethod
    def of(request: PodRequest) -> Pod:
        shape = TaskType.of_request(request)
        return Pod(request.cpu_milli, request.memory_mib, shape.gpus, shape.gpu_milli, request.models)

    @property
    def shared(self) -> bool:
        return self.gpus == 1 and self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.gpus * self.milli

    @property
    def gpu_class(self) -> int | None:
        """GpuClustering's class: None (no GPU), SHARE, or the number of whole GPUs."""
        return None if not self.gpus else SHARE if self.shared else self.gpus


class NodeTable:
    """The cluster's free resources, one row per node (devices padded with 0 to the widest
    node; a padded device never fits anything and adds nothing to a sum)."""

    def __init__(self, cluster: Cluster) -> None:
        nodes = cluster.nodes
        self.models = [n.gpu_model if n.gpus else "" for n in nodes]
        self.gpus = np.array([n.gpus for n in nodes], dtype=np.int64)
        width = max(1, int(self.gpus.max(initial=0)))
        self.cpu_modelled = np.array([n.cpu_milli > 0 for n in nodes])
        self.memory_modelled = np.array([n.memory_mib > 0 for n in nodes])
        self.cpu_free = np.array([n.cpu_milli for n in nodes], dtype=np.int64)
        self.memory_free = np.array([n.memory_mib for n in nodes], dtype=np.int64)
        self.device_free = np.zeros((len(nodes), width), dtype=np.int64)
        for index, node in enumerate(nodes):
            self.device_free[index, : node.gpus] = MILLI
        self.total_free = self.gpus * MILLI
        self.whole_free = self.gpus.copy()  # devices with all 1000 milli free
        self.max_free = np.where(self.gpus > 0, MILLI, 0)
        self.classes = np.zeros((len(nodes), width + 1), dtype=np.int64)  # GPU pods per class
        self._model_masks: dict[tuple[str, ...], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.models)

    def model_mask(self, models: tuple[str, ...]) -> np.ndarray:
        """Nodes with GPUs whose model the pod accepts (`IsNodeAccessibleToPodByType`)."""
        mask = self._model_masks.get(models)
        if mask is None:
            mask = self.gpus > 0
            if models:
                mask = mask & np.array([m in models for m in self.models])
            self._model_masks[models] = mask
        return mask

    def feasible(self, pod: Pod) -> np.ndarray:
        """Indices of the nodes passing NodeResourcesFit (CPU, memory) and Open-Gpu-Share
        (model, and enough devices with the per-GPU share free)."""
        fits = (self.cpu_free >= pod.cpu) | ~self.cpu_modelled
        fits &= (self.memory_free >= pod.memory) | ~self.memory_modelled
        if pod.gpus:
            fits &= self.model_mask(pod.models)
            if pod.shared:
                fits &= self.max_free >= pod.milli
            else:
                fits &= self.whole_free >= pod.gpus
        return np.flatnonzero(fits)

    def place(self, node: int, pod: Pod, devices: tuple[int, ...]) -> None:
        self.cpu_free[node] -= pod.cpu
        self.memory_free[node] -= pod.memory
        if not pod.gpus:
            return
        row = self.device_free[node]
        for device in devices:
            row[device] -= pod.milli
        self.total_free[node] -= pod.total_milli
        self.whole_free[node] = int(np.count_nonzero(row == MILLI))
        self.max_free[node] = int(row.max())
        self.classes[node, pod.gpu_class] += 1

    def state_key(self, node: int) -> StateKey:
        """What the fragmentation of a node depends on (the artifact's NodeResource.Flatten)."""
        frees = sorted(int(f) for f in self.device_free[node, : self.gpus[node]] if f)
        return (self.models[node], int(self.cpu_free[node]) if self.cpu_modelled[node] else -1, tuple(frees))


# --------------------------------------------------------------------------- fragmentation


class Fragmentation:
    """The artifact's node fragmentation F_n(M) (`NodeGpuShareFragAmount`, summed over all
    categories but Q3), memoised per node state. The float sums follow the artifact's
    order (seven category bins filled pod type by pod type, then added up in bin order),
    so a placement that changes nothing gives exactly the same number."""

    def __init__(self, typical: tuple[tuple[TaskType, float], ...]) -> None:
        self.typical = typical
        self._memo: dict[StateKey, float] = {}
        # Node states as small integers (cheap to hash), and FGD's choice per pod shape
        # and state id: a pod is scored on a few hundred nodes but far fewer states.
        self._ids: dict[StateKey, int] = {}
        self._keys: list[StateKey] = []
        self._choices: dict[tuple[int, int, int], dict[int, tuple[int, frozenset[int]]]] = {}

    def of_state(self, key: StateKey) -> float:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._compute(*key)
        return found

    def state_id(self, key: StateKey) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return found

    def _compute(self, model: str, cpu_free: int, frees: tuple[int, ...]) -> float:
        # ``frees`` is sorted: the devices below a share are a prefix of it.
        below = [0]
        for free in frees:
            below.append(below[-1] + free)
        left = float(below[-1])
        bins = [0.0] * 7
        for shape, share in self.typical:
            cpu_ok = cpu_free < 0 or cpu_free >= shape.cpu_milli
            if not shape.gpu_milli:
                bins[XL_SATISFIED if cpu_ok else XR_LACK_CPU] += share * left
            elif shape.models and model not in shape.models:
                bins[NO_ACCESS] += share * left
            else:
                short = bisect_left(frees, shape.gpu_milli)  # devices below the share
                if len(frees) - short >= shape.gpus:
                    if cpu_ok:
                        bins[Q2_LACK_GPU] += share * float(below[short])
                        bins[Q3_SATISFIED] += share * (left - float(below[short]))
                    else:
                        bins[Q4_LACK_CPU] += share * left
                else:
                    bins[Q2_LACK_GPU if cpu_ok else Q1_LACK_BOTH] += share * left
        total = 0.0
        for category in (Q1_LACK_BOTH, Q2_LACK_GPU, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS):
            total += bins[category]
        return total

    def fgd_choice(self, state: int, pod: Pod) -> tuple[int, frozenset[int]]:
        """FGD's integer score of ``pod`` on a node in state ``state`` (an id of
        `state_id`) and, for a shared GPU, the free shares of the devices that reach it
        (the node takes the first such device by index)."""
        choices = self._choices.setdefault((pod.cpu, pod.gpus, pod.milli), {})
        found = choices.get(state)
        if found is None:
            found = choices[state] = self._fgd_choice(self._keys[state], pod)
        return found

    def fgd_scores(self, pod: Pod, states: np.ndarray) -> np.ndarray:
        """FGD's score for each entry of ``states`` (state ids), one computation per state."""
        distinct, where = np.unique(states, return_inverse=True)
        choices = self._choices.setdefault((pod.cpu, pod.gpus, pod.milli), {})
        scores = np.empty(len(distinct), dtype=np.int64)
        for position, state in enumerate(distinct.tolist()):
            found = choices.get(state)
            if found is None:
                found = choices[state] = self._fgd_choice(self._keys[state], pod)
            scores[position] = found[0]
        return scores[where]

    def _fgd_choice(self, key: StateKey, pod: Pod) -> tuple[int, frozenset[int]]:
        model, cpu_free, frees = key
        before = self.of_state(key)
        cpu_after = cpu_free - pod.cpu if cpu_free >= 0 else -1
        if pod.shared:
            best, values = -1, set()
            for free in sorted({f for f in frees if f >= pod.milli}):
                after = self.of_state((model, cpu_after, _take(frees, free, pod.milli)))
                score = sigmoid_score(before - after)
                if score > best:
                    best, values = score, {free}
                elif score == best:
                    values.add(free)
            return best, frozenset(values)
        after_frees = frees
        for _ in range(pod.gpus):
            after_frees = _take(after_frees, MILLI, MILLI)
        return sigmoid_score(before - self.of_state((model, cpu_after, after_frees))), frozenset()


def _take(frees: tuple[int, ...], free: int, milli: int) -> tuple[int, ...]:
    """``frees`` (sorted) with one device of ``free`` left giving ``milli``."""
    rest = list(frees)
    rest.remove(free)
    if free - milli:
        rest.append(free - milli)
        rest.sort()
    return tuple(rest)


def sigmoid_score(reduction: float) -> int:
    """``int64(sigmoid(reduction / 1000) · 100)``: 50 when nothing changes."""
    return int(1.0 / (1.0 + math.exp(-(reduction / 1000))) * float(MAX_SCORE))


# --------------------------------------------------------------------------- scores


def score_dot_product(table: NodeTable, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    node_cpu = table.cpu_free[nodes] / float(MAX_SPEC_CPU)
    node_gpu = table.total_free[nodes] / float(MAX_SPEC_GPU)
    dot = node_cpu * (pod.cpu / float(MAX_SPEC_CPU)) + node_gpu * (pod.total_milli / float(MAX_SPEC_GPU))
    return np.trunc(float(MAX_SCORE) * (1.0 - dot / 2.0)).astype(np.int64)


def score_best_fit(table: NodeTable, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    leftover = (table.cpu_free[nodes] - pod.cpu) / float(MAX_SPEC_CPU) * 0.5
    leftover = leftover + (table.total_free[nodes] - pod.total_milli) / float(MAX_SPEC_GPU) * 0.5
    return np.trunc((1.0 - leftover) * float(MAX_SCORE)).astype(np.int64)


def score_gpu_clustering(table: NodeTable, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    wanted = pod.gpu_class
    if wanted is None:
        return np.zeros(len(nodes), dtype=np.int64)
    fullness = MAX_SCORE // 4 * (MAX_SPEC_GPU - table.total_free[nodes]) // MAX_SPEC_GPU
    classes = table.classes[nodes]
    present = np.count_nonzero(classes, axis=1)
    same = classes[:, wanted] > 0
    tier = np.where(same, np.where(present == 1, 3, 2), np.where(present == 0, 1, 0))
    return fullness + tier * (MAX_SCORE // 4)


def score_gpu_packing(table: NodeTable, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    if not pod.gpus:
        return np.zeros(len(nodes), dtype=np.int64)
    gpus, whole = table.gpus[nodes], table.whole_free[nodes]
    untouched = np.maximum(MAX_SCORE // 3 - whole, whole)
    if pod.shared:
        rows = table.device_free[nodes]
        tightest = np.where(rows >= pod.milli, rows, MILLI + 1).min(axis=1)
        shared = np.maximum(MAX_SCORE - (tightest * 100 // MILLI) // 10, MAX_SCORE // 2)
        used = np.where(tightest == MILLI, MAX_SCORE // 2 - 1, shared)
    else:
        used = np.full(len(nodes), max(MAX_SCORE // 2 - pod.gpus, MAX_SCORE // 3), dtype=np.int64)
    return np.where(whole == gpus, untouched, used)


ScoreFunction = Callable[[NodeTable, Pod, np.ndarray], np.ndarray]
SCORES: dict[str, ScoreFunction] = {
    "DotProd": score_dot_product,
    "GpuClustering": score_gpu_clustering,
    "GpuPacking": score_gpu_packing,
    "BestFit": score_best_fit,
}


# --------------------------------------------------------------------------- choices


def pick_node(nodes: np.ndarray, scores: np.ndarray, rank: np.ndarray, rng: random.Random | None) -> int:
    """The best-scoring node; a tie goes to the lowest ``rank`` (the artifact's first name
    in its seeded order), or, with ``rng``, to a tied node drawn uniformly."""
    tied = nodes[scores == scores.max()]
    if rng is not None:
        return int(tied[rng.randrange(len(tied))])
    return int(tied[np.argmin(rank[tied])])


def whole_devices(table: NodeTable, node: int, pod: Pod) -> tuple[int, ...]:
    """`AllocateExclusiveGpuId`: the first free devices by index."""
    free = np.flatnonzero(table.device_free[node] == MILLI)
    return tuple(int(d) for d in free[: pod.gpus])


def shared_device(table: NodeTable, node: int, pod: Pod, method: str, rng: random.Random,
                  fgd_values: frozenset[int] = frozenset()) -> int:
    """The device a shared pod takes on ``node`` under the ``-gpusel`` method."""
    row = table.device_free[node, : table.gpus[node]]
    fitting = [d for d, free in enumerate(row.tolist()) if free >= pod.milli]
    if method == "random":
        return fitting[rng.randrange(len(fitting))]
    if method == "fgd":
        return next(d for d in fitting if int(row[d]) in fgd_values)
    return min(fitting, key=lambda d: (int(row[d]), d))
