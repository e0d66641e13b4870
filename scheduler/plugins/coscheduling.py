"""QueueSort of scheduler-plugins Coscheduling: priority, then the PodGroup's timestamp.

Source: scheduler-plugins `pkg/coscheduling/coscheduling.go` `Less` and `core.go`
`GetCreationTimestamp`: pods of a group sort by the group's creation timestamp, or, since
afaa22f (v0.34.7, v0.35.x), by the time the group last failed (PostFilter rejection,
Unreserve after a Permit rejection or time-out) until its quorum is met or the record
expires (30 min): a failed group goes behind groups of its priority created before that
failure instead of blocking the head. The replay passes that timestamp as `created_s`
(`WorkloadRun.group_timestamp_s`), taken when the group is filed in the queue.
"""

from __future__ import annotations

from scheduler.plugins import names


class CoschedulingSort:
    name = names.COSCHEDULING

    def sort_key(self, priority: int, created_s: float, queued_s: float) -> tuple[float, ...]:
        return (-priority, created_s)
