"""The per-node integers the native walk reads that change as pods come and go, as flat int64
arrays (`array('q')`) beside `ClusterState`'s lists (`framework/native_walk.c`).

The lists stay the state (the Python walk, the plugins and every other reader use them); the
arrays are a copy for the kernel, which reads them through the buffer protocol once per call
instead of one int object per node and field (a cache miss each: the objects of large ints
lie wherever they were allocated). `ClusterState` writes both wherever it writes the list
(`_apply` and `_unapply`, which allocate, release, restore and roll back go through). A value
int64 cannot hold, or that is near its bounds, is stored as BEYOND_INT64: the kernel hands that
node to Python, which compares the list's exact int.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Final, Protocol

BEYOND_INT64: Final = -9223372036854775808  # -2**63: "read the list" (never a count kept exactly)
FLAT_LIMIT: Final = 4611686018427387904  # 2**62: counts below it in size are kept exactly


def flat(value: int) -> int:
    """`value` as the array keeps it."""
    return value if -FLAT_LIMIT < value < FLAT_LIMIT else BEYOND_INT64


class Lists(Protocol):
    """The lists the arrays follow (`ClusterState`'s)."""

    cpu_free: list[int]
    memory_free: list[int]
    used: list[int]
    whole_free: list[int]


class FlatCounts:
    """Per node, as the kernel reads them: free CPU (milli-cores), free memory (MiB),
    milli-GPUs held and whole free GPUs."""

    FIELDS: Final = ("cpu_free", "memory_free", "used", "whole_free")

    def __init__(self, cpu_free: Sequence[int], memory_free: Sequence[int], used: Sequence[int],
                 whole_free: Sequence[int]) -> None:
        self.cpu_free = array("q", map(flat, cpu_free))
        self.memory_free = array("q", map(flat, memory_free))
        self.used = array("q", map(flat, used))
        self.whole_free = array("q", map(flat, whole_free))

    def differences(self, lists: Lists) -> list[tuple[str, int]]:
        """(field, node) wherever an array does not hold what its list holds (a writer that
        forgot the array); empty when they agree."""
        if (self.cpu_free.tolist() == lists.cpu_free and self.memory_free.tolist() == lists.memory_free
                and self.used.tolist() == lists.used and self.whole_free.tolist() == lists.whole_free):
            return []  # every count within the arrays' range and equal: no value to flatten
        return [(name, node) for name in self.FIELDS
                for node, (kept, exact) in enumerate(zip(getattr(self, name), getattr(lists, name), strict=True))
                if kept != flat(exact)]
