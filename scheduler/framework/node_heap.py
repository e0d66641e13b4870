"""The node kube-scheduler takes among the best-scored ones: the first popped from a heap.

Since v1.35 `schedulePod` (pkg/scheduler, `schedule_one.go`; `algorithm.go` on master) builds
`newSortedNodeScores` over the scored feasible nodes, a `container/heap` whose `Less` is
"higher TotalScore, or equal score and higher Randomizer", and takes `Pop()`. The Randomizer
is set only for nodes an extender scored (`prioritizeNodes`); the replay has no extenders,
so every Randomizer is 0 and ties fall by the heap's own order: the node Go's `heap.Init`
(Floyd's bottom-up sift-down, left child first on a tie, no swap between equals) leaves at
the root, over the feasible nodes in the order the filter scan found them. That is neither
the first tied node of the scan nor a draw: a tied node deeper in the heap can climb past a
tied node nearer the root (`tests/scheduler/test_node_heap.py` has the cases).

`SortedScoredNodes` keeps popping in the same order (`heap.Pop`: swap the root with the
last element, sift down over the rest), which OpportunisticBatching hands out as hints
(`batch.py`); `unordered` is its `UnorderedList` (the heap's internal order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

HeapRoot = Callable[[list[tuple[float, int]]], "int | None"]  # native_walk.heap_root (native_walk.pyi)


def load_heap_root() -> HeapRoot | None:
    """`heap_choice`'s rule in C where it is built and the build runs compiled
    (`scheduler/compiled.py` keeps it out of the pure tree); else None: the rule in Python."""
    try:
        from scheduler.framework.native_walk import heap_root
    except ImportError:
        return None
    return heap_root


HEAP_ROOT = load_heap_root()  # read by each heap_choice (a test swaps it)


class SortedScoredNodes:
    """Go's `container/heap` over (score, node) pairs, max-score first, with its exact order."""

    def __init__(self, scored: Sequence[tuple[float, int]]) -> None:
        self._heap = list(scored)
        n = len(self._heap)
        for i in range(n // 2 - 1, -1, -1):  # heap.Init
            self._down(i, n)

    def __len__(self) -> int:
        return len(self._heap)

    def unordered(self) -> list[tuple[float, int]]:
        """UnorderedList: a copy of the (score, node) pairs in the heap's internal order."""
        return list(self._heap)

    def peek(self) -> int:
        """The node `pop` would return."""
        return self._heap[0][1]

    def pop(self) -> int:
        """heap.Pop: the root's node; the rest stays a heap."""
        heap = self._heap
        last = len(heap) - 1
        heap[0], heap[last] = heap[last], heap[0]
        self._down(0, last)
        return heap.pop()[1]

    def _down(self, i: int, n: int) -> None:
        """container/heap's down: `Less(j, i)` is "scores strictly higher" (Randomizer 0)."""
        heap = self._heap
        while True:
            j = 2 * i + 1
            if j >= n:
                return
            if j + 1 < n and heap[j + 1][0] > heap[j][0]:
                j += 1  # the right child only when strictly better
            if not heap[j][0] > heap[i][0]:
                return
            heap[i], heap[j] = heap[j], heap[i]
            i = j


def heap_choice(scored: list[tuple[float, int]]) -> int:
    """The node `newSortedNodeScores(scored).Pop()` returns (`scored` in scan order, not
    empty), without building the heap: the best-scoring entry first in the pre-order of the
    heap's tree (`preorder_rank`). Why: heap.Init sifts down from the last parent to the
    root; a best-scoring entry never moves down (no child is strictly better), and a parent
    that scores lower takes its left child's subtree's root when that subtree holds a best
    score, else its right child's (Less is strict, so a tie goes left). By induction the
    root of every subtree is its first best entry in pre-order (the node itself, then its
    left subtree, then its right). `SortedScoredNodes(scored).peek()` is the plain twin.
    In the compiled build the C kernel (`native_walk.heap_root`) applies the same rule in one
    pass; it leaves to this code only scores that are not floats, or NaN."""
    if HEAP_ROOT is not None:
        node = HEAP_ROOT(scored)
        if node is not None:
            return node
    return python_heap_choice(scored)


def python_heap_choice(scored: Sequence[tuple[float, int]]) -> int:
    """`heap_choice`'s rule in Python: the best score, then the least `preorder_rank`."""
    top = max(score for score, _ in scored)
    best = [position for position, (score, _) in enumerate(scored) if score == top]
    if len(best) == 1:
        return scored[best[0]][1]
    depth = len(scored).bit_length()
    return scored[min(best, key=lambda position: preorder_rank(position, depth))][1]


def preorder_rank(position: int, depth: int) -> tuple[int, int]:
    """A key that orders heap positions (0-based) as a pre-order walk of the heap's tree
    visits them: the path from the root (the bits of position + 1 after the leading one,
    0 = left), left-aligned to `depth` bits; an ancestor (a prefix) before its descendants."""
    one_based = position + 1
    level = one_based.bit_length()
    return one_based << (depth - level), level
