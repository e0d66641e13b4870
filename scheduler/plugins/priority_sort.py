"""QueueSort: higher priority first, then earlier enqueue time (kube-scheduler's default)."""

from __future__ import annotations

from scheduler.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def sort_key(self, priority: int, enqueue_time_s: float) -> tuple[float, ...]:
        return (-priority, enqueue_time_s)
