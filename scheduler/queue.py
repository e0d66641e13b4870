"""The scheduling queue: entities waiting for placement, filed by *GPU shape*.

kube-scheduler retries every unschedulable pod after every change that might help. Replayed
faithfully on a saturated cluster that is O(queue) work per finished pod. This queue gives
the same outcomes for far less work, from one observation: placement only gets harder while
no GPUs are released. So

- every queued entity (a pod, or a pod group) is filed under its GPU shape
  (`scheduler.shape.GpuShape`: everything that decides its attempt except CPU and memory);
- when the first entity of a shape fails *for GPU reasons alone* (every node lacked GPUs of
  an accepted model, or the cluster lacks the GPUs in total), the whole shape is parked at
  the current `ClusterState.release_version`: every other entity of it would fail the same
  way until some GPUs are released;
- an entity that failed for reasons of its own (CPU or memory) is parked alone.

A cycle pops entities in queue order (QueueSort, then arrival order) across all shapes
that are not parked, so the order of attempts is the order kube-scheduler would use.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator

from scheduler.shape import GpuShape
from scheduler.state.cluster_state import ClusterState

QueueKey = tuple[str, int]  # (workload_id, pod_index); pod_index -1 for a whole pod group
SortKey = tuple[float, ...]


class ShapeQueue:
    """The waiting entities of one shape (a plain class: mypyc compiles its __init__, a
    dataclass's generated one runs interpreted)."""

    def __init__(self) -> None:
        self.heap: list[tuple[SortKey, int, QueueKey]] = []
        self.parked_at = -1  # release version at which the head failed for GPU reasons alone
        self.parked_until_s = 0.0  # kube-scheduler flushes unschedulable pods after 5 minutes
        self.failure: tuple[str, str] | None = None  # (reason, message) of that failure
        # False when the shape was parked without being tried: an elastic group that placed
        # part of its pods is re-filed under its new shape and waits with it, as the pods a
        # group could not place wait in kube-scheduler's unschedulable queue.
        self.tried = True

    def parked(self, release_version: int, now: float) -> bool:
        return self.parked_at == release_version and now < self.parked_until_s


class SchedulingQueue:
    def __init__(self) -> None:
        self.shapes: dict[GpuShape, ShapeQueue] = {}
        self._filed: dict[QueueKey, tuple[GpuShape, int]] = {}  # key -> (shape, token)
        self._backoff: list[tuple[float, int, QueueKey, SortKey, GpuShape]] = []
        self._backing_off: dict[QueueKey, int] = {}
        self._parked_alone: dict[QueueKey, tuple[int, float]] = {}  # key -> (version, until)
        self._tokens = 0  # the last filing's token: a filing's identity in the heaps
        self._dirty: list[GpuShape] = []  # shapes filed into since the drain last looked
        self._ties = 0  # orders a drain's ready heads that tie on sort key and token

    def __len__(self) -> int:
        return len(self._filed) + len(self._backing_off)

    def __contains__(self, key: QueueKey) -> bool:
        return key in self._filed or key in self._backing_off

    def add(self, key: QueueKey, sort_key: SortKey, shape: GpuShape, *, not_before: float, now: float) -> ShapeQueue | None:
        """File `key`; returns its shape queue when it is filed right away."""
        self.remove(key)
        self._tokens += 1
        token = self._tokens
        if not_before > now:
            self._backing_off[key] = token
            heapq.heappush(self._backoff, (not_before, token, key, sort_key, shape))
            return None
        return self._file(key, sort_key, shape, token)

    def _file(self, key: QueueKey, sort_key: SortKey, shape: GpuShape, token: int) -> ShapeQueue:
        queue = self.shapes.get(shape)
        if queue is None:
            queue = self.shapes[shape] = ShapeQueue()
        heapq.heappush(queue.heap, (sort_key, token, key))
        self._filed[key] = (shape, token)
        self._dirty.append(shape)
        return queue

    def remove(self, key: QueueKey) -> None:
        """Forget `key` (lazily: stale heap entries are skipped when met)."""
        self._filed.pop(key, None)
        self._backing_off.pop(key, None)
        self._parked_alone.pop(key, None)

    def release_backoff(self, now: float) -> float | None:
        """File every entity whose backoff is over; returns the next backoff end, if any."""
        while self._backoff and self._backoff[0][0] <= now:
            _, token, key, sort_key, shape = heapq.heappop(self._backoff)
            if self._backing_off.get(key) == token:
                del self._backing_off[key]
                self._file(key, sort_key, shape, token)
        while self._backoff and self._backing_off.get(self._backoff[0][2]) != self._backoff[0][1]:
            heapq.heappop(self._backoff)
        return self._backoff[0][0] if self._backoff else None

    def _live(self, key: QueueKey, token: int) -> bool:
        """Whether the heap entry of `key` filed with `token` is its current filing. A token
        is drawn once per `add`, so it names the filing, and with it the shape filed under."""
        filed = self._filed.get(key)
        return filed is not None and filed[1] == token

    def _alone_parked(self, key: QueueKey, release_version: int, now: float) -> bool:
        mark = self._parked_alone.get(key)
        return mark is not None and mark[0] == release_version and now < mark[1]

    def _head(self, shape: GpuShape, queue: ShapeQueue, release_version: int, now: float) -> tuple[SortKey, int, QueueKey] | None:
        heap = queue.heap
        while heap:
            sort_key, token, key = heap[0]
            if not self._live(key, token):
                heapq.heappop(heap)  # stale: removed or re-filed
                continue
            if self._alone_parked(key, release_version, now):
                return None  # handled by the caller, which steps past parked entities
            return heap[0]
        return None

    def next_flush_s(self) -> float | None:
        """When the earliest parked shape or entity is due for kube's 5-minute flush."""
        times = [q.parked_until_s for q in self.shapes.values() if q.parked_at >= 0]
        times += [until for _, until in self._parked_alone.values()]
        return min(times, default=None)

    def drain(self, state: ClusterState, now: float) -> Iterator[tuple[QueueKey, GpuShape]]:
        """Yield (key, shape) in queue order over shapes that are not parked.

        A shape is parked at the release version that matters to it: releases of the GPU
        models it accepts (`ClusterState.release_version_for`); any release at all wakes every
        shape up to be looked at again. The caller attempts each yielded entity, then calls
        `placed`, `park_shape` or `park_alone`. Parked-alone entities are stepped over (they
        stay filed)."""
        version = state.release_version
        ready: list[tuple[SortKey, int, int, GpuShape]] = []
        stepped_over: list[tuple[GpuShape, tuple[SortKey, int, QueueKey]]] = []
        self._dirty.clear()
        for shape in list(self.shapes):
            self._push(shape, state.release_version_for(shape.models), now, ready, stepped_over)
        try:
            while ready:
                _, token, _, shape = heapq.heappop(ready)
                queue = self.shapes[shape]
                shape_version = state.release_version_for(shape.models)
                head = self._head(shape, queue, shape_version, now)
                if head is None or head[1] != token or queue.parked(shape_version, now):
                    self._push(shape, shape_version, now, ready, stepped_over)
                    continue
                key = head[2]
                yield key, shape
                if state.release_version != version:  # GPUs were released: parked shapes may fit
                    version = state.release_version
                    self._dirty.clear()
                    for other in list(self.shapes):
                        self._push(other, state.release_version_for(other.models), now, ready, stepped_over)
                else:
                    self._push(shape, state.release_version_for(shape.models), now, ready, stepped_over)
                    dirty, self._dirty = self._dirty, []
                    for other in dict.fromkeys(dirty):
                        self._push(other, state.release_version_for(other.models), now, ready, stepped_over)
        finally:
            for shape, entry in stepped_over:
                heapq.heappush(self.shapes[shape].heap, entry)
            for shape in [s for s, q in self.shapes.items() if not q.heap]:
                del self.shapes[shape]

    def _push(self, shape: GpuShape, release_version: int, now: float, ready: list[tuple[SortKey, int, int, GpuShape]],
              stepped_over: list[tuple[GpuShape, tuple[SortKey, int, QueueKey]]]) -> None:
        """Put `shape`'s head into `drain`'s `ready` heap unless the shape is parked at
        `release_version` (the version that matters to it); parked-alone entities at its head
        are moved to `stepped_over` for this drain."""
        queue = self.shapes.get(shape)
        if queue is None or queue.parked(release_version, now):
            return
        while True:
            head = self._head(shape, queue, release_version, now)
            if head is not None:
                self._ties += 1  # after the sort key and token: a shape pushed twice
                heapq.heappush(ready, (head[0], head[1], self._ties, shape))
                return
            if not queue.heap:
                return
            # A parked-alone entity at the head: step over it for this drain.
            entry = heapq.heappop(queue.heap)
            if self._live(entry[2], entry[1]):
                stepped_over.append((shape, entry))

    def placed(self, key: QueueKey) -> None:
        self.remove(key)

    def park_shape(self, shape: GpuShape, release_version: int, until_s: float,
                   failure: tuple[str, str] | None, *, tried: bool = True) -> None:
        queue = self.shapes[shape]
        queue.tried = tried
        queue.parked_at = release_version
        queue.parked_until_s = until_s
        queue.failure = failure

    def park_alone(self, key: QueueKey, release_version: int, until_s: float) -> None:
        self._parked_alone[key] = (release_version, until_s)

    def parked_heads(self, version_of: Callable[[GpuShape | None], int], now: float) -> Iterator[tuple[GpuShape, QueueKey]]:
        """(shape, its first live entity) for every shape parked now after a failed attempt
        (`replay --verify`)."""
        for shape, queue in self.shapes.items():
            if queue.tried and queue.parked(version_of(shape), now):
                live = [entry for entry in queue.heap if self._filed.get(entry[2]) == (shape, entry[1])]
                if live:
                    yield shape, min(live)[2]

    def parked_failure(self, shape: GpuShape, release_version: int, now: float) -> tuple[str, str] | None:
        """The failure a newcomer of `shape` inherits while the shape stays parked."""
        queue = self.shapes.get(shape)
        if queue is not None and queue.parked(release_version, now):
            return queue.failure
        return None
