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
import itertools
from collections.abc import Callable, Iterator

from scheduler.shape import GpuShape

QueueKey = tuple[str, int]  # (workload_id, pod_index); pod_index -1 for a whole pod group
SortKey = tuple[float, ...]
VersionFor = Callable[[tuple[str, ...]], int]  # GPU models (() for any) -> their release version


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
        self._tokens = itertools.count()
        self._dirty: list[GpuShape] = []  # shapes filed into since the drain last looked
        self._ties = itertools.count()
        # The shapes parked now, so that a drain steps over them without asking each one:
        # a shape is asleep from `park_shape` until `_wake_released` finds a release of its
        # GPU models since it was parked (a whole bucket at once: they are filed by models and
        # the release version they were parked at) or `_wake_due` reaches its flush time.
        # After those two a shape is asleep exactly when `ShapeQueue.parked` holds for it.
        self._asleep: dict[GpuShape, int] = {}  # shape -> serial of its parking
        self._asleep_by_models: dict[tuple[str, ...], dict[int, dict[GpuShape, int]]] = {}
        self._wake_times: list[tuple[float, int, GpuShape]] = []  # (flush time, serial, shape)
        # Every flush time `next_flush_s` may answer, stale entries dropped when met on top.
        self._flush_times: list[tuple[float, int, GpuShape | None, QueueKey | None]] = []
        self._serials = itertools.count()

    def __len__(self) -> int:
        return len(self._filed) + len(self._backing_off)

    def __contains__(self, key: QueueKey) -> bool:
        return key in self._filed or key in self._backing_off

    def add(self, key: QueueKey, sort_key: SortKey, shape: GpuShape, *, not_before: float, now: float) -> ShapeQueue | None:
        """File `key`; returns its shape queue when it is filed right away."""
        self.remove(key)
        token = next(self._tokens)
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

    def _alone_parked(self, key: QueueKey, release_version: int, now: float) -> bool:
        mark = self._parked_alone.get(key)
        return mark is not None and mark[0] == release_version and now < mark[1]

    def _head(self, shape: GpuShape, queue: ShapeQueue, version_for: VersionFor, now: float) -> tuple[SortKey, int, QueueKey] | None:
        heap, filed = queue.heap, self._filed
        while heap:
            entry = heap[0]
            mark = filed.get(entry[2])
            if mark is None or mark[1] != entry[1]:  # tokens are unique: the same token is the same filing
                heapq.heappop(heap)  # stale: removed or re-filed
                continue
            if self._parked_alone and self._alone_parked(entry[2], version_for(shape.models), now):
                return None  # handled by the caller, which steps past parked entities
            return entry
        return None

    def next_flush_s(self) -> float | None:
        """When the earliest parked shape or entity is due for kube's 5-minute flush (the
        least flush time of every shape parked at some version and of every parked-alone
        entity, due or not: a heap whose stale entries are dropped when met on top)."""
        times = self._flush_times
        while times:
            until, _, shape, key = times[0]
            if shape is not None:
                queue = self.shapes.get(shape)
                if queue is not None and queue.parked_at >= 0 and queue.parked_until_s == until:
                    return until
            elif key is not None:
                mark = self._parked_alone.get(key)
                if mark is not None and mark[1] == until:
                    return until
            heapq.heappop(times)
        return None

    def _wake_due(self, now: float) -> None:
        """Wake the shapes whose flush time has come."""
        times, asleep = self._wake_times, self._asleep
        while times and times[0][0] <= now:
            _, serial, shape = heapq.heappop(times)
            if asleep.get(shape) == serial:
                del asleep[shape]

    def _wake_released(self, version_for: VersionFor) -> None:
        """Wake the shapes parked at a release version their GPU models have left."""
        asleep = self._asleep
        for models, buckets in self._asleep_by_models.items():
            current = version_for(models)
            for parked_at in [version for version in buckets if version != current]:
                for shape, serial in buckets.pop(parked_at).items():
                    if asleep.get(shape) == serial:
                        del asleep[shape]

    def _push(self, shape: GpuShape, ready: list[tuple[SortKey, int, int, GpuShape]],
              stepped_over: list[tuple[GpuShape, tuple[SortKey, int, QueueKey]]], version_for: VersionFor,
              now: float) -> None:
        """Put `shape`'s head among the drain's ready entries, unless the shape is parked."""
        queue = self.shapes.get(shape)
        if queue is None or shape in self._asleep:
            return
        while True:
            head = self._head(shape, queue, version_for, now)
            if head is not None:
                heapq.heappush(ready, (head[0], head[1], next(self._ties), shape))
                return
            if not queue.heap:
                return
            # A parked-alone entity at the head: step over it for this cycle.
            entry = heapq.heappop(queue.heap)
            mark = self._filed.get(entry[2])
            if mark is not None and mark[1] == entry[1]:
                stepped_over.append((shape, entry))

    def _push_awake(self, ready: list[tuple[SortKey, int, int, GpuShape]],
                    stepped_over: list[tuple[GpuShape, tuple[SortKey, int, QueueKey]]], version_for: VersionFor,
                    now: float) -> None:
        self._dirty.clear()
        self._wake_released(version_for)
        asleep = self._asleep
        for shape in [s for s in self.shapes if s not in asleep]:
            self._push(shape, ready, stepped_over, version_for, now)

    def drain(self, version_for: VersionFor, now: float) -> Iterator[tuple[QueueKey, GpuShape]]:
        """Yield (key, shape) in queue order over shapes that are not parked.

        `version_for(models)` is the release version that matters to a shape accepting
        GPU `models` (releases of those models); `version_for(())` the cluster-wide one. The
        caller attempts each yielded entity, then calls `placed`, `park_shape` or
        `park_alone`. Parked-alone entities are stepped over (they stay filed)."""
        version = version_for(())
        ready: list[tuple[SortKey, int, int, GpuShape]] = []
        stepped_over: list[tuple[GpuShape, tuple[SortKey, int, QueueKey]]] = []
        self._wake_due(now)
        self._push_awake(ready, stepped_over, version_for, now)
        try:
            while ready:
                _, token, _, shape = heapq.heappop(ready)
                queue = self.shapes[shape]
                head = self._head(shape, queue, version_for, now)
                if head is None or head[1] != token or shape in self._asleep:
                    self._push(shape, ready, stepped_over, version_for, now)
                    continue
                yield head[2], shape
                if version_for(()) != version:  # GPUs were released: parked shapes may fit
                    version = version_for(())
                    self._push_awake(ready, stepped_over, version_for, now)
                else:
                    self._push(shape, ready, stepped_over, version_for, now)
                    dirty, self._dirty = self._dirty, []
                    for other in dict.fromkeys(dirty):
                        self._push(other, ready, stepped_over, version_for, now)
        finally:
            for shape, entry in stepped_over:
                heapq.heappush(self.shapes[shape].heap, entry)
            for shape in [s for s, q in self.shapes.items() if not q.heap]:
                del self.shapes[shape]
                self._asleep.pop(shape, None)

    def placed(self, key: QueueKey) -> None:
        self.remove(key)

    def park_shape(self, shape: GpuShape, release_version: int, until_s: float,
                   failure: tuple[str, str] | None, *, now: float, tried: bool = True) -> None:
        queue = self.shapes[shape]
        queue.tried = tried
        queue.parked_at = release_version
        queue.parked_until_s = until_s
        queue.failure = failure
        serial = next(self._serials)
        heapq.heappush(self._flush_times, (until_s, serial, shape, None))
        if now < until_s:  # a version the models have left is woken before the drain looks again
            self._asleep[shape] = serial
            self._asleep_by_models.setdefault(shape.models, {}).setdefault(release_version, {})[shape] = serial
            heapq.heappush(self._wake_times, (until_s, serial, shape))
        else:
            self._asleep.pop(shape, None)

    def park_alone(self, key: QueueKey, release_version: int, until_s: float) -> None:
        self._parked_alone[key] = (release_version, until_s)
        heapq.heappush(self._flush_times, (until_s, next(self._serials), None, key))

    def parked_heads(self, version_for: VersionFor, now: float) -> Iterator[tuple[GpuShape, QueueKey]]:
        """(shape, its first live entity) for every shape a drain would step over now as
        parked after a failed attempt (`replay --verify`)."""
        self._wake_due(now)
        self._wake_released(version_for)
        for shape in [s for s in self.shapes if s in self._asleep]:
            queue = self.shapes[shape]
            if queue.tried:
                live = [entry for entry in queue.heap if self._filed.get(entry[2]) == (shape, entry[1])]
                if live:
                    yield shape, min(live)[2]

    def parked_failure(self, shape: GpuShape, release_version: int, now: float) -> tuple[str, str] | None:
        """The failure a newcomer of `shape` inherits while the shape stays parked."""
        queue = self.shapes.get(shape)
        if queue is not None and queue.parked(release_version, now):
            return queue.failure
        return None
