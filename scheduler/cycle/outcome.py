"""The result of one scheduling attempt, as the queue needs it."""

from __future__ import annotations

from enum import Enum

from scheduler.framework.runtime import Diagnosis
from scheduler.plugins.gpu_fit import INSUFFICIENT_CPU, INSUFFICIENT_MEMORY


class Outcome(Enum):
    """PLACED: the entity needs no further attempt (placed, or gone). FAILED_GPU: it failed
    for GPU reasons alone, so every entity of the same `GpuShape` would fail the same way
    until GPUs are released (the queue parks the shape). FAILED: it failed for a reason of
    its own (CPU or memory; the queue parks it alone). Every failure leaves a reason row."""

    PLACED = "placed"
    FAILED_GPU = "failed for GPU reasons alone"
    FAILED = "failed"


def failure_of(diagnosis: Diagnosis | None) -> Outcome:
    """FAILED when some node failed for CPU or memory, else FAILED_GPU."""
    if diagnosis is not None and (diagnosis.reasons.get(INSUFFICIENT_CPU) or diagnosis.reasons.get(INSUFFICIENT_MEMORY)):
        return Outcome.FAILED
    return Outcome.FAILED_GPU
