"""The artifact's rules one by one, on small hand-written node and pod tables: tie drawing,
the integer score of each policy, the GPU picked inside a node, FGD's measure, the
popularity cut and the arrival order. Expected numbers are worked out in the case names
and comments (docs/traces.md gives the artifact file each rule follows)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from gpu_finops.experiments.fgd_engine import node_ranks
from gpu_finops.experiments.fgd_rules import (
    SCORES,
    Fragmentation,
    NodeTable,
    Pod,
    pick_node,
    shared_device,
    sigmoid_score,
    whole_devices,
)
from gpu_finops.experiments.fgd_workload import artifact_arrivals, typical_pods
from scheduler.model import Cluster, Node
from scheduler.plugins.fgd import TaskType
from scheduler.trace.openb import OpenbPod

SHARE_300 = Pod(cpu=1000, memory=0, gpus=1, milli=300)
ONE_GPU = Pod(cpu=1000, memory=0, gpus=1, milli=1000)
TWO_GPUS = Pod(cpu=1000, memory=0, gpus=2, milli=1000)
CPU_ONLY = Pod(cpu=8000, memory=0, gpus=0, milli=0)


def one_node(gpus: int = 8, cpu: int = 96_000, used: tuple[tuple[Pod, tuple[int, ...]], ...] = ()) -> NodeTable:
    """A one-node table; ``used`` are pods already placed, each on the given devices."""
    table = NodeTable(Cluster((Node("n", "G2", gpus, cpu, 786_432),)))
    for pod, devices in used:
        table.place(0, pod, devices)
    return table


def share(milli: int, cpu: int = 0) -> Pod:
    return Pod(cpu=cpu, memory=0, gpus=1, milli=milli)


# --------------------------------------------------------------------------- ties


@dataclass(frozen=True)
class TieCase:
    story: str
    nodes: list[int]  # the feasible nodes, in the order the scheduler lists them
    scores: list[int]
    rank: list[int]  # per node of the cluster: its place in the seeded order
    want_node: int


TIE_CASES = [
    TieCase("a unique best score wins whatever its place in the order",
            [0, 1, 2], [3, 9, 5], [0, 2, 1], want_node=1),
    TieCase("tied best scores go to the node first in the seeded order, not the lowest index",
            [0, 1, 2, 3], [9, 7, 9, 9], [3, 0, 2, 1], want_node=3),
    TieCase("the order ranks nodes of the whole cluster: feasible nodes 2 and 5 tie, 5 comes first",
            [2, 5], [40, 40], [0, 1, 4, 9, 9, 3], want_node=5),
    TieCase("with the order 0, 1, 2 … (--tie-break lowest-index) the lowest index wins",
            [1, 2], [60, 60], [0, 1, 2], want_node=1),
]


@pytest.mark.parametrize("case", TIE_CASES, ids=lambda c: c.story)
def test_ties_go_to_the_first_node_of_the_seeded_order(case: TieCase):
    got = pick_node(np.array(case.nodes), np.array(case.scores), np.array(case.rank), None)
    assert got == case.want_node


def test_random_ties_draw_each_tied_node_equally_often_and_never_another():
    rng = random.Random(7)
    draws = Counter(pick_node(np.array([0, 1, 2, 3]), np.array([5, 8, 8, 8]), np.zeros(4), rng) for _ in range(3000))
    assert set(draws) == {1, 2, 3}
    assert all(900 < n < 1100 for n in draws.values()), draws


def test_the_seeded_order_is_a_permutation_of_the_nodes_by_name_whatever_the_file_order():
    nodes = tuple(Node(f"n{i:02d}", "G2", 8) for i in range(12))
    forward = node_ranks(Cluster(nodes), random.Random(42))
    backward = node_ranks(Cluster(nodes[::-1]), random.Random(42))
    assert sorted(forward.tolist()) == list(range(12))
    assert forward.tolist() == backward.tolist()[::-1]  # same place per name
    assert forward.tolist() != node_ranks(Cluster(nodes), random.Random(43)).tolist()


# --------------------------------------------------------------------------- integer scores


@dataclass(frozen=True)
class ScoreCase:
    story: str
    policy: str
    pod: Pod
    want_score: int
    gpus: int = 8
    cpu: int = 96_000
    used: tuple[tuple[Pod, tuple[int, ...]], ...] = ()


SCORE_CASES = [
    # BestFit: int(100 · (1 − ½ (CPU left after)/128000 − ½ (GPU left after)/8000))
    ScoreCase("BestFit: 56 CPUs and 1 GPU left → 1 − .21875 − .0625 = .71875 → 71",
              "BestFit", Pod(8000, 0, 1, 1000), want_score=71, gpus=2, cpu=64_000),
    ScoreCase("BestFit: nothing left after the pod → 100",
              "BestFit", Pod(8000, 0, 1, 1000), want_score=100, gpus=1, cpu=8000),
    # DotProd: int(100 · (1 − (free·request over 128 CPUs, 8 GPUs) / 2))
    ScoreCase("DotProd: free (.5, .25) · request (.0625, .125) = .0625 → 1 − .03125 → 96",
              "DotProd", Pod(8000, 0, 1, 1000), want_score=96, gpus=2, cpu=64_000),
    ScoreCase("DotProd: a CPU-only pod on a free 128-CPU 8-GPU node: (1, 1)·(.5, 0) = .5 → 75",
              "DotProd", Pod(64_000, 0, 0, 0), want_score=75, gpus=8, cpu=128_000),
    # GpuPacking
    ScoreCase("GpuPacking: an untouched 8-GPU node scores 33 − 8", "GpuPacking", ONE_GPU, want_score=25),
    ScoreCase("GpuPacking: an untouched 2-GPU node scores higher, 33 − 2", "GpuPacking", ONE_GPU, want_score=31, gpus=2),
    ScoreCase("GpuPacking: a node using CPU but no GPU is still untouched", "GpuPacking", ONE_GPU, want_score=25,
              used=((CPU_ONLY, ()),)),
    ScoreCase("GpuPacking: a used node, one whole free GPU taken: 50 − 1", "GpuPacking", ONE_GPU, want_score=49,
              used=((share(500), (0,)),)),
    ScoreCase("GpuPacking: a used node, two whole free GPUs taken: 50 − 2", "GpuPacking", TWO_GPUS, want_score=48,
              used=((share(500), (0,)),)),
    ScoreCase("GpuPacking: onto a shared GPU with 600 free: 100 − (600·100/1000)/10 = 94", "GpuPacking", SHARE_300,
              want_score=94, used=((share(400), (0,)),)),
    ScoreCase("GpuPacking: the tightest fit wins the device: 250 free → 100 − 25/10 = 98", "GpuPacking", share(200),
              want_score=98, used=((share(400), (0,)), (share(750), (1,)))),
    ScoreCase("GpuPacking: on a used node whose only fitting devices are whole: 50 − 1", "GpuPacking", SHARE_300,
              want_score=49, used=((share(900), (0,)),)),
    ScoreCase("GpuPacking: a pod without GPUs scores 0 everywhere", "GpuPacking", CPU_ONLY, want_score=0),
    # GpuClustering: tier · 25 + 25 · (8000 − free milli-GPUs) / 8000, integers
    ScoreCase("GpuClustering: only shared pods on the node: 75 + 25·500/8000 → 76", "GpuClustering", SHARE_300,
              want_score=76, used=((share(500), (0,)),)),
    ScoreCase("GpuClustering: the pod's class among others: 50 + 25·1500/8000 → 54", "GpuClustering", SHARE_300,
              want_score=54, used=((share(500), (0,)), (ONE_GPU, (1,)))),
    ScoreCase("GpuClustering: no GPU pod yet on 8 GPUs: 25 + 0", "GpuClustering", SHARE_300, want_score=25),
    ScoreCase("GpuClustering: no GPU pod yet on 2 GPUs looks fuller (over 8000): 25 + 25·6000/8000 → 43",
              "GpuClustering", SHARE_300, want_score=43, gpus=2),
    ScoreCase("GpuClustering: only other classes: 0 + 25·1000/8000 → 3", "GpuClustering", SHARE_300,
              want_score=3, used=((ONE_GPU, (0,)),)),
    ScoreCase("GpuClustering: a pod without GPUs scores 0", "GpuClustering", CPU_ONLY, want_score=0,
              used=((share(500), (0,)),)),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.story)
def test_each_policy_scores_the_artifacts_integer(case: ScoreCase):
    table = one_node(case.gpus, case.cpu, case.used)
    got = SCORES[case.policy](table, case.pod, np.array([0]))
    assert got.dtype == np.int64 and got.tolist() == [case.want_score]


@pytest.mark.parametrize(
    ("reduction", "want_score"),
    [(0.0, 50), (300.0, 57), (-40.0, 49), (-1000.0, 26), (8000.0, 99)],
    ids=["nothing changes: exactly 50", "300 milli-GPUs less fragmented: int(57.4) = 57",
         "40 more: int(49.0) = 49 (a small growth already loses a point)",
         "a whole GPU more: int(26.9) = 26", "8 GPUs less: 99"],
)
def test_fgd_truncates_100_sigmoid_of_the_reduction_in_gpus(reduction, want_score):
    assert sigmoid_score(reduction) == want_score


# --------------------------------------------------------------------------- FGD's measure

MIX = ((TaskType(4000, 1, 1000), 0.5), (TaskType(2000, 1, 500), 0.25), (TaskType(1000, 0, 0), 0.25))


@pytest.mark.parametrize(
    ("key", "want_fragment"),
    [
        # whole GPU: fits, none below 1000; half: fits; CPU-only: all 2000 → .25·2000
        (("G2", 64_000, (1000, 1000)), 500.0),
        # whole: the 500 is a fragment → .5·500; half: nothing below 500; CPU-only: .25·1500
        (("G2", 64_000, (500, 1000)), 625.0),
        # no GPU task fits any more: everything free (600) is a fragment for every type
        (("G2", 64_000, (300, 300)), 600.0),
        # 3 CPUs left: the whole-GPU type (4 CPUs) lacks CPU → all 2000 for it; CPU-only: 500
        (("G2", 3000, (1000, 1000)), 1500.0),
        (("G2", 64_000, ()), 0.0),
    ],
    ids=["free node: only CPU-only tasks see fragments", "a half GPU is a fragment for whole-GPU tasks",
         "nothing fits: all free is fragmented", "lacking CPU makes a task see every free GPU as fragment",
         "no free GPU: no fragment"],
)
def test_fragmentation_is_the_share_weighted_unusable_gpus(key, want_fragment):
    assert Fragmentation(MIX).of_state(key) == pytest.approx(want_fragment)


def test_tasks_asking_for_another_model_see_every_free_gpu_as_fragment():
    measure = Fragmentation(((TaskType(0, 1, 1000, ("A100",)), 0.5), (TaskType(0, 1, 1000), 0.5)))
    assert measure.of_state(("T4", 8000, (1000, 1000))) == pytest.approx(1000)
    assert measure.of_state(("A100", 8000, (1000, 1000))) == 0


@pytest.mark.parametrize(
    ("pod", "want_score"),
    [
        # 63 CPUs left: every type still fits as before, F stays 500 to the last bit: Δ = 0
        (Pod(1000, 0, 0, 0), 50),
        # 3 CPUs left: whole-GPU tasks (4 CPUs) now see both GPUs as fragments: F 500 → 1500,
        # int(100 · sigmoid(−1)) = 26
        (Pod(61_000, 0, 0, 0), 26),
        # one whole GPU taken: CPU-only tasks see 1000 fewer free milli-GPUs: F 500 → 250,
        # int(100 · sigmoid(.25)) = 56
        (Pod(0, 0, 1, 1000), 56),
    ],
    ids=["a CPU-only pod that changes no category scores exactly 50",
         "taking the CPU a task type needs turns its free GPUs into fragments",
         "a whole GPU taken: fewer free GPUs for CPU-only tasks to find useless"],
)
def test_fgd_scores_the_change_of_the_nodes_fragmentation(pod, want_score):
    measure = Fragmentation(MIX)
    state = measure.state_id(("G2", 64_000, (1000, 1000)))
    assert measure.fgd_choice(state, pod)[0] == want_score


# --------------------------------------------------------------------------- GPU selection


@dataclass(frozen=True)
class DeviceCase:
    story: str
    method: str  # the artifact's -gpusel: best, random, fgd (whole-GPU pods ignore it)
    pod: Pod
    used: tuple[tuple[Pod, tuple[int, ...]], ...]
    want_devices: tuple[int, ...]
    typical: tuple[tuple[TaskType, float], ...] = field(default=((TaskType(0, 1, 500), 1.0),))


DEVICE_CASES = [
    DeviceCase("best: a shared pod takes the fullest device it fits on, the lowest index of equals",
               "best", SHARE_300, ((share(600), (1,)), (share(400), (2,)), (share(600), (3,))), want_devices=(1,)),
    DeviceCase("best: a pod too big for the shared devices takes a whole one",
               "best", share(700), ((share(600), (0,)), (share(400), (1,))), want_devices=(2,)),
    DeviceCase("whole-GPU pods take the first free devices by index, whatever the method",
               "fgd", TWO_GPUS, ((share(600), (1,)),), want_devices=(0, 2)),
    # Type 500: taking 300 from the 1000 (→ 700) or from the 800 (→ 500) leaves no device
    # below 500 either way: both score 50, and FGD takes the first by index, not the fullest.
    DeviceCase("fgd: the first device by index among the best-scoring, not the fullest",
               "fgd", SHARE_300, ((share(200), (1,)),), want_devices=(0,)),
    # Type 500 again: from the 600 (→ 300) a new fragment appears (Δ +300 → 42); from the
    # 1000 (→ 700) none (50): FGD avoids the fullest device here.
    DeviceCase("fgd: the device whose use leaves no new fragment",
               "fgd", SHARE_300, ((share(400), (0,)),), want_devices=(1,)),
]


@pytest.mark.parametrize("case", DEVICE_CASES, ids=lambda c: c.story)
def test_the_gpu_picked_inside_a_node_follows_the_policys_method(case: DeviceCase):
    table = one_node(4, 96_000, case.used)
    if not case.pod.shared:
        assert whole_devices(table, 0, case.pod) == case.want_devices
        return
    values: frozenset[int] = frozenset()
    if case.method == "fgd":
        measure = Fragmentation(case.typical)
        values = measure.fgd_choice(measure.state_id(table.state_key(0)), case.pod)[1]
    assert (shared_device(table, 0, case.pod, case.method, random.Random(1), values),) == case.want_devices


def test_random_device_selection_draws_among_the_fitting_devices_only():
    table = one_node(4, 96_000, ((share(900), (2,)),))  # device 2 has 100 free: too little
    rng = random.Random(3)
    draws = Counter(shared_device(table, 0, SHARE_300, "random", rng) for _ in range(3000))
    assert set(draws) == {0, 1, 3} and all(900 < n < 1100 for n in draws.values()), draws


# --------------------------------------------------------------------------- popularity cut


def pods_of(counts: dict[tuple[int, int, int], int]) -> list[OpenbPod]:
    """Pods with (CPU, GPUs, milli per GPU) shapes, as many of each as asked."""
    pods: list[OpenbPod] = []
    for (cpu, gpus, milli), count in counts.items():
        pods += [OpenbPod(f"p{len(pods) + i:04d}", cpu, 1024, gpus, milli, (), None, None, None, None, 2)
                 for i in range(count)]
    return pods


A, B, C, D = (8000, 1, 1000), (4000, 1, 500), (2000, 0, 0), (16_000, 8, 1000)


@dataclass(frozen=True)
class CutCase:
    story: str
    counts: dict[tuple[int, int, int], int]
    popularity_pct: float
    want_shapes: list[tuple[int, int, int]]
    want_shares: list[float]


CUT_CASES = [
    CutCase("95 %: the most frequent shapes until their count reaches 95 % of the pods, renormalised",
            {A: 50, B: 30, C: 15, D: 5}, 95, [A, B, C], [50 / 95, 30 / 95, 15 / 95]),
    CutCase("80 %: the cut stops as soon as the count reaches the threshold",
            {A: 50, B: 30, C: 15, D: 5}, 80, [A, B], [50 / 80, 30 / 80]),
    CutCase("100 %: every shape, as shares of all the pods",
            {A: 50, B: 30, C: 15, D: 5}, 100, [A, B, C, D], [0.5, 0.3, 0.15, 0.05]),
    CutCase("equal counts rank the larger CPU request first (the artifact's order)",
            {B: 10, A: 10}, 50, [A], [1.0]),
    CutCase("CPU-only pods are shapes of M too",
            {C: 60, A: 40}, 50, [C], [1.0]),
]


@pytest.mark.parametrize("case", CUT_CASES, ids=lambda c: c.story)
def test_the_popularity_cut_keeps_the_most_frequent_shapes(case: CutCase):
    got = typical_pods(pods_of(case.counts), case.popularity_pct)
    assert [(t.cpu_milli, t.gpus, t.gpu_milli) for t, _ in got] == case.want_shapes
    assert [share for _, share in got] == pytest.approx(case.want_shares)


# --------------------------------------------------------------------------- arrivals


def test_below_the_target_every_pod_arrives_once_shuffled_then_drawn_pods_are_appended():
    pods = pods_of({A: 6, B: 4, C: 3})  # 6 + 2 = 8 GPUs asked for, on 10 GPUs
    arrivals = artifact_arrivals(pods, 10, 1.3, random.Random(5))
    first = [a.key for a in arrivals[: len(pods)]]
    assert sorted(first) == sorted(p.name for p in pods) and first != sorted(first)  # all, once, shuffled
    tuned = arrivals[len(pods):]
    assert [a.key.rsplit("-tuned-", 1)[1] for a in tuned] == [str(i) for i in range(len(tuned))]
    demand = sum(a.gpu_milli for a in arrivals)
    assert demand <= 13_000
    assert [a.key for a in arrivals] == [a.key for a in artifact_arrivals(pods, 10, 1.3, random.Random(5))]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stop_rule_reads_milli_per_gpu_so_an_8_gpu_pod_can_overshoot(seed):
    # 8 GPUs asked for, target 13: drawn CPU-only pods (0 per GPU) are added, then the first
    # 8-GPU pod drawn is checked as 1000 (8000 + 1000 ≤ 13000) and added whole: 16 GPUs.
    pods = pods_of({D: 1, C: 1})
    tuned = artifact_arrivals(pods, 10, 1.3, random.Random(seed))[2:]
    assert tuned and all(a.gpu_milli == 0 for a in tuned[:-1]) and tuned[-1].gpu_milli == 8000
    assert sum(a.gpu_milli for a in tuned) + 8000 == 16_000


def test_above_the_target_random_pods_are_removed_until_it_is_reached():
    pods = pods_of({A: 20})  # 20 GPUs asked for, target 13 on 10 GPUs
    arrivals = [a.key for a in artifact_arrivals(pods, 10, 1.3, random.Random(9))]
    assert len(arrivals) == 13 and not any("-tuned-" in k for k in arrivals)
    shuffled = sorted(p.name for p in pods)
    random.Random(9).shuffle(shuffled)  # the same generator's first use: the shuffle
    assert [name for name in shuffled if name in set(arrivals)] == arrivals  # the rest keep their order
