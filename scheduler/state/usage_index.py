"""An index of nodes by GPU usage, so that a best-scoring feasible node is found without
scanning the cluster.

Nodes are grouped into classes of equal (GPU model, GPU count). Within a class the
allocation-based scores (LeastAllocated, MostAllocated) order nodes exactly by used
milli-GPUs, ties by node index; so the first node of a class, in that order, that passes
every filter is the class's best when ties go to the lowest index. Under the keyed draw the
walk goes on through the nodes of that score and keeps the least key
(`Framework._find_by_index`). The best over the (few) classes is then chosen by the real
score. The result is the node a full scan would pick.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator


class UsageClass:
    """Nodes of one (model, GPU count), bucketed by used milli-GPUs."""

    def __init__(self, capacity_milli: int) -> None:
        self.capacity_milli = capacity_milli
        self.levels: list[int] = []  # distinct used values, ascending
        self.nodes_at: dict[int, list[int]] = {}  # used → node indices, ascending

    def add(self, node: int, used: int) -> None:
        bucket = self.nodes_at.get(used)
        if bucket is None:
            self.nodes_at[used] = [node]
            insort(self.levels, used)
        else:
            insort(bucket, node)

    def remove(self, node: int, used: int) -> None:
        bucket = self.nodes_at[used]
        del bucket[bisect_left(bucket, node)]
        if not bucket:
            del self.nodes_at[used]
            del self.levels[bisect_left(self.levels, used)]

    def in_order(self, milli: int, most_allocated: bool) -> Iterator[int]:
        """Nodes that have at least `milli` unused milli-GPUs, best first."""
        for bucket in self.levels_in_order(milli, most_allocated):
            yield from bucket

    def levels_in_order(self, milli: int, most_allocated: bool) -> Iterator[list[int]]:
        """The nodes of each used level that leaves room for `milli`, best level first (the
        nodes of one level score alike)."""
        top = bisect_right(self.levels, self.capacity_milli - milli)  # levels that can fit
        levels = reversed(self.levels[:top]) if most_allocated else iter(self.levels[:top])
        for used in levels:
            yield self.nodes_at[used]


class UsageIndex:
    """The classes of the cluster's nodes, bucketed by used milli-GPUs once something first
    asks (`classes_for`: the walk of profiles whose ties fall to the lowest index or the keyed
    draw, and `framework/no_fit.py`), from the state's own `used` list, and kept up to date from then on (`kept`: the
    state reports every move only then). A replay that never asks never pays for it; an index
    built late holds what one kept from the start holds, since both bucket each node by its
    current use (`tests/scheduler/test_usage_index.py`)."""

    def __init__(self, used: list[int]) -> None:
        self.classes: dict[tuple[str, int], UsageClass] = {}
        self.class_of: list[tuple[str, int]] = []
        self._used = used  # the state's list (read, never written here)
        self.kept = False

    def add_node(self, node: int, model: str, gpus: int) -> None:
        key = (model, gpus)
        if key not in self.classes:
            self.classes[key] = UsageClass(gpus * 1000)
        self.class_of.append(key)
        if self.kept:
            self.classes[key].add(node, self._used[node])

    def moved(self, node: int, old_used: int, new_used: int) -> None:
        """`node` went from `old_used` to `new_used` milli-GPUs. Only once `kept`."""
        usage = self.classes[self.class_of[node]]
        usage.remove(node, old_used)
        usage.add(node, new_used)

    def classes_for(self, models: tuple[str, ...]) -> list[UsageClass]:
        if not self.kept:
            self._build()
        return [c for (model, gpus), c in self.classes.items() if gpus and (not models or model in models)]

    def _build(self) -> None:
        for node, key in enumerate(self.class_of):
            self.classes[key].add(node, self._used[node])
        self.kept = True
