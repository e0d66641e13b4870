"""Status instead of exceptions: every plugin answer says what happened and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, StrEnum


class Code(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"  # may fit after the cluster changes (or after preemption)
    UNRESOLVABLE = "UnschedulableAndUnresolvable"  # preemption on this node cannot help
    WAIT = "Wait"  # Permit: hold the reservation and wait
    ERROR = "Error"


class Resource(StrEnum):
    """A resource a node can be short of (kube-scheduler's `Insufficient <resource>`)."""

    GPU = "nvidia.com/gpu"
    CPU = "cpu"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class Status:
    """`short_of`: the resource the node lacks, when that is why it failed (None for any other
    reason: a taint, a topology domain, a node too small is still `GPU`). Callers decide by
    it, never by the reason text, which is for people."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = field(default_factory=tuple)
    plugin: str | None = None
    short_of: Resource | None = None

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @staticmethod
    def success() -> Status:
        return _SUCCESS

    @staticmethod
    def unschedulable(plugin: str, *reasons: str, short_of: Resource | None = None) -> Status:
        return Status(Code.UNSCHEDULABLE, reasons, plugin, short_of)

    @staticmethod
    def unresolvable(plugin: str, *reasons: str, short_of: Resource | None = None) -> Status:
        return Status(Code.UNRESOLVABLE, reasons, plugin, short_of)


_SUCCESS = Status()
