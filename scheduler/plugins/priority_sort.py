"""QueueSort: higher priority first, then the earlier time the pod was added to the queue.

Source: kube-scheduler's PrioritySort (`plugins/queuesort/priority_sort.go` `Less`): priority,
then `QueuedPodInfo.Timestamp`, which the queue refreshes whenever a failed pod is added back
(`AddUnschedulableIfNotPresent`): a pod sent back after a time-out or an eviction goes behind
pods of its priority that were queued meanwhile.
"""

from __future__ import annotations

from scheduler.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def sort_key(self, priority: int, created_s: float, queued_s: float) -> tuple[float, ...]:
        return (-priority, queued_s)
