"""Who holds quota, indexed for preemption: per ClusterQueue and flavor-resource, in
Kueue's candidate order (lower priority first, then most recently admitted, then id).

Preemption looks for victims among the workloads of a queue that use a contested
flavor-resource, in that order, and usually stops after a few: iterating a sorted index
lazily costs what is used, where classifying every holder of every queue on every
attempt cost what is held (thousands on a large cluster).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Iterator

from scheduler.admission.quota import FlavorResource
from scheduler.admission.workloads import AdmissionWorkload

OrderKey = tuple[int, float, int]


def order_key(wl: AdmissionWorkload) -> OrderKey:
    """Kueue's CandidatesOrdering inside one class: priority asc, newest admission first, id."""
    return (wl.priority, -(wl.admitted_s or 0.0), wl.seq)


class Holders:
    def __init__(self, queues: Iterable[str]) -> None:
        self.by_queue: dict[str, dict[str, AdmissionWorkload]] = {q: {} for q in queues}
        self._sorted: dict[str, dict[FlavorResource, list[tuple[OrderKey, AdmissionWorkload]]]] = {q: {} for q in self.by_queue}
        self.evicting: dict[str, AdmissionWorkload] = {}  # evicted, quota not yet released
        # queue -> flavor-resource -> priority -> usage held: how much preemption could free
        self._totals: dict[str, dict[FlavorResource, dict[int, int]]] = {q: {} for q in self.by_queue}

    def of(self, queue: str) -> list[AdmissionWorkload]:
        return list(self.by_queue[queue].values())

    def add(self, queue: str, wl: AdmissionWorkload) -> None:
        self.by_queue[queue][wl.name] = wl
        key = order_key(wl)
        for fr, value in wl.usage.items():
            # Entries compare by their keys alone: `seq` makes a key unique to its workload.
            bisect.insort(self._sorted[queue].setdefault(fr, []), (key, wl))
            by_priority = self._totals[queue].setdefault(fr, {})
            by_priority[wl.priority] = by_priority.get(wl.priority, 0) + value

    def remove(self, queue: str, wl: AdmissionWorkload) -> None:
        if self.by_queue[queue].pop(wl.name, None) is None:
            return
        self.evicting.pop(wl.name, None)
        key = order_key(wl)
        for fr, value in wl.usage.items():
            self._totals[queue][fr][wl.priority] -= value
            entries = self._sorted[queue].get(fr, [])
            index = bisect.bisect_left(entries, (key,))  # (key,) sorts just before (key, wl)
            if index < len(entries) and entries[index][1] is wl:
                del entries[index]

    def held_below(self, queue: str, fr: FlavorResource, below_priority: int | None) -> int:
        """Usage of `fr` held in `queue` by workloads of priority below the bound (all: None)."""
        by_priority = self._totals[queue].get(fr, {})
        return sum(v for p, v in by_priority.items() if below_priority is None or p < below_priority)

    def mark_evicting(self, wl: AdmissionWorkload) -> None:
        self.evicting[wl.name] = wl

    def ordered(self, queue: str, frs: frozenset[FlavorResource], below_priority: int | None) -> Iterator[AdmissionWorkload]:
        """Holders of `queue` using any of `frs`, not being evicted, in candidate order;
        stops at `below_priority` (exclusive) when given."""
        lists = [self._sorted[queue].get(fr, []) for fr in frs]
        # One workload in several lists is one object with one key: merge's own tie-break
        # (the list's order) decides between its entries, never the workload.
        stream = lists[0] if len(lists) == 1 else heapq.merge(*lists)
        seen: set[str] = set()
        for key, wl in stream:
            if below_priority is not None and key[0] >= below_priority:
                return
            if wl.name in seen or wl.name in self.evicting:
                continue
            seen.add(wl.name)
            yield wl
