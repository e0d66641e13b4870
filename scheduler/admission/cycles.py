"""When the admission cycles of a replay run, on the simulated clock (`Phase.ADMIT`).

A cycle runs at an instant when something may have changed (a submission, released quota, a
backoff or PodsReady change), and again at the same instant while cycles make progress, like
Kueue's back-to-back scheduling loop (scheduler.go schedule(): KeepGoing after an admission,
else SlowDown). When capacity is released, the inadmissible workloads of the cohort tree get
another try `REQUEUE_BATCH_S` later (Kueue's requeue batch period).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduler.admission.admitter import Admitter, CycleResult
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import QuotaNode
from scheduler.sim import Environment, Phase

REQUEUE_BATCH_S = 1.0  # Kueue's requeueBatchPeriod for the inadmissible set
# Kueue's scheduler loop (pkg/util/wait UntilWithBackoff) backs off after every cycle that
# admits nothing (SlowDown): 1 ms, doubling up to 100 ms. The replay runs such follow-up
# cycles at the same instant, up to this many in a row; from then on each waits the full
# 100 ms, as upstream's does by then, until a cycle admits something or no head is left.
# Without the bound two heads that take turns (one preempting, one skipped "no longer
# fits") would cycle at one instant forever, where upstream's clock moves on until their
# victims are gone. The demo's and the bench presets' longest such runs are 24 cycles.
SAME_INSTANT_SLOW_CYCLES = 64
CYCLE_BACKOFF_MAX_S = 0.1


class CyclePacing:
    """When the admission cycle after this one runs (scheduler.go schedule(): KeepGoing
    after an admission, else SlowDown), bounded as `SAME_INSTANT_SLOW_CYCLES` says."""

    def __init__(self) -> None:
        self.slow_in_a_row = 0  # cycles in a row that admitted nothing and asked for another

    def next_cycle_in(self, cycle: CycleResult) -> float | None:
        """Seconds until the next cycle (0: the same instant), None when none is asked for."""
        if not cycle.progressed:
            self.slow_in_a_row = 0
            return None
        self.slow_in_a_row = 0 if cycle.admitted else self.slow_in_a_row + 1
        return CYCLE_BACKOFF_MAX_S if self.slow_in_a_row > SAME_INSTANT_SLOW_CYCLES else 0.0


class AdmissionCycles:
    """Schedules the `Admitter`'s cycles and the inadmissible requeues on the clock.
    `settled`: what the layer does when a cycle asks for no other (the workloads still
    waiting their turn say so)."""

    def __init__(self, env: Environment, admitter: Admitter, queues: Mapping[str, PendingQueue],
                 settled: Callable[[], None]) -> None:
        self.env = env
        self.admitter = admitter
        self.queues = queues
        self.settled = settled
        self.pacing = CyclePacing()
        self._cycle_at: float | None = None
        self._requeue_roots: set[int] = set()

    def request(self, at: float | None = None) -> None:
        """A cycle now (or at `at`), unless one is already due then."""
        when = self.env.now if at is None else at
        if self._cycle_at != when:
            self._cycle_at = when
            self.env.at(when, Phase.ADMIT, self._cycle)

    def _cycle(self) -> None:
        if self._cycle_at == self.env.now:  # a later, paced cycle stays due
            self._cycle_at = None
        if (delay := self.pacing.next_cycle_in(self.admitter.run_cycle())) is None:
            self.settled()
        else:
            self.request(self.env.now + delay)

    def schedule_requeue(self, node: QuotaNode) -> None:
        """Batch the inadmissible requeue of the cohort tree, as Kueue does (1 s)."""
        root = node.root()
        if id(root) in self._requeue_roots:
            return
        self._requeue_roots.add(id(root))
        self.env.at(self.env.now + REQUEUE_BATCH_S, Phase.ADMIT, lambda: self._requeue_inadmissible(root))

    def _requeue_inadmissible(self, root: QuotaNode) -> None:
        self._requeue_roots.discard(id(root))
        moved = 0
        for node in [root] if root.is_cluster_queue else _queues_under(root):
            moved += self.queues[node.name].requeue_inadmissible(self.env.now)
        if moved:
            self.request()


def _queues_under(node: QuotaNode) -> list[QuotaNode]:
    found = list(node.child_queues)
    for child in node.child_cohorts:
        found.extend(_queues_under(child))
    return found
