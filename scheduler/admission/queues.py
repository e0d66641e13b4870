"""The pending workloads of one ClusterQueue: a heap and an inadmissible set.

Source: kueue pkg/cache/queue/cluster_queue.go, inadmissible_workloads.go (semantics
reference §4.3).

- Heap order: the sticky preemptor first, then priority desc, queue-order timestamp asc,
  then arrival (Kueue's UID).
- Each admission cycle pops one head per ClusterQueue.
- After a failed attempt: StrictFIFO always puts the head straight back (it is retried every
  cycle and blocks everything behind it); BestEffortFIFO puts it back only when the failure
  was transient (skipped after another admission, or pending preemption) and otherwise moves
  it to the inadmissible set, so the next workload becomes the head. A requeue of the
  inadmissible set that happened after the pop sends it back to the heap too.
- Scheduling-equivalence hashing: when a BestEffortFIFO head does not fit (or finds no
  preemption candidates), every heap workload of the same shape goes to the inadmissible set
  with it.
- A workload that issued preemptions stays the head of a BestEffortFIFO queue until it is
  admitted or fails otherwise, so that nobody else takes the quota it freed.
- Inadmissible workloads return to the heap when the cohort tree's capacity changes
  (`requeue_inadmissible`); those in PodsReady backoff wait for their time.

`positions` keeps every pending workload's queue key sorted, for "position N of M".
"""

from __future__ import annotations

import bisect
import heapq
import itertools

from scheduler.admission.workloads import AdmissionWorkload


class PendingQueue:
    def __init__(self, name: str, queueing_strategy: str) -> None:
        self.name = name
        self.strict_fifo = queueing_strategy == "StrictFIFO"
        self._heap: list[tuple[tuple[int, float, int], int, AdmissionWorkload]] = []
        self._token: dict[str, int] = {}  # workload -> its live heap entry
        self._tokens = itertools.count()
        self._shapes: dict[tuple[object, ...], dict[str, AdmissionWorkload]] = {}
        self.inadmissible: dict[str, AdmissionWorkload] = {}
        self.sticky: AdmissionWorkload | None = None
        self.requeues = 0  # bumped by every requeue of the inadmissible set
        self._positions: list[tuple[int, float, int]] = []
        self._members: dict[str, tuple[int, float, int]] = {}

    def __len__(self) -> int:
        return len(self._members)

    @property
    def has_heads(self) -> bool:
        return bool(self._token)

    # -- membership ---------------------------------------------------------------------

    def push(self, wl: AdmissionWorkload) -> None:
        """Into the heap (a newcomer, a requeue, or back from the inadmissible set)."""
        self.inadmissible.pop(wl.name, None)
        self._track(wl)
        token = next(self._tokens)
        self._token[wl.name] = token
        heapq.heappush(self._heap, (wl.queue_key, token, wl))
        self._shapes.setdefault(wl.shape, {})[wl.name] = wl

    def park(self, wl: AdmissionWorkload) -> None:
        """Into the inadmissible set."""
        self._unheap(wl)
        self._track(wl)
        self.inadmissible[wl.name] = wl
        if self.sticky is wl:
            self.sticky = None

    def remove(self, wl: AdmissionWorkload) -> None:
        """The workload left the queue (admitted, deactivated)."""
        self._unheap(wl)
        self.inadmissible.pop(wl.name, None)
        key = self._members.pop(wl.name, None)
        if key is not None:
            del self._positions[bisect.bisect_left(self._positions, key)]
        if self.sticky is wl:
            self.sticky = None

    def _track(self, wl: AdmissionWorkload) -> None:
        key = wl.queue_key
        old = self._members.get(wl.name)
        if old == key:
            return
        if old is not None:
            del self._positions[bisect.bisect_left(self._positions, old)]
        self._members[wl.name] = key
        bisect.insort(self._positions, key)

    def _unheap(self, wl: AdmissionWorkload) -> None:
        if self._token.pop(wl.name, None) is not None:
            shape = self._shapes.get(wl.shape)
            if shape is not None:
                shape.pop(wl.name, None)

    # -- a cycle ------------------------------------------------------------------------

    def pop_head(self) -> AdmissionWorkload | None:
        """The next workload to try; it stays a member until requeued or removed."""
        sticky = self.sticky
        if sticky is not None and sticky.name in self._token:
            self._unheap(sticky)
            return sticky
        while self._heap:
            _, token, wl = heapq.heappop(self._heap)
            if self._token.get(wl.name) == token:
                self._unheap(wl)
                return wl
        return None

    def requeue(self, wl: AdmissionWorkload, *, transient: bool, requeues_at_pop: int) -> bool:
        """Put a head back after a failed attempt; True when it went to the inadmissible set."""
        if self.strict_fifo or transient or self.requeues != requeues_at_pop:
            self.push(wl)
            return False
        self.park(wl)
        return True

    def park_equivalents(self, wl: AdmissionWorkload) -> list[AdmissionWorkload]:
        """Scheduling-equivalence hashing: heap workloads shaped like `wl` fail alike."""
        if self.strict_fifo:
            return []
        same = list(self._shapes.get(wl.shape, {}).values())
        for other in same:
            self.park(other)
        return same

    def requeue_inadmissible(self, now: float) -> int:
        """Capacity changed in the cohort tree: inadmissible workloads get another try."""
        self.requeues += 1
        ready = [wl for wl in self.inadmissible.values() if wl.requeue_at_s <= now]
        for wl in sorted(ready, key=lambda w: w.queue_key):
            self.push(wl)
        return len(ready)

    def position(self, wl: AdmissionWorkload) -> tuple[int, int]:
        """(1-based position among this queue's pending workloads, how many are pending)."""
        key = self._members.get(wl.name, wl.queue_key)
        return bisect.bisect_left(self._positions, key) + 1, len(self._positions)
