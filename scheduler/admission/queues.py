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
  So does a head whose flavor scan has flavors still to try (PendingFlavors; the admitter
  passes it as transient).
- Scheduling-equivalence hashing: when a BestEffortFIFO head does not fit (or finds no
  preemption candidates), every heap workload of the same shape goes to the inadmissible set
  with it.
- The workload that issued preemptions is the queue's preemptor (Kueue's preemptorWorkload)
  until it is admitted, leaves, or is found unschedulable (parked). In a BestEffortFIFO queue
  it stays the head meanwhile, so that nobody else takes the quota it freed (sticky); a
  StrictFIFO queue keeps its heap order. With PrioritizePreemptorWorkloads the admitter also
  orders it first in the cycle.
- Inadmissible workloads return to the heap when the cohort tree's capacity changes
  (`requeue_inadmissible`). Those in PodsReady backoff are not in the queue at all until
  their time comes (`KueueAdmission.submit` queues them then).

Why the heap is partly lazy: a requeue moves every inadmissible workload back, and the
first head of each shape that fails again sends its whole shape back (equivalence hashing).
With thousands pending, doing that one workload at a time costs O(pending) per released
workload. So each shape keeps its inadmissible workloads, and the ones requeued but not yet
tried ("dormant"), as sorted lists moved whole. Only the dormant workload with the smallest
key of each shape sits in the real heap; when it leaves, the next one takes its place. Every
dormant workload has a key above its shape's heap representative, so heads come out in
exactly the order one heap of everybody would give.

`positions` keeps every pending workload's queue key sorted, for "position N of M".

