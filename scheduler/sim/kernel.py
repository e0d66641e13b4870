"""Discrete-event kernel: a heap of (time, phase, seq) → action.

Determinism is the point. Two actions at the same simulated time run in `Phase` order, and
within a phase in the order they were scheduled (`seq`). Nothing here reads the wall clock
or draws random numbers, so the same inputs always give the same sequence of actions.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from enum import IntEnum


class Phase(IntEnum):
    """Same-time order. Capacity is released before it is handed out again, so a pod that
    finishes at t frees its GPUs for a workload that arrives or is retried at t."""

    FINISH = 0  # pods complete and release GPUs
    TIMEOUT = 1  # gang waits expire and release reservations
    ARRIVE = 2  # workloads are submitted
    ADMIT = 3  # the admission layer decides which workloads may be scheduled
    SCHEDULE = 4  # scheduling cycles place pods
    BIND = 5  # placements become running pods


class Handle:
    """A scheduled action that can be cancelled before it runs (e.g. a gang timeout)."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Environment:
    """Runs actions in (time, phase, seq) order. `now` only moves forward."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._queue: list[tuple[float, int, int, Handle, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.steps = 0

    def at(self, time: float, phase: Phase, action: Callable[[], None]) -> Handle:
        """Run `action` at simulated `time` (never in the past) in `phase`."""
        if time < self.now:
            raise ValueError(f"cannot schedule in the past: {time} < {self.now}")
        handle = Handle()
        heapq.heappush(self._queue, (time, int(phase), next(self._seq), handle, action))
        return handle

    def peek(self) -> float | None:
        """Time of the next live action, or None when nothing is left."""
        while self._queue and self._queue[0][3].cancelled:
            heapq.heappop(self._queue)
        return self._queue[0][0] if self._queue else None

    def step(self) -> None:
        time, _, _, handle, action = heapq.heappop(self._queue)
        if handle.cancelled:
            return
        self.now = time
        self.steps += 1
        action()

    def run(self, until: float | None = None) -> None:
        """Run until no action is left, or until the next one lies beyond `until`."""
        while (next_time := self.peek()) is not None:
            if until is not None and next_time > until:
                self.now = until
                return
            self.step()
