"""QueueSort of scheduler-plugins Coscheduling: priority, then the PodGroup's creation time.

Source: scheduler-plugins `pkg/coscheduling/coscheduling.go` `Less` and `core.go`
`GetCreationTimestamp`: pods of a group sort by the group's creation timestamp, so a group
that was rejected or timed out keeps its place in the queue (kube-scheduler's PrioritySort
sends it behind pods queued meanwhile).
"""

from __future__ import annotations

from scheduler.plugins import names


class CoschedulingSort:
    name = names.COSCHEDULING

    def sort_key(self, priority: int, created_s: float, queued_s: float) -> tuple[float, ...]:
        return (-priority, created_s)
