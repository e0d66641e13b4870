"""What a preemption does to the workloads it takes pods from (disruption mode Single).

The scheduler evicts pods; a distributed workload's own controller decides what the loss
of one means (`Workload.pod_loss_policy`, its `on_pod_loss`):

- `restart_group`: the whole group stops and is requeued, resuming from its last
  checkpoint (JobSet's default failure handling, LeaderWorkerSet's
  `RecreateGroupOnPodRestart`): its other pods' work since then is lost too;
- `keep_running`: the other pods go on (an elastic or degraded-capable job);
- `replace_pod`: the other pods go on and the lost pod is created again, pending alone
  (an Indexed Job).

A group that is one victim (disruption mode All) loses every pod, whatever its policy.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.cycle.context import CycleContext
from scheduler.model.workload import OnPodLoss
from scheduler.workload_run import WorkloadRun


def lose_pods(ctx: CycleContext, pods_of: Mapping[str, list[int]], preemptor: WorkloadRun) -> None:
    """`preemptor` preempted these pods of each workload: each one's policy does the rest.
    The caller says `capacity_released` once every victim is handled."""
    for wid in sorted(pods_of):
        run, pods = ctx.runs[wid], sorted(pods_of[wid])
        if run.spec.pod_loss_policy is OnPodLoss.RESTART_GROUP or len(pods) >= len(run.holding):
            message = None
            if len(pods) < len(run.holding):
                message = (f"Preempted to accommodate workload {preemptor.spec.workload_id} (priority "
                           f"{preemptor.spec.priority} > {run.spec.priority}): pod(s) {', '.join(map(str, pods))} "
                           "preempted, and its controller restarts the whole group (on_pod_loss restart_group)")
            evict_group(ctx, run, preemptor, message)
        else:
            ctx.actions.evict_pods(run, pods, preemptor)


def evict_group(ctx: CycleContext, run: WorkloadRun, preemptor: WorkloadRun, message: str | None = None) -> None:
    """Every pod of `run` is preempted and the group requeued."""
    ctx.actions.evict(run, preemptor, message=message)
    if run.spec.parent_group:
        ctx.composites_started.discard(run.spec.parent_group)  # its quorum must be met again
