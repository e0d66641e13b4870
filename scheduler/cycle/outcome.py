"""The result of one scheduling attempt, as the queue needs it."""

from __future__ import annotations

from enum import Enum

from scheduler.framework.runtime import Diagnosis
from scheduler.framework.status import Resource


class Outcome(Enum):
    """PLACED: the entity needs no further attempt (placed, or gone). FAILED_GPU: it failed
    for GPU reasons alone, so every entity of the same `GpuShape` would fail the same way
    until GPUs are released (the queue parks the shape). FAILED: it failed for a reason of
    its own (CPU or memory; the queue parks it alone). Every failure leaves a reason row."""

    PLACED = "placed"
    FAILED_GPU = "failed for GPU reasons alone"
    FAILED = "failed"


def failure_of(diagnosis: Diagnosis | None) -> Outcome:
    """FAILED when some node was short of a resource other than GPUs (CPU, memory: the
    failing resource each filter's `Status` carries, not its reason text), else FAILED_GPU."""
    if diagnosis is not None and diagnosis.short_of - {Resource.GPU}:
        return Outcome.FAILED
    return Outcome.FAILED_GPU
