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

from dataclasses import dataclass
from typing import Any

from scheduler.framework.status import Code, Status
from scheduler.plugins import names


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status:
    if scheduled + remaining < min_count:
        return Status.unschedulable(names.GANG_PERMIT, "min_count out of reach")
    if scheduled < min_count:
        return Status(Code.WAIT, (), names.GANG_PERMIT)
    return Status.success()


@dataclass(frozen=True)
class GangPermit:
    name = names.GANG_PERMIT
    timeout_s: float = 300.0

    @staticmethod
    def from_args(args: dict[str, Any]) -> GangPermit:
        return GangPermit(timeout_s=float(args.get("timeout_s", 300.0)))

    def permit(self, reserved: int, min_count: int) -> Status:
        """Allow the group to run once `reserved` reaches `min_count`; wait otherwise."""
        if reserved >= min_count:
            return Status.success()
        return Status(Code.WAIT, (f"{reserved} of {min_count} pods reserved",), self.name)
