"""Gang scheduling: all-or-nothing over a pod group's `min_count`.

Two shapes, as Kubernetes has had them:

- `placement_feasible` is the PodGroup-cycle check of v1.36+/v1.37 (GangScheduling
  plugin): while pods of one group are tried in one cycle it says Unschedulable as soon as
  min_count is out of reach (early rejection), Wait while fewer than min_count are
  placed, and Success once min_count are placed.
- `GangPermit` is the v1.35 / coscheduling shape: pods are placed one at a time and wait
  at the Permit barrier, holding their GPUs (`reserved`), until min_count are reserved;
  the first reservation starts one shared deadline, and on expiry every waiting pod is
  rejected and its GPUs are released.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.framework.interface import GroupRejection
from scheduler.framework.status import Code, Status
from scheduler.plugins import names

_OUT_OF_REACH = Status.unschedulable(names.GANG_PERMIT, "min_count out of reach")
_WAIT = Status(Code.WAIT, (), names.GANG_PERMIT)


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status:
    if scheduled + remaining < min_count:
        return _OUT_OF_REACH
    if scheduled < min_count:
        return _WAIT
    return Status.success()


@dataclass(frozen=True)
class GangPermit:
    """Permit barrier. `timeout_s`: how long reserved pods wait for the rest (v1.35: one
    300 s deadline shared by the group; coscheduling: 60 s per waiting pod, and since the
    first waiting pod times out first and takes its siblings with it, that is the same
    deadline). `reject_percentage` (coscheduling only): reject the whole group when a pod
    fails and more than this share of min_count is unassigned. `group_backoff_s`
    (coscheduling's podGroupBackoffSeconds): keep a rejected group out of the queue."""

    name = names.GANG_PERMIT
    timeout_s: float = 300.0
    reject_percentage: float | None = None
    group_backoff_s: float = 0.0

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> GangPermit:
        percentage = args.get("reject_percentage")
        return GangPermit(
            timeout_s=float(args.get("timeout_s", 300.0)),
            reject_percentage=None if percentage is None else float(percentage),
            group_backoff_s=float(args.get("group_backoff_s", 0.0)),
        )

    def permit(self, reserved: int, min_count: int) -> Status:
        """Allow the group to run once `reserved` reaches `min_count`; wait otherwise."""
        if reserved >= min_count:
            return Status.success()
        return Status(Code.WAIT, (f"{reserved} of {min_count} pods reserved",), self.name)

    def reject_on_failure(self, unassigned: int, min_count: int) -> GroupRejection | None:
        """Coscheduling's optimistic rejection: more than `reject_percentage` % of min_count
        still unassigned when a pod fails rejects the group (kept out `group_backoff_s`)."""
        if self.reject_percentage is None or unassigned * 100 <= self.reject_percentage * min_count:
            return None
        return GroupRejection(self.group_backoff_s, f"> {self.reject_percentage:g}%")
