"""When the admission cycles of a replay run, on the simulated clock (`Phase.ADMIT`).

A cycle runs at an instant when something may have changed (a submission, released quota, a
backoff or PodsReady change), and again at the same instant while cycles make progress, like
Kueue's back-to-back scheduling loop (scheduler.go schedule(): KeepGoing after an admission,
else SlowDown). When capacity is released, the inadmissible workloads of the cohort tree get
another try `REQUEUE_BATCH_S` later (Kueue's requeue batch period).

Idle cycles are not scheduled. A cycle asked for now, outside a cycle, while no ClusterQueue
has a head and every queued workload has said why it waits (`idle`) would pop nothing and
write nothing:
its only effects are on this class's own state (the pacing count, the cycle due). So it
takes its place in the kernel's order (`Environment.reserve`) without being scheduled. The
next request (every change that can bring a head or a workload to explain requests a cycle)
or cycle looks at it first: still ahead, it is scheduled at that very place
(`at_reserved`), so the cycle runs exactly where it would have; already passed, it ran
empty, and its effects on the pacing are applied then. Every other action keeps its seq, and
the replay's order and event log stay byte for byte the same. `replay --verify` schedules
such a cycle anyway and checks that it is idle when it runs, unless a request came first
("admission cycle skipped as idle").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduler.admission.admitter import Admitter, CycleResult
from scheduler.admission.queues import PendingQueue
from scheduler.admission.quota import QuotaNode
from scheduler.sim import Environment, Phase
from scheduler.verify import ClockedVerifier

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
IDLE_CHECK = "admission cycle skipped as idle"
_IDLE_RESULT = CycleResult(False, False)  # what an idle cycle's `run_cycle` returns


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
    waiting their turn say so); `idle`: no head in any ClusterQueue and nobody to explain
    (`unexplained`)."""

    def __init__(self, env: Environment, admitter: Admitter, queues: Mapping[str, PendingQueue],
                 settled: Callable[[], None], idle: Callable[[], bool], unexplained: Mapping[str, object]) -> None:
        self.env = env
        self.admitter = admitter
        self.queues = queues
        self.settled = settled
        self.idle = idle
        self.unexplained = unexplained  # the layer's queued workloads that have not said why they wait
        self.pacing = CyclePacing()
        self.check: ClockedVerifier | None = None  # `replay --verify`: idle cycles run and checked
        self._cycle_at: float | None = None
        self._requeue_roots: set[int] = set()
        self._skipped = -1  # the seq reserved for an idle cycle not scheduled (-1: none)
        self._skipped_at = 0.0
        self._predicted_idle = -1  # `--verify`: the seq of a scheduled cycle predicted idle
        self._running = False  # a cycle is under way: its heads are out of their queues

    def request(self, at: float | None = None) -> None:
        """A cycle now (or at `at`), unless one is already due then."""
        self._catch_up()
        self._predicted_idle = -1  # whatever this request brings, the skipped cycle would run
        now = self.env.now
        when = now if at is None else at
        if self._cycle_at == when:
            return
        self._cycle_at = when
        if when != now or self._running or not self.idle():
            self.env.at(when, Phase.ADMIT, self._cycle)
            return
        seq = self.env.reserve(when, Phase.ADMIT)
        if self.check is None:
            self._skipped, self._skipped_at = seq, when
        else:
            self._predicted_idle = seq
            self.env.at_reserved(when, Phase.ADMIT, seq, lambda: self._checked_cycle(seq))

    def _catch_up(self) -> None:
        """The idle cycle not scheduled: scheduled at its place when still ahead, else (it
        ran, finding nothing) its effects on the pacing and the cycle due, as `_cycle`'s."""
        seq = self._skipped
        if seq < 0:
            return
        self._skipped = -1
        when = self._skipped_at
        if not self.env.passed(when, Phase.ADMIT, seq):
            self.env.at_reserved(when, Phase.ADMIT, seq, self._cycle)
            return
        if self._cycle_at == when:
            self._cycle_at = None
        self.pacing.next_cycle_in(_IDLE_RESULT)  # and `settled` had nobody to explain

    def _checked_cycle(self, seq: int) -> None:
        if self.check is not None and self._predicted_idle == seq:  # read here, not through `idle`
            nothing_to_do = not self.unexplained and not any(queue.has_heads for queue in self.queues.values())
            self.check.same(IDLE_CHECK, True, nothing_to_do)
        self._cycle()

    def _cycle(self) -> None:
        self._catch_up()
        if self._cycle_at == self.env.now:  # a later, paced cycle stays due
            self._cycle_at = None
        self._running = True
        result = self.admitter.run_cycle()
        self._running = False
        if (delay := self.pacing.next_cycle_in(result)) is None:
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
