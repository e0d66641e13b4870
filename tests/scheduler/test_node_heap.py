"""Table tests for the node-order rules (kube-scheduler v1.35+, `schedule_one.go` /
`algorithm.go`): the heap's pop order (`newSortedNodeScores`, Go's `container/heap` with
Randomizer 0) and numFeasibleNodesToFind."""

from __future__ import annotations

import heapq

import pytest

from scheduler.framework.node_heap import SortedScoredNodes, heap_choice
from scheduler.framework.runtime import feasible_nodes_to_find


@pytest.mark.parametrize(("scores", "first"), [
    ([7], 0),
    ([5, 9, 9], 1),  # the first of the tied best climbs to the root
    ([5, 3, 9, 9], 3),  # index 3 climbs under index 1, then wins the root's tie as the left child
    ([9, 9, 9, 9], 0),  # all equal: no swap at all
    ([1, 2, 3, 4, 5], 4),  # a unique best is the root whatever the shape
    ([1, 4, 4, 2, 4], 1),
])
def test_the_first_pop_is_gos_heap_root(scores, first):
    assert heap_choice([(score, node) for node, score in enumerate(scores)]) == first


def test_popping_on_gives_gos_order_among_ties():
    """Worked by hand through container/heap's Init, Pop and down."""
    heap = SortedScoredNodes([(1, 0), (4, 1), (4, 2), (2, 3), (4, 4)])
    assert [heap.pop() for _ in range(5)] == [1, 4, 2, 3, 0]


def test_pops_come_in_score_order():
    """Whatever the ties, scores come out highest first (it is a heap)."""
    import random

    draw = random.Random(5)
    for _ in range(200):
        scored = [(draw.randrange(4), node) for node in range(draw.randrange(1, 30))]
        heap = SortedScoredNodes(scored)
        popped = [heap.pop() for _ in range(len(scored))]
        score = dict((node, s) for s, node in scored)
        assert [score[n] for n in popped] == sorted((s for s, _ in scored), reverse=True)
        assert sorted(popped) == sorted(n for _, n in scored)
        assert heapq.nlargest(1, (s for s, _ in scored))[0] == score[popped[0]]


@pytest.mark.parametrize(("percentage", "nodes", "wanted"), [
    (0, 50, 50),  # fewer than 100 nodes: all of them
    (0, 99, 99),
    (0, 120, 100),  # 50 % = 60, at least 100
    (0, 1000, 420),  # 50 − 1000/125 = 42 %
    (0, 2052, 697),  # 50 − 16 = 34 %
    (0, 5000, 500),  # 50 − 40 = 10 %
    (0, 10000, 500),  # 50 − 80 < 5: 5 %
    (10, 2000, 200),
    (1, 2000, 100),  # at least 100
    (100, 2000, 2000),
])
def test_num_feasible_nodes_to_find(percentage, nodes, wanted):
    assert feasible_nodes_to_find(float(percentage), nodes) == wanted


def test_the_root_found_by_pre_order_rank_is_the_heap_s_on_random_ties():
    """heap_choice finds the root without building the heap; against heap.Init itself."""
    import random

    draw = random.Random(11)
    for _ in range(3000):
        scored = [(float(draw.randrange(3)), node) for node in range(draw.randrange(1, 60))]
        assert heap_choice(scored) == SortedScoredNodes(scored).peek(), scored
