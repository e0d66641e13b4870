"""Queueing decisions of the admission layer, one story per row, on quota alone (no
placement): StrictFIFO against BestEffortFIFO, the inadmissible set and its requeue, the
sticky preemptor, scheduling-equivalence hashing (kueue pkg/cache/queue/cluster_queue.go,
inadmissible_workloads.go; semantics reference §4.3)."""

from __future__ import annotations

import pytest

from scheduler.admission.policies import PreemptionPolicy, QueueingStrategy
from tests.scheduler.admission_state import QuotaOnlyReplay
from tests.scheduler.builders import make_cluster_queue, make_workload

STRICT = QueueingStrategy.STRICT_FIFO
BEST_EFFORT = QueueingStrategy.BEST_EFFORT_FIFO


def _team_a(strategy: QueueingStrategy, within: PreemptionPolicy | None = None):
    """team-a: 8 GPUs, no cohort."""
    queue = make_cluster_queue("team-a").quota("a100", gpus=8).strategy(strategy)
    return queue.preemption(within=within) if within else queue


def _job(name: str, gpus: int, at: float, runs_for: float = 1000, queue: str = "team-a", priority: int = 0):
    return make_workload(name).gpus(gpus).at(at).runs_for(runs_for).queue(queue).priority(priority).obj()


# 8 GPUs, 6 in use until t=1000; "big" (4) arrives first and does not fit, "small" (2) would.
HEAD_OF_LINE = [_job("w0", 6, 0), _job("big", 4, 10), _job("small", 2, 20)]


@pytest.mark.parametrize(
    ("objects", "workloads", "want_admitted"),
    [
        pytest.param([_team_a(STRICT)], HEAD_OF_LINE, [(0.0, "w0"), (1000.0, "big"), (1000.0, "small")],
                     id="StrictFIFO: the head that does not fit blocks the small job behind it"),
        pytest.param([_team_a(BEST_EFFORT)], HEAD_OF_LINE, [(0.0, "w0"), (20.0, "small"), (1001.0, "big")],
                     id="BestEffortFIFO: the head steps aside, and comes back 1 s after quota is released"),
        pytest.param(
            [make_cluster_queue("team-a").cohort("org").quota("a100", gpus=4),
             make_cluster_queue("team-b").cohort("org").quota("a100", gpus=4)],
            [_job("b0", 4, 0, runs_for=500, queue="team-b"), _job("a0", 4, 0, runs_for=10_000), _job("a1", 4, 10)],
            [(0.0, "b0"), (0.0, "a0"), (501.0, "a1")],
            id="quota released in another queue of the cohort requeues the inadmissible workloads of the tree",
        ),
        pytest.param(
            # "urgent" preempts "low" and waits 30 s for its pods to go; "urgent2", of higher
            # priority, arrives meanwhile but cannot take its turn (Kueue#12740's invariant).
            [_team_a(BEST_EFFORT, within=PreemptionPolicy.LOWER_PRIORITY)],
            [_job("low", 8, 0, runs_for=10_000), _job("urgent", 8, 10, runs_for=10_000, priority=5),
             _job("urgent2", 8, 20, runs_for=10_000, priority=9)],
            [(0.0, "low"), (40.0, "urgent"), (70.0, "urgent2")],
            id="the sticky preemptor keeps its turn until its victims are gone",
        ),
    ],
)
def test_admission_order(objects, workloads, want_admitted):
    log = QuotaOnlyReplay(*(o.obj() for o in objects)).submit(*workloads).run(until=2000)
    assert [(t, w) for t, event, w, _ in log if event == "admitted"] == want_admitted


@pytest.mark.parametrize(
    ("strategy", "want_pending_at_10"),
    [
        pytest.param(BEST_EFFORT, [("x1", "WaitingForQuota"), ("x2", "WaitingForQuota"), ("x3", "WaitingForQuota"),
                                   ("y", "WaitingForQuota")],
                     id="BestEffortFIFO: x2 and x3 are shaped like x1 and fail alike without being tried; y is tried"),
        pytest.param(STRICT, [("x1", "WaitingForQuota"), ("x2", "PendingEvaluation"), ("x3", "PendingEvaluation"),
                              ("y", "PendingEvaluation")],
                     id="StrictFIFO: only the head is tried; the others wait their turn"),
    ],
)
def test_scheduling_equivalence(strategy, want_pending_at_10):
    workloads = [_job("w0", 8, 0), _job("x1", 4, 10), _job("x2", 4, 10), _job("x3", 4, 10), _job("y", 2, 10)]
    log = QuotaOnlyReplay(_team_a(strategy).obj()).submit(*workloads).run(until=11)
    assert sorted((w, reason) for t, event, w, reason in log if event == "pending" and t == 10.0) == want_pending_at_10
