"""The heap's root in C (`native_walk.heap_root`) against `heap_choice`'s Python rule and the
heap itself (`SortedScoredNodes(...).peek()`, Go's heap.Init).

Hypothesis draws (score, node) lists of 1 to 3,000 entries in tie patterns: a few distinct
scores (0.0 and -0.0 among them, equal as Python compares them), long runs of one score,
a single best anywhere, every entry tied; all three must name the same node.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.framework import node_heap
from scheduler.framework.node_heap import SortedScoredNodes, heap_choice, python_heap_choice
from scheduler.framework.node_search import fold_root
from tests.scheduler.native_kernel import build_kernel

FUZZ = settings(max_examples=400, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
LEVELS = (0.0, -0.0, 1.0, 37.5, 37.50000000000001, 100.0, -3.25, 1e-300, 5e-324)


@pytest.fixture(scope="module")
def heap_root(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("native-heap-root")).heap_root


@st.composite
def tie_patterns(draw: st.DrawFn) -> list[tuple[float, int]]:
    size = draw(st.one_of(st.integers(1, 40), st.integers(1, 3000)))
    levels = draw(st.lists(st.sampled_from(LEVELS), min_size=1, max_size=4))
    pattern = draw(st.sampled_from(("uniform", "runs", "one best", "all tied")))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if pattern == "all tied":
        scores = [rng.choice((0.0, -0.0)) if levels[0] == 0.0 else levels[0] for _ in range(size)]
    elif pattern == "runs":
        scores = []
        while len(scores) < size:
            scores += [rng.choice(levels)] * rng.randint(1, 200)
        scores = scores[:size]
    else:
        scores = [rng.choice(levels) for _ in range(size)]
        if pattern == "one best":
            scores[rng.randrange(size)] = 1000.0
    nodes = rng.sample(range(10 * size), size)  # node ids in no particular order
    return list(zip(scores, nodes, strict=True))


@FUZZ
@given(tie_patterns())
def test_the_c_root_is_the_python_rules_and_the_heaps(heap_root, scored):
    expected = SortedScoredNodes(scored).peek()
    assert python_heap_choice(scored) == expected
    assert heap_root(scored) == expected


def test_heap_choice_takes_the_kernels_answer_where_it_is_loaded(heap_root, monkeypatch):
    calls = []

    def counted(scored):
        calls.append(len(scored))
        return heap_root(scored)

    monkeypatch.setattr(node_heap, "HEAP_ROOT", counted)
    scored = [(1.0, 7), (2.0, 3), (2.0, 9), (0.5, 1), (2.0, 4)]
    assert heap_choice(scored) == SortedScoredNodes(scored).peek() and calls == [5]


def test_scores_python_compares_differently_are_left_to_python(heap_root, monkeypatch):
    """An int score (Python compares it with floats exactly) or a NaN: the kernel answers None
    and heap_choice applies the Python rule."""
    assert heap_root([(1.0, 0), (2, 1)]) is None
    assert heap_root([(1.0, 0), (float("nan"), 1)]) is None
    monkeypatch.setattr(node_heap, "HEAP_ROOT", heap_root)
    assert heap_choice([(2.0, 0), (2**53 + 1, 1), (float(2**53), 2)]) == 1


def test_the_kernel_refuses_what_is_not_a_list_of_pairs(heap_root):
    for wrong in ([], ((1.0, 0),), [(1.0,)], [1.0]):
        with pytest.raises(TypeError, match="list of \\(score, node\\)"):
            heap_root(wrong)


@FUZZ
@given(tie_patterns())
def test_the_root_folded_as_nodes_come_is_the_heaps(scored):
    """`node_search.fold_root` (the walk's running root where Python scores a node): the
    entries folded in scan order end at the heap's root."""
    root: list[object] = [0, 0.0, -1, -1]
    for score, node in scored:
        fold_root(root, score, node)
    assert root[0] == len(scored) and root[3] == SortedScoredNodes(scored).peek()
