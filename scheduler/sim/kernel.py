"""Discrete-event kernel: a heap of (time, phase, seq) → action.

Determinism is the point. Two actions at the same simulated time run in `Phase` order, and
within a phase in the order they were scheduled (`seq`). Nothing here reads the wall clock
or draws random numbers, so the same inputs always give the same sequence of actions.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
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
        self._next_seq = 0
        self.steps = 0
        # The (phase, seq) of the action running now, or of the last one run (with `now`):
        # where the replay stands in the kernel's order (`passed`).
        self._phase = -1
        self._seq = -1

    def at(self, time: float, phase: Phase, action: Callable[[], None]) -> Handle:
        """Run `action` at simulated `time` (never in the past) in `phase`."""
        if time < self.now:
            raise ValueError(f"cannot schedule in the past: {time} < {self.now}")
        handle = Handle()
        seq = self._next_seq
        self._next_seq = seq + 1
        heapq.heappush(self._queue, (time, int(phase), seq, handle, action))
        return handle

    def reserve(self, time: float, phase: Phase) -> int:
        """The seq `at(time, phase, …)` would take now, taken without scheduling anything: for
        an action that will most likely find nothing to do. Every other action keeps the seq it
        would have had. If it turns out to be needed while its place is still ahead
        (`passed` is False), `at_reserved` schedules it there, exactly where `at` would have."""
        if time < self.now:
            raise ValueError(f"cannot schedule in the past: {time} < {self.now}")
        seq = self._next_seq
        self._next_seq = seq + 1
        return seq

    def at_reserved(self, time: float, phase: Phase, seq: int, action: Callable[[], None]) -> Handle:
        """Run `action` at the place `reserve` gave it."""
        if self.passed(time, phase, seq):
            raise ValueError(f"the reserved place ({time}, {phase}, {seq}) is already passed")
        handle = Handle()
        heapq.heappush(self._queue, (time, int(phase), seq, handle, action))
        return handle

    def passed(self, time: float, phase: Phase, seq: int) -> bool:
        """Whether an action scheduled at (time, phase, seq) would have run by now: the action
        running now (or the last one run) comes after it in the kernel's order."""
        return (time, int(phase), seq) < (self.now, self._phase, self._seq)

    def at_each(self, phase: Phase, actions: Sequence[tuple[float, Callable[[], None]]]) -> None:
        """Run each (time, action) as `at` called for each in turn would (their seqs are taken
        now, in this order), without handles. Only the earliest waits in the heap; each brings
        in the next as it runs, so a trace's arrivals, scheduled up front, do not make every
        push and pop sift through a heap as large as the trace. The order is `at`'s: the next
        entry's (time, seq) is above the one running, so nothing could run it earlier."""
        if not actions:
            return
        first = self._next_seq
        self._next_seq = first + len(actions)
        entries = sorted((time, first + i, action) for i, (time, action) in enumerate(actions))
        if entries[0][0] < self.now:
            raise ValueError(f"cannot schedule in the past: {entries[0][0]} < {self.now}")
        _Stream(self._queue, int(phase), entries).push_next()

    def peek(self) -> float | None:
        """Time of the next live action, or None when nothing is left."""
        while self._queue and self._queue[0][3].cancelled:
            heapq.heappop(self._queue)
        return self._queue[0][0] if self._queue else None

    def step(self) -> None:
        time, phase, seq, handle, action = heapq.heappop(self._queue)
        if handle.cancelled:
            return
        self.now = time
        self._phase = phase
        self._seq = seq
        self.steps += 1
        action()

    def run(self, until: float | None = None) -> None:
        """Run until no action is left, or until the next one lies beyond `until`."""
        while (next_time := self.peek()) is not None:
            if until is not None and next_time > until:
                self.now = until
                return
            self.step()


class _Stream:
    """Actions scheduled together by `Environment.at_each`, sorted by (time, seq): the next
    one waits in the heap, with this stream as its action."""

    def __init__(self, queue: list[tuple[float, int, int, Handle, Callable[[], None]]], phase: int,
                 entries: list[tuple[float, int, Callable[[], None]]]) -> None:
        self._queue, self._phase, self._entries, self._next = queue, phase, entries, 0

    def push_next(self) -> None:
        time, seq, _ = self._entries[self._next]
        runs_next: Callable[[], None] = self
        heapq.heappush(self._queue, (time, self._phase, seq, Handle(), runs_next))

    def __call__(self) -> None:
        action = self._entries[self._next][2]
        self._next += 1
        if self._next < len(self._entries):
            self.push_next()
        action()