Admission fair sharing (`admission_fair_sharing`, a ClusterQueue in
UsageBasedAdmissionFairSharing mode): the heap orders by (LocalQueue usage, queue key), the
sticky preemptor first only among equal usage (cluster_queue.go `queueOrderingFunc` puts the
usage before `baseCompareFunc`). Usage moves with samples and admissions, so the heap is
rebuilt whenever the ClusterQueue's usage version moved since the last pop (as Kueue's
`RebuildActiveHeap`), and requeued workloads go into the heap at once (no dormant lists: one
shape's workloads can sit in LocalQueues of different usage).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.admission.policies import QueueingStrategy
from scheduler.admission.workloads import AdmissionWorkload, WorkloadShape

if TYPE_CHECKING:
    from scheduler.admission.admission_fair_sharing import QueueUsage
    from scheduler.verify import ClockedVerifier

Entry = tuple[tuple[int, float, int], AdmissionWorkload]  # (queue key, workload)


@dataclass(eq=False)
class _Shape:
    """The queue's workloads of one scheduling shape that are not physically in the heap."""

    parked: list[Entry] = field(default_factory=list)  # inadmissible, sorted by key
    dormant: list[Entry] = field(default_factory=list)  # requeued, not yet tried; sorted
    reason: str | None = None  # why the parked ones wait, as last said to all of them


class PendingQueue:
    def __init__(self, name: str, queueing_strategy: QueueingStrategy, fair_usage: QueueUsage | None = None) -> None:
        self.name = name
        self.strict_fifo = queueing_strategy is QueueingStrategy.STRICT_FIFO
        self.fair_usage = fair_usage  # admission fair sharing: LocalQueue usage orders first
        self._usage_version = -1  # the usage version the heap's keys were computed at
        self.check: ClockedVerifier | None = None  # `replay --verify`: the fair head against a plain scan
        self._heap: list[tuple[Any, int, AdmissionWorkload]] = []
        self._token: dict[str, int] = {}  # workload -> its live heap entry
        self._tokens = itertools.count()
        self._in_heap: dict[WorkloadShape, dict[str, AdmissionWorkload]] = {}  # by shape
        self._shapes: dict[WorkloadShape, _Shape] = {}
        self._parked: dict[WorkloadShape, _Shape] = {}  # the shapes with inadmissible workloads
        self.preemptor: AdmissionWorkload | None = None  # waiting for the workloads it preempted
        self.requeues = 0  # bumped by every requeue of the inadmissible set
        self._positions: list[tuple[int, float, int]] = []
        self._members: dict[str, tuple[int, float, int]] = {}

    def __len__(self) -> int:
        return len(self._members)

    @property
    def has_heads(self) -> bool:
        return bool(self._token)  # a shape with dormant workloads always has one in the heap

    @property
    def inadmissible(self) -> list[AdmissionWorkload]:
        return [wl for shape in self._shapes.values() for _, wl in shape.parked]

    # -- membership ---------------------------------------------------------------------

    def push(self, wl: AdmissionWorkload) -> None:
        """Into the heap (a newcomer, a requeue, or back from the inadmissible set)."""
        self._take_out(wl)
        self._track(wl)
        self._heap_push(wl)

    def park(self, wl: AdmissionWorkload) -> None:
        """Into the inadmissible set."""
        self._take_out(wl)
        self._track(wl)
        shape = self._shape(wl)
        bisect.insort(shape.parked, (wl.queue_key, wl))
        self._parked[wl.shape] = shape
        if self.preemptor is wl:
            self.preemptor = None

    def remove(self, wl: AdmissionWorkload) -> None:
        """The workload left the queue (admitted, deactivated)."""
        self._take_out(wl)
        key = self._members.pop(wl.name, None)
        if key is not None:
            del self._positions[bisect.bisect_left(self._positions, key)]
        if self.preemptor is wl:
            self.preemptor = None

    def _track(self, wl: AdmissionWorkload) -> None:
        key = wl.queue_key
        old = self._members.get(wl.name)
        if old == key:
            return
        if old is not None:
            del self._positions[bisect.bisect_left(self._positions, old)]
        self._members[wl.name] = key
        bisect.insort(self._positions, key)

    def _shape(self, wl: AdmissionWorkload) -> _Shape:
        shape = self._shapes.get(wl.shape)
        if shape is None:
            shape = self._shapes[wl.shape] = _Shape()
        return shape

    def _heap_push(self, wl: AdmissionWorkload) -> None:
        token = next(self._tokens)
        self._token[wl.name] = token
        key = wl.queue_key if self.fair_usage is None else self._fair_key(self.fair_usage, wl)
        heapq.heappush(self._heap, (key, token, wl))
        self._in_heap.setdefault(wl.shape, {})[wl.name] = wl

    def _take_out(self, wl: AdmissionWorkload) -> None:
        """Wherever `wl` is (heap, parked, dormant), it is there no more; still a member."""
        if self._token.pop(wl.name, None) is not None:
            self._in_heap[wl.shape].pop(wl.name, None)
            self._promote(wl.shape)
            return
        shape, key = self._shapes.get(wl.shape), self._members.get(wl.name)
        if shape is None or key is None:
            return
        for entries in (shape.parked, shape.dormant):
            at = bisect.bisect_left(entries, (key,))
            if at < len(entries) and entries[at][1] is wl:
                del entries[at]
                return

    def _promote(self, shape_key: WorkloadShape) -> None:
        """The shape's heap representative left: the next dormant one takes its place."""
        shape = self._shapes.get(shape_key)
        if shape is not None and shape.dormant:
            self._heap_push(shape.dormant.pop(0)[1])

    # -- a cycle ------------------------------------------------------------------------

    def pop_head(self) -> AdmissionWorkload | None:
        """The next workload to try; it stays a member until requeued or removed."""
        if self.fair_usage is not None:
            return self._pop_fair(self.fair_usage)
        sticky = None if self.strict_fifo else self.preemptor
        if sticky is not None and sticky.name in self._token:
            self._take_out(sticky)
            return sticky
        while self._heap:
            _, token, wl = heapq.heappop(self._heap)
            if self._token.get(wl.name) == token:
                self._take_out(wl)
                return wl
        return None

    @staticmethod
    def _fair_key(usage: QueueUsage, wl: AdmissionWorkload) -> tuple[float, tuple[int, float, int]]:
        return usage.of(wl), wl.queue_key

    def _pop_fair(self, usage: QueueUsage) -> AdmissionWorkload | None:
        """pop_head under admission fair sharing: keys re-read when a usage moved."""
        version = usage.version()
        if version != self._usage_version:
            self._usage_version = version
            self._heap = [(self._fair_key(usage, wl), token, wl) for _, token, wl in self._heap
                          if self._token.get(wl.name) == token]
            heapq.heapify(self._heap)
        while self._heap and self._token.get(self._heap[0][2].name) != self._heap[0][1]:
            heapq.heappop(self._heap)
        top = self._heap[0] if self._heap else None
        sticky = None if self.strict_fifo else self.preemptor
        sticky = sticky if sticky is not None and sticky.name in self._token else None
        if sticky is not None and (top is None or usage.of(sticky) <= top[0][0]):
            head: AdmissionWorkload | None = sticky
        else:
            head = None if top is None else top[2]
        if self.check is not None:
            plain = self._plain_fair_head(usage, sticky)
            self.check.same("admission fair sharing head from the rebuilt heap", head and head.name, plain and plain.name)
        if head is None:
            return None
        if head is not sticky:
            heapq.heappop(self._heap)
        self._take_out(head)
        return head

    def _plain_fair_head(self, usage: QueueUsage, sticky: AdmissionWorkload | None) -> AdmissionWorkload | None:
        """The head by queueOrderingFunc, scanned: every workload in the heap (the sticky
        preemptor is one), the lower usage first, the sticky one first among equals."""
        live = [wl for _, token, wl in self._heap if self._token.get(wl.name) == token]
        return min(live, key=lambda wl: (usage.of(wl), wl is not sticky, wl.queue_key), default=None)

    def requeue(self, wl: AdmissionWorkload, *, transient: bool, requeues_at_pop: int) -> bool:
        """Put a head back after a failed attempt; True when it went to the inadmissible set."""
        if self.strict_fifo or transient or self.requeues != requeues_at_pop:
            self.push(wl)
            return False
        self.park(wl)
        return True

    def park_equivalents(self, wl: AdmissionWorkload, reason: str) -> list[AdmissionWorkload]:
        """Scheduling-equivalence hashing: heap workloads shaped like `wl` fail alike.

        Returns those that should say why they wait: the ones that were really in the heap,
        and the dormant ones when the reason changed since they last heard it (Kueue updates
        only the head's status; the others keep theirs, as here when nothing changed)."""
        if self.strict_fifo:
            return []
        shape = self._shape(wl)
        physical = list(self._in_heap.get(wl.shape, {}).values())
        dormant = [entry[1] for entry in shape.dormant] if shape.reason != reason else []
        if shape.dormant:
            shape.parked = _merged(shape.parked, shape.dormant)
            shape.dormant = []
            self._parked[wl.shape] = shape
        for other in physical:
            self.park(other)
        shape.reason = reason
        return physical + dormant

    def requeue_inadmissible(self, now: float) -> int:
        """Capacity changed in the cohort tree: inadmissible workloads get another try."""
        self.requeues += 1
        moved = 0
        # Only shapes with inadmissible workloads (a shape emptied since is skipped); the heap
        # orders by unique queue keys, so the order shapes are pushed in does not matter.
        parked, self._parked = self._parked, {}
        for shape in parked.values():
            if not shape.parked:
                continue
            moved += len(shape.parked)
            if self.fair_usage is not None:  # every one into the heap: no dormant list
                entries, shape.parked = shape.parked, []
                for _, wl in entries:
                    self._heap_push(wl)
                continue
            shape.dormant = _merged(shape.dormant, shape.parked)
            shape.parked = []
            self._heap_push(shape.dormant.pop(0)[1])
        return moved

    def position(self, wl: AdmissionWorkload) -> tuple[int, int]:
        """(1-based position among this queue's pending workloads, how many are pending)."""
        key = self._members.get(wl.name, wl.queue_key)
        return bisect.bisect_left(self._positions, key) + 1, len(self._positions)


def _merged(first: list[Entry], second: list[Entry]) -> list[Entry]:
    """Two sorted lists as one. Usually one of them is empty or tiny (a shape's workloads
    move as a block): then the other one is kept, with no comparison per workload."""
    small, large = (first, second) if len(first) <= len(second) else (second, first)
    if len(small) <= 16:  # typically the head just parked, joining its dormant shape-mates
        for entry in small:
            bisect.insort(large, entry)  # the lists are the shape's own: changed in place
        return large
    return sorted(first + second)  # two sorted runs: Timsort merges them in one pass
