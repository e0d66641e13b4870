"""Virtual free GPUs per node and priority level: what a node would have free if every pod of
lower priority than a preemptor were gone (free milli-GPUs + milli-GPUs held below it).

Workload-aware preemption starts by taking every lower-priority group off the state and
planning the preemptor; on a saturated cluster most such attempts find that even then the
preemptor does not fit, after removing (and putting back) hundreds of groups. A pod of `r`
milli-GPUs needs `r` free milli-GPUs on its node, so no plan can place more than
Σ over nodes ⌊virtual free ÷ r⌋ pods: when that count is below what the preemptor needs,
the attempt's answer is "no" without touching the state.

One level per preemptor priority that asked (built at its first question, from the
holdings), each a histogram per GPU model of how many nodes have v virtual free
milli-GPUs, so a count reads a few buckets rather than every node. A pod of priority q
taking m milli-GPUs leaves every level above q unchanged (free falls by m, held-below rises
by m) and lowers every level at or below q by m: an allocation touches only those levels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.model import Node
from scheduler.model.workload import MILLI


class _Level:
    """Virtual free milli-GPUs per node below one priority, and their histogram per model."""

    def __init__(self, nodes: tuple[Node, ...], virtual_free: list[int]) -> None:
        self.virtual_free = virtual_free
        self.models = [node.gpu_model for node in nodes]
        self.histogram: dict[str, dict[int, int]] = {}
        for model, free in zip(self.models, virtual_free, strict=True):
            counts = self.histogram.setdefault(model, {})
            counts[free] = counts.get(free, 0) + 1

    def shift(self, node: int, delta: int) -> None:
        before = self.virtual_free[node]
        after = before + delta
        self.virtual_free[node] = after
        counts = self.histogram[self.models[node]]
        if counts[before] == 1:
            del counts[before]
        else:
            counts[before] -= 1
        counts[after] = counts.get(after, 0) + 1


class VirtualFreeIndex:
    def __init__(self, nodes: tuple[Node, ...], used: list[int],
                 holdings: Callable[[], list[tuple[int, int, int]]]) -> None:
        self._nodes = nodes
        self._used = used  # the state's own list (read only)
        self._holdings = holdings  # (node, holder priority, milli-GPUs) of every pod holding GPUs
        self.levels: dict[int, _Level] = {}  # preemptor priority → its level, once asked

    def taken(self, node: int, holder_priority: int, milli: int) -> None:
        """A pod of `holder_priority` took `milli` milli-GPUs of `node` (negative: gave back)."""
        for priority, level in self.levels.items():
            if holder_priority >= priority:
                level.shift(node, -milli)

    def pods_at_most(self, priority: int, models: tuple[str, ...], milli: int, enough: int) -> int:
        """An upper bound on how many pods of `milli` milli-GPUs each fit on nodes of `models`
        (any: ()) once every pod below `priority` is gone; counting stops at `enough`."""
        level = self.levels.get(priority) or self._build(priority)
        found = 0
        for model, counts in level.histogram.items():
            if models and model not in models:
                continue
            for free, nodes in counts.items():
                found += nodes * (free // milli)
            if found >= enough:
                return found
        return found

    def _build(self, priority: int) -> _Level:
        virtual_free = [node.gpus * MILLI - used for node, used in zip(self._nodes, self._used, strict=True)]
        for node, holder_priority, milli in self._holdings():
            if holder_priority < priority:
                virtual_free[node] += milli
        level = self.levels[priority] = _Level(self._nodes, virtual_free)
        return level


class LevelChanges:
    """Pods that changed since each priority level's view (`scheduler/state/level_views.py`) was
    last brought up to date: per level, pod → its holding now (None: released). Only pods
    at or above a level are in its view, so only their changes are noted there; a what-if
    that rolls back leaves an entry that the next update finds already true."""

    def __init__(self) -> None:
        self.pending: dict[int, dict[tuple[str, int], Any]] = {}  # level → pod → Holding | None

    def changed(self, key: tuple[str, int], holder_priority: int, holding: object) -> None:
        for level, pending in self.pending.items():
            if holder_priority >= level:
                pending[key] = holding
