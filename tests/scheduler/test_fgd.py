"""FGD's fragmentation measure and score, and the packing heuristics of the fragmentation
study, on hand-built nodes with the expected numbers worked out in the comments."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.errors import InputError
from scheduler.framework.profile import Profile, _from_dict
from scheduler.framework.runtime import Framework
from scheduler.model import Cluster, Node
from scheduler.plugins.fgd import FgdScore, FragmentationMeasure, TargetWorkload, TaskType
from scheduler.plugins.packing import DotProd, GpuClustering, GpuPacking
from scheduler.state.cluster_state import ClusterState, Holding, PodRequest

# Half the tasks want one whole GPU, a quarter half a GPU, a quarter no GPU at all.
WORKLOAD = TargetWorkload(((TaskType(0, 1, 1000), 0.5), (TaskType(0, 1, 500), 0.25), (TaskType(0, 0, 0), 0.25)))


def state_with(*nodes: tuple[Node, list[int]]) -> ClusterState:
    """A cluster whose devices are already taken: each node with the milli-GPUs used per device."""
    state = ClusterState(Cluster(tuple(node for node, _ in nodes)))
    for index, (_, used) in enumerate(nodes):
        for device, milli in enumerate(used):
            if milli:  # a whole device taken, or a slice of this shared device (`restore` applies it as given)
                holding = Holding(index, 1, None, 0, 0) if milli == 1000 else Holding(index, 0, (device, milli), 0, 0)
                state.restore((f"held-{index}-{device}", 0), holding)
    return state


@pytest.mark.parametrize(
    ("free", "expected"),
    [
        # whole task: fits, no device below 1000 → 0; half task: fits → 0; CPU task: all 2000.
        ((1000, 1000), 0.25 * 2000),
        # whole: the 500 is a fragment; half: none below 500; CPU task: all 1500.
        ((500, 1000), 0.5 * 500 + 0.25 * 1500),
        # whole: 300 fragment; half: 300 fragment too; CPU: 1300.
        ((300, 1000), 0.5 * 300 + 0.25 * 300 + 0.25 * 1300),
        # no task with a GPU fits: everything free (600) is a fragment for all of them.
        ((300, 300), 600.0),
        ((0, 0), 0.0),
    ],
)
def test_node_fragmentation_is_the_expected_unusable_share(free, expected):
    measure = FragmentationMeasure(WORKLOAD)
    assert measure.of_key(("X", -1, free)) == pytest.approx(expected)


def test_tasks_lacking_cpu_or_the_model_see_every_free_share_as_a_fragment():
    workload = TargetWorkload(((TaskType(8000, 1, 1000), 0.5), (TaskType(0, 1, 1000, ("A100",)), 0.5)))
    measure = FragmentationMeasure(workload)
    # Enough CPU, model H100: only the A100 task is blocked → half of 2000.
    assert measure.of_key(("H100", 8000, (1000, 1000))) == pytest.approx(1000)
    # CPU short as well: both blocked.
    assert measure.of_key(("H100", 4000, (1000, 1000))) == pytest.approx(2000)
    # An A100 node with CPU: both fit, nothing fragmented.
    assert measure.of_key(("A100", 8000, (1000, 1000))) == 0
    # A node that does not model CPU (0) never lacks it.
    assert measure.of_key(("A100", -1, (1000, 1000))) == 0


def test_fgd_fills_a_half_used_gpu_where_bestfit_breaks_a_whole_one():
    # Node a: 2 GPUs, one fully used. Node b: 4 GPUs, half of one used.
    state = state_with((Node("a", "X", 2), [0, 1000]), (Node("b", "X", 4), [0, 0, 0, 500]))
    half = PodRequest(500)
    measure = FragmentationMeasure(WORKLOAD)
    # a: F 250 → 375 (its last whole GPU is halved: a fragment for whole-GPU tasks).
    assert measure.growth(state, 0, half) == pytest.approx(125)
    # b: F 1125 → 750 (the half GPU is filled: one fragment fewer).
    assert measure.growth(state, 1, half) == pytest.approx(-375)
    chosen = {}
    for plugin in ("FGD", "MostAllocated"):
        args = {"FGD": {"tasks": [{"gpus": 1, "gpu_milli": 1000, "weight": 2}, {"gpus": 1, "gpu_milli": 500},
                                  {"gpus": 0}]}}
        framework = Framework(Profile(name=plugin, unit="pod", scores=((plugin, 1.0),), plugin_args=args), random.Random(1))
        chosen[plugin] = framework.find_node(state, half)[0]
    assert chosen == {"FGD": 1, "MostAllocated": 0}
    score = FgdScore(measure)
    assert score.score(state, half, 1) > 50 > score.score(state, half, 0)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    gpus=st.integers(min_value=1, max_value=8),
    used=st.lists(st.sampled_from([0, 0, 250, 500, 700, 1000]), min_size=8, max_size=8),
    milli=st.sampled_from([0, 100, 300, 500, 1000, 2000, 4000]),
    cpu=st.integers(min_value=0, max_value=4000),
)
def test_the_key_after_a_placement_is_the_key_of_the_real_allocation(gpus, used, milli, cpu):
    state = state_with((Node("n", "X", gpus, 16000, 0), used[:gpus]))
    request = PodRequest(milli, cpu)
    if not state.gpu_fits(0, milli) and milli:
        return
    predicted = FragmentationMeasure.key_after(state, 0, request)
    if milli:
        state.allocate(("p", 0), 0, request)
    else:
        state.cpu_free[0] -= cpu
    assert predicted == FragmentationMeasure.key(state, 0)


def test_the_target_workload_is_the_popularity_of_the_task_shapes_cut_at_a_threshold():
    tasks = [TaskType(0, 1, 1000)] * 6 + [TaskType(0, 1, 500)] * 3 + [TaskType(0, 8, 1000)]
    full = TargetWorkload.from_tasks(tasks, popularity_threshold=1.0)
    assert full.types == ((TaskType(0, 1, 1000), 0.6), (TaskType(0, 1, 500), 0.3), (TaskType(0, 8, 1000), 0.1))
    cut = TargetWorkload.from_tasks(tasks, popularity_threshold=0.8)  # 60 % + 30 % ≥ 80 %: renormalised
    assert [(t, round(p, 4)) for t, p in cut.types] == [(TaskType(0, 1, 1000), 0.6667), (TaskType(0, 1, 500), 0.3333)]
    assert TaskType.of_request(PodRequest(2000, 500, 0, ("A",))) == TaskType(500, 2, 1000, ("A",))
    assert TaskType.of_request(PodRequest(300)) == TaskType(0, 1, 300)
    assert TaskType.of_request(PodRequest(0, 700)) == TaskType(700, 0, 0)


def test_a_profile_names_fgd_with_its_target_workload_and_bad_tasks_name_the_field():
    profile = _from_dict(
        {"name": "fgd", "unit": "pod", "extension_points": {"score": [["FGD", 1]]},
         "plugin_args": {"FGD": {"tasks": [{"gpus": 1, "gpu_milli": 500, "models": "A|B", "weight": 3}, {"gpus": 2}]}}},
        "fgd.toml",
    )
    (plugin, _), = Framework(profile, random.Random(1)).scores
    assert plugin.measure.workload.types == ((TaskType(0, 1, 500, ("A", "B")), 0.75), (TaskType(0, 2, 1000), 0.25))
    with pytest.raises(InputError, match=r"field 'plugin_args.FGD.tasks\[0\]'"):
        FgdScore.from_args({"tasks": [{"gpus": 1, "gpu_milli": 1500}]})
    default = FgdScore.from_args({}).measure.workload
    assert len(default.types) == 6 and sum(p for _, p in default.types) == pytest.approx(1)


def test_gpu_packing_prefers_shared_gpus_then_used_nodes_then_small_empty_nodes():
    state = state_with(
        (Node("empty-8", "X", 8), []),
        (Node("empty-2", "X", 2), []),
        (Node("used", "X", 4), [1000, 1000]),
        (Node("shared", "X", 4), [0, 0, 0, 600]),
        (Node("shared-fuller", "X", 4), [0, 0, 0, 800]),
    )
    packing = GpuPacking()
    half, whole = PodRequest(200), PodRequest(1000)
    scores = [packing.score(state, half, n) for n in range(5)]
    assert scores[4] > scores[3] > scores[2] > scores[1] > scores[0]
    # A whole GPU cannot share: a used node still beats an empty one.
    assert packing.score(state, whole, 2) > packing.score(state, whole, 1)
    assert packing.score(state, PodRequest(0, 1000), 2) == 0.0


def test_gpu_clustering_keeps_pods_of_one_request_class_together():
    state = ClusterState(Cluster((Node("only-half", "X", 4), Node("mixed", "X", 4), Node("empty", "X", 4), Node("whole", "X", 4))))
    state.allocate(("a", 0), 0, PodRequest(500))
    state.allocate(("b", 0), 1, PodRequest(500))
    state.allocate(("c", 0), 1, PodRequest(1000))
    state.allocate(("d", 0), 3, PodRequest(1000))
    clustering = GpuClustering()
    scores = [clustering.score(state, PodRequest(300), n) for n in range(4)]
    assert scores[0] > scores[1] > scores[2] > scores[3]
    assert 75 <= scores[0] <= 100 and 50 <= scores[1] < 75 and 25 <= scores[2] < 50 and scores[3] < 25


def test_dot_prod_prefers_the_node_whose_free_resources_align_least_with_the_request():
    state = state_with((Node("free", "X", 4, 32000, 0), []), (Node("busy", "X", 4, 32000, 0), [1000, 1000, 1000]))
    request = PodRequest(1000, 8000)
    dot = DotProd()
    # free: (1·0.25 + 1·0.25)/2 → 75; busy: (1·0.25 + 0.25·0.25)/2 → 84.375.
    assert dot.score(state, request, 0) == pytest.approx(75.0)
    assert dot.score(state, request, 1) == pytest.approx(84.375)
