"""Status instead of exceptions: every plugin answer says what happened and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Code(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"  # may fit after the cluster changes (or after preemption)
    UNRESOLVABLE = "UnschedulableAndUnresolvable"  # preemption on this node cannot help
    WAIT = "Wait"  # Permit: hold the reservation and wait
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = field(default_factory=tuple)
    plugin: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @staticmethod
    def success() -> Status:
        return _SUCCESS

    @staticmethod
    def unschedulable(plugin: str, *reasons: str) -> Status:
        return Status(Code.UNSCHEDULABLE, reasons, plugin)

    @staticmethod
    def unresolvable(plugin: str, *reasons: str) -> Status:
        return Status(Code.UNRESOLVABLE, reasons, plugin)


_SUCCESS = Status()
