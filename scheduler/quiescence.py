"""Quiescence: a replay ends once no later event can change what it decides.

kube-scheduler and Kueue never stop; a replay has to. Once the last input is in (arrivals,
resizes), nothing holds GPUs (no pod runs, waits at Permit or terminates) and every workload
still waiting could not start even on the empty cluster, under any flavor Kueue could give
it, every later event is a retry that fails the same way: the unschedulable-pod flush every
five minutes, a PodsReady eviction and its backoff, an admission that places nothing. The
replay stops there, with one line saying who waits and why, instead of running on to
`max_simulated_s` (90 days).

The test is sound, not complete: a workload that could start on the empty cluster keeps the
replay going even when something else (quota held by a workload that never starts, with
waitForPodsReady off) blocks it for good; such a replay still runs to the cap.

Verdicts are cached per workload and admission state: the empty cluster is the same cluster
every time, so a workload's answer changes only when its admission state does (deactivated,
say).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence

from scheduler.cycle.context import CycleContext
from scheduler.cycle.planning import plan_group
from scheduler.framework.interface import Unit
from scheduler.model.cluster import NodeSelector
from scheduler.workload_run import WorkloadRun

# What placement could be asked for `run` from now on: (admission state, narrowings), a
# narrowing being (gpu_models, selector) as Kueue injects a flavor; None: the run's own request.
Narrowing = tuple[tuple[str, ...], NodeSelector]
PlacementOptions = Callable[[WorkloadRun], tuple[Hashable, Sequence[Narrowing] | None]]
_EXAMPLE_CHARS = 160


class Quiescence:
    def __init__(self, ctx: CycleContext, options: PlacementOptions | None) -> None:
        self.ctx = ctx
        self.options = options
        self._verdicts: dict[tuple[str, Hashable], bool] = {}
        self._blocker: WorkloadRun | None = None  # the last run found able to start

    def settled(self) -> str | None:
        """The summary line when nothing can change any more, else None. Call it only when no
        input is left to arrive."""
        ctx = self.ctx
        if ctx.state.holdings:
            return None
        blocker = self._blocker
        if blocker is not None and not blocker.done and self._could_start(blocker):
            return None
        waiting = [run for run in ctx.runs.values() if run.arrived and not run.done]
        for run in waiting:
            if self._could_start(run):
                self._blocker = run
                return None
        return summary(ctx.now, waiting)

    def _could_start(self, run: WorkloadRun) -> bool:
        state_token, narrowings = self.options(run) if self.options else (None, None)
        key = (run.spec.workload_id, state_token)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._fits_empty_cluster(run, narrowings)
        return verdict

    def _fits_empty_cluster(self, run: WorkloadRun, narrowings: Iterable[Narrowing] | None) -> bool:
        """A what-if on the (empty) cluster: the run's quorum fits under one of the narrowings."""
        ctx = self.ctx
        saved = run.spec, run.request
        try:
            with ctx.framework.unobserved():
                for narrowing in [None] if narrowings is None else narrowings:
                    if narrowing is not None:
                        run.narrow(*narrowing)
                    if self._fits(run):
                        return True
                    run.spec, run.request = saved
        finally:
            run.spec, run.request = saved
        return False

    def _fits(self, run: WorkloadRun) -> bool:
        ctx = self.ctx
        needed = max(1, min(run.min_count, run.spec.pods))
        if needed == 1 and ctx.profile.unit is Unit.POD:
            return ctx.framework.find_node(ctx.state, run.request, explain=False)[0] is not None
        return plan_group(ctx, run, needed, explain=False).count >= needed


def summary(now_s: float, waiting: Sequence[WorkloadRun]) -> str:
    """One line: when the replay settled, how many workloads wait for good, grouped by the
    reason of their last pending row, with one example each."""
    head = f"settled at {now_s / 3600:.1f} h: nothing runs and no later event can change the state"
    if not waiting:
        return head
    reasons: Counter[str] = Counter()
    example: dict[str, WorkloadRun] = {}
    for run in waiting:
        reason = run.last_pending[0] if run.last_pending else "NeverTried"
        reasons[reason] += 1
        example.setdefault(reason, run)
    parts = []
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        run = example[reason]
        message = run.last_pending[1] if run.last_pending else ""
        if len(message) > _EXAMPLE_CHARS:
            message = message[: _EXAMPLE_CHARS - 1] + "…"
        parts.append(f"{count} {reason} (e.g. {run.spec.workload_id}: {message})" if message
                     else f"{count} {reason} (e.g. {run.spec.workload_id})")
    noun = "workload waits" if len(waiting) == 1 else "workloads wait"
    return f"{head}; {len(waiting)} {noun} for good: {'; '.join(parts)}"
