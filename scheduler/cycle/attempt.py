"""One scheduling attempt for one queued entity: a pod group or a single pod.

`attempt` is what the queue's drain calls for each entity it pops (`scheduler/dispatch.py`);
the pod-group cycle is in `group.py`, the pod cycle in `pod.py`. It returns an `Outcome`
for the queue (placed, failed for GPU reasons alone, failed); every failure leaves a reason.
"""

from __future__ import annotations

from scheduler.cycle.context import CycleContext
from scheduler.cycle.group import schedule_group
from scheduler.cycle.outcome import Outcome
from scheduler.cycle.pod import schedule_pod
from scheduler.workload_run import GROUP, WorkloadRun


def attempt(ctx: CycleContext, run: WorkloadRun, pod: int) -> Outcome:
    """Try `run` (`pod` = GROUP: the whole group; else that one pod) on the live state."""
    if run.done:
        return Outcome.PLACED
    if pod == GROUP:
        return schedule_group(ctx, run) if run.pending else Outcome.PLACED
    if pod not in run.pending:
        return Outcome.PLACED
    return schedule_pod(ctx, run, pod)
