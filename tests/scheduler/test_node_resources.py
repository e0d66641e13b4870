"""kube-default scores what the default scheduler scores: NodeResourcesFit (LeastAllocated)
and NodeResourcesBalancedAllocation over CPU and memory, integer arithmetic as upstream
(pkg/scheduler/framework/plugins/noderesources), best nodes drawn from at random
(schedule_one.go selectHost). GPU-aware scoring is the named profile kube-default-gpu."""

from __future__ import annotations

import pytest

from scheduler.model import Cluster, Node
from scheduler.plugins.node_resources import (
    NodeResourcesBalancedAllocation,
    NodeResourcesFitScore,
    Strategy,
)
from scheduler.state.cluster_state import ClusterState, PodRequest
from tests.scheduler.scenario import job, node, replay_rows, with_tie_break

GIB = 1024


def _state(cpu_milli: int, memory_mib: int, used_cpu: int = 0, used_memory: int = 0, gpus: int = 8) -> ClusterState:
    state = ClusterState(Cluster((Node("n", "A100", gpus, cpu_milli, memory_mib),)))
    if used_cpu or used_memory:
        state.allocate(("other", 0), 0, PodRequest(0, used_cpu, used_memory))
    return state


@pytest.mark.parametrize(("state", "request_", "want_fit", "want_balanced"), [
    pytest.param(_state(4000, 8 * GIB), PodRequest(1000, 1000, 2 * GIB), (75 + 75) // 2, 100,
                 id="an empty node: both resources three quarters free, perfectly balanced"),
    pytest.param(_state(4000, 8 * GIB, used_cpu=2000), PodRequest(1000, 1000, 2 * GIB), (25 + 72) // 2, 75,
                 id="half the CPU used by a pod without a memory request: it counts 200 MiB for the fit score"),
    pytest.param(_state(3000, 8 * GIB), PodRequest(1000, 1000, 1 * GIB), (66 + 87) // 2, 89,
                 id="integer division on each resource, then on the weighted mean"),
    pytest.param(_state(4000, 8 * GIB), PodRequest(1000, 0, 0), (97 + 97) // 2, 100,
                 id="a pod without requests counts as 100m CPU and 200 MiB for the fit score only"),
    pytest.param(_state(0, 0), PodRequest(1000, 1000, 2 * GIB), 0, 100,
                 id="a node that models neither resource scores nothing for them"),
])
def test_default_resource_scores_are_upstreams_integers(state, request_, want_fit, want_balanced):
    assert NodeResourcesFitScore().score(state, request_, 0) == want_fit
    assert NodeResourcesBalancedAllocation().score(state, request_, 0) == want_balanced


def test_most_allocated_and_gpu_resources_can_be_configured():
    state = _state(4000, 8 * GIB, used_cpu=1000)
    plugin = NodeResourcesFitScore.from_args({"scoring_strategy": "MostAllocated",
                                              "resources": [{"name": "nvidia.com/gpu", "weight": 2},
                                                            {"name": "cpu", "weight": 1}]})
    assert plugin.strategy is Strategy.MOST_ALLOCATED
    # GPUs: 2 of 8 after the pod = 25, weight 2; CPU: 2000 of 4000 = 50, weight 1
    assert plugin.score(state, PodRequest(2000, 1000, 0), 0) == (25 * 2 + 50) // 3
    with pytest.raises(ValueError, match="unknown resource"):
        NodeResourcesFitScore.from_args({"resources": [{"name": "disk"}]})


def _cpu_node(name: str, cpu_milli: int, gpus: int = 8) -> dict:
    return node(name, gpus=gpus) | {"cpu_milli": cpu_milli, "memory_mib": 64 * GIB}


def test_kube_default_places_by_cpu_and_memory_not_by_free_gpus(tmp_path):
    # n1 has more GPUs free, n2 more CPU free: the default scheduler looks at CPU and memory.
    nodes = [_cpu_node("n1", 8000, gpus=8), _cpu_node("n2", 64000, gpus=4)]
    pod = job("p", 0, 600, gpus=1) | {"cpu_milli_per_pod": 2000, "memory_mib_per_pod": 4 * GIB}
    (tmp_path / "cpu").mkdir()
    (tmp_path / "gpu").mkdir()
    by_cpu = replay_rows(tmp_path / "cpu", nodes, [pod], "kube-default")
    by_gpu = replay_rows(tmp_path / "gpu", nodes, [pod], "kube-default-gpu")
    assert [r["node"] for r in by_cpu if r["event"] == "started"] == ["n2"]
    assert [r["node"] for r in by_gpu if r["event"] == "started"] == ["n1"]


def _spread(tmp_path, seed: int, profile: str = "kube-default") -> list[str]:
    nodes = [_cpu_node(f"n{i}", 64000) for i in range(8)]
    pods = [job(f"p{i}", i, 10_000, gpus=1) | {"cpu_milli_per_pod": 1000, "memory_mib_per_pod": 1 * GIB}
            for i in range(3)]
    folder = tmp_path / f"s{seed}"
    folder.mkdir(parents=True)
    rows = replay_rows(folder, nodes, pods, profile, seed=seed)
    return [r["node"] for r in rows if r["event"] == "started"]


def test_equal_best_nodes_fall_by_the_heaps_order_on_every_seed(tmp_path):
    """kube-scheduler v1.35+: the first popped from the heap of scores (Randomizer 0). Eight
    equal nodes: p0 takes n0; n0 then scores lower and sinks, p1 takes n1; with n0 and n1
    lower, heap.Init lifts n3 above n1 and the root's tie goes to its left child: p2 takes n3."""
    assert {tuple(_spread(tmp_path / "heap", seed=seed)) for seed in (1, 2, 3)} == {("n0", "n1", "n3")}


def test_equal_best_nodes_are_drawn_at_random_reproducibly_per_seed(tmp_path):
    """tie_break = "random" (selectHost before v1.35): among the best-scoring nodes,
    uniformly, by seeded keys."""
    profile = with_tie_break("kube-default", "random")
    first = _spread(tmp_path, seed=1, profile=profile)
    assert _spread(tmp_path / "again", seed=1, profile=profile) == first
    draws = {tuple(_spread(tmp_path / "seeds", seed=seed, profile=profile)) for seed in range(2, 8)} | {tuple(first)}
    assert len(draws) > 1, "every seed drew the same nodes: ties are not drawn at random"
    # each pod goes to an untouched node (all equal until then): never a node already used
    assert all(len(set(draw)) == len(draw) for draw in draws)
