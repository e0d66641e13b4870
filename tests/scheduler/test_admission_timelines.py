"""Kueue admission stories: each test is a small cluster, a few Kueue manifests and a few
jobs, replayed for real, with the exact timeline (or table) the story must produce."""

from __future__ import annotations

from io import StringIO

import pytest
from rich.console import Console

from gpu_finops.explain import explain_run_dir
from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    PreemptionPolicy,
    QueueingStrategy,
)
from tests.scheduler.admission_story import A100, kueue_rows, pending_reasons, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_cohort,
    make_configuration,
    make_node,
    make_workload,
)

ADMISSION = ("admitted", "requeued", "finished", "preempted", "timed_out", "rejected")


def _placed(rows, event="started"):
    return [(r["time_s"], r["workload_id"], r["node"]) for r in rows if r["event"] == event]


def _job(name, queue, at, runs_for, gpus=8):
    """One pod of `gpus` GPUs in `queue`'s LocalQueue."""
    return make_workload(name).queue(queue).at(at).runs_for(runs_for).gpus(gpus)


N1, N2 = make_node("n1").obj(), make_node("n2").obj()


def test_team_a_borrows_idle_quota_then_team_b_reclaims_it_by_preempting_only_enough(tmp_path):
    # Two teams of 8 A100 quota in one cohort; team A fills all 16 GPUs (6 borrowed).
    # Team B's 4-GPU job needs 4 back: the newest borrowed job (a4, 2 GPUs) is not enough,
    # a3 (4 GPUs) is, and adding a4 back still fits: exactly one victim, a3.
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).preemption(reclaim=PreemptionPolicy.ANY).obj(),
    ]
    jobs = [
        _job("a1", "team-a", 0, 10_000, gpus=4).obj(),
        _job("a2", "team-a", 1, 10_000, gpus=6).obj(),
        _job("a3", "team-a", 2, 10_000, gpus=4).obj(),
        _job("a4", "team-a", 3, 10_000, gpus=2).obj(),
        _job("b1", "team-b", 100, 1_000, gpus=4).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)

    assert [(t, e, w, r) for t, e, w, r in timeline(rows, *ADMISSION) if t < 2_000] == [
        (0.0, "admitted", "a1", None),
        (1.0, "admitted", "a2", "Borrowing"),  # 10 of nominal 8
        (2.0, "admitted", "a3", "Borrowing"),
        (3.0, "admitted", "a4", "Borrowing"),
        (130.0, "requeued", "a3", "Preempted"),  # the one victim, once its pods' 30 s grace is over
        (130.0, "admitted", "b1", None),  # its quota came back with its pods
        (1131.0, "admitted", "a3", "Borrowing"),  # b1 done at 1130, inadmissible requeue 1 s later
    ]
    assert [r["reason"] for r in rows if r["event"] == "preempted"] == ["preempted-by:b1"]
    # event log 1.2: the preemptor and the queue place are columns, not text to parse
    assert [(r["event"], r["workload_id"], r["preemptor"]) for r in rows if r["preemptor"]] == [
        ("preempted", "a3", "b1"), ("requeued", "a3", "b1"),
    ]
    places = [(r["workload_id"], r["queue_position"], r["queue_length"]) for r in rows if r["event"] == "pending"]
    assert ("b1", 1, 1) in places and ("a3", 1, 1) in places
    assert all(p is not None for _, p, _ in places)  # every Kueue pending row says where it waits
    preempted = next(r for r in rows if r["event"] == "preempted")
    assert preempted["message"].startswith(
        "Preempted to accommodate a workload (UID: b1, JobUID: b1) due to reclamation within the cohort; "
        "preemptor path: /org/team-b; preemptee path: /org/team-a"
    )
    assert pending_reasons(rows, "b1") == [(
        100.0, "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "4 more needed. Pending the preemption of 1 workload(s); position 1 of 1 in ClusterQueue team-b",
    )]
    assert pending_reasons(rows, "a3") == [(
        130.0, "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "4 more needed; position 1 of 1 in ClusterQueue team-a",
    )]
    admitted = {r["workload_id"]: r for r in rows if r["event"] == "admitted"}
    assert (admitted["a2"]["cluster_queue"], admitted["a2"]["flavor"]) == ("team-a", "a100")
    assert admitted["a4"]["message"] == (
        "Quota reserved in ClusterQueue team-a, wait time since queued was 0s; "
        "borrowing 8 nvidia.com/gpu in flavor a100 from cohort org"
    )


@pytest.mark.parametrize(
    ("strategy", "want_admitted"),
    [
        pytest.param(QueueingStrategy.STRICT_FIFO, {"w0": 0.0, "big": 1000.0, "small": 1000.0},
                     id="StrictFIFO: the head blocks the small job"),
        # big sat in the inadmissible set: it is retried 1 s after w0 frees the quota
        pytest.param(QueueingStrategy.BEST_EFFORT_FIFO, {"w0": 0.0, "big": 1001.0, "small": 20.0},
                     id="BestEffortFIFO: the small job skips ahead"),
    ],
)
def test_queueing_strategy_head_of_line_blocking(tmp_path, strategy, want_admitted):
    # 8 GPUs of quota, 6 in use until t=1000; "big" (4) arrives first and does not fit,
    # "small" (2) arrives next and would.
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).strategy(strategy).obj()]
    jobs = [
        _job("w0", "team-a", 0, 1000, gpus=6).obj(),
        _job("big", "team-a", 10, 1000, gpus=4).obj(),
        _job("small", "team-a", 20, 1000, gpus=2).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert {r["workload_id"]: r["time_s"] for r in rows if r["event"] == "admitted"} == want_admitted
    if strategy is QueueingStrategy.STRICT_FIFO:
        assert pending_reasons(rows, "small") == [(
            20.0, "PendingEvaluation",
            "Workload is pending evaluation in the scheduling queue; position 2 of 2 in ClusterQueue team-a",
        )]




def _usage_over_time(rows):
    """(time, GPUs held by team-a, by team-b) after every admission or release."""
    held = {"team-a": 0, "team-b": 0}
    table = []
    for r in rows:
        if r["event"] == "admitted":
            held[r["cluster_queue"]] += 1
        elif r["event"] in ("finished", "requeued"):
            held[r["cluster_queue"]] -= 1
        else:
            continue
        table.append((r["time_s"], held["team-a"], held["team-b"]))
    return table


@pytest.mark.parametrize(
    ("preemption", "until", "want"),
    [
        pytest.param(
            None, 1201.0,
            # Each GPU team A frees (at 100 s, 200 s, …) goes to team B, whose share after the
            # admission is lower, until the shares are equal at weights 1:2, i.e. 4:8; from
            # then on the GPU A frees comes back to A (1 s later: the inadmissible requeue).
            [(100.0, 11, 0), (101.0, 11, 1), (200.0, 10, 1), (201.0, 10, 2), (300.0, 9, 2), (301.0, 9, 3),
             (400.0, 8, 3), (401.0, 8, 4), (500.0, 7, 4), (501.0, 7, 5), (600.0, 6, 5), (601.0, 6, 6),
             (700.0, 5, 6), (701.0, 5, 7), (800.0, 4, 7), (801.0, 4, 8),
             (900.0, 3, 8), (901.0, 4, 8), (1000.0, 3, 8), (1001.0, 4, 8), (1100.0, 3, 8), (1101.0, 4, 8),
             (1200.0, 3, 8), (1201.0, 4, 8)],
            id="without preemption: converges as team A's work finishes",
        ),
        pytest.param(
            PreemptionPolicy.ANY, 250.0,
            # Team B preempts A's borrowed jobs one at a time (each victim is requeued, and its
            # quota freed, when its pods are gone after the 30 s grace) while B's share with
            # the job <= A's share without the victim.
            [(40.0, 11, 0), (40.0, 11, 1), (70.0, 10, 1), (70.0, 10, 2), (100.0, 9, 2), (100.0, 9, 3),
             (130.0, 8, 3), (130.0, 8, 4), (160.0, 7, 4), (160.0, 7, 5), (190.0, 6, 5), (190.0, 6, 6),
             (220.0, 5, 6), (220.0, 5, 7), (250.0, 4, 7), (250.0, 4, 8)],
            id="with fair-sharing preemption: converges at once",
        ),
    ],
)
def test_fair_sharing_converges_to_the_weights_on_a_saturated_cohort(tmp_path, preemption, until, want):
    # The cohort owns 12 GPUs; team A (weight 1) and team B (weight 2) own none and borrow
    # everything. A starts alone (12 short jobs, 12 long ones queued); B arrives at t=10 with
    # more than fits. A queue's share is what it borrows / 12 / its weight.
    manifests = [
        A100.obj(),
        make_cohort("org").quota("a100", gpus=12).obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=0).weight(1).preemption(reclaim=preemption).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=0).weight(2).preemption(reclaim=preemption).obj(),
        make_configuration().fair_sharing().obj(),
    ]
    jobs = [_job(f"a{i:02d}", "team-a", 0, 100 * (i + 1), gpus=1).obj() for i in range(12)]
    jobs += [_job(f"a-backlog{i:02d}", "team-a", 0, 50_000, gpus=1).obj() for i in range(12)]
    jobs += [_job(f"b{i:02d}", "team-b", 10, 50_000, gpus=1).obj() for i in range(12)]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    usage = _usage_over_time(rows)
    assert [row for row in usage if row[0] == 0.0][-1] == (0.0, 12, 0)  # A alone borrows all
    assert [row for row in usage if 0.0 < row[0] <= until] == want
    assert all(a + b <= 12 for _, a, b in usage)  # never more than the cohort's quota


def test_wait_for_pods_ready_evicts_and_backs_off_a_gang_stuck_on_fragmented_nodes(tmp_path):
    # Quota admits the 2 x 8-GPU gang, but a 1-GPU pod Kueue does not manage sits on each
    # node: 14 GPUs free, no node with 8. Every 300 s the gang is evicted and requeued after
    # 60 s, then 120 s; the third time-out exceeds backoffLimitCount 2 and deactivates it.
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").quota("a100", gpus=16).obj(),
        make_configuration().wait_for_pods_ready(timeout="5m", block_admission=False, backoff_limit=2).obj(),
    ]
    jobs = [make_workload("sys-0").runs_for(100_000).obj(), make_workload("sys-1").runs_for(100_000).obj(),
            _job("gang", "team-a", 10, 1000).pods(2).obj()]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    story = [(t, e, r) for t, e, w, r in timeline(rows, *ADMISSION, "pending") if w == "gang"]
    assert story == [
        (10.0, "admitted", None),
        (10.0, "pending", "GangNotSatisfiable"),  # the placement layer's reason, after Kueue's admission
        (310.0, "requeued", "PodsReadyTimeout"),
        (310.0, "pending", "PodsReadyTimeout"),
        (370.0, "admitted", None),  # backoff 60 s
        (370.0, "pending", "GangNotSatisfiable"),
        (670.0, "requeued", "PodsReadyTimeout"),
        (670.0, "pending", "PodsReadyTimeout"),
        (790.0, "admitted", None),  # backoff 120 s
        (790.0, "pending", "GangNotSatisfiable"),
        (1090.0, "requeued", "PodsReadyTimeout"),
        (1090.0, "rejected", "Deactivated"),
    ]
    messages = {(r["time_s"], r["event"]): r["message"] for r in rows if r["workload_id"] == "gang"}
    assert messages[(310.0, "requeued")] == "Exceeded the PodsReady timeout gang: pods not ready 300s after admission"
    assert messages[(670.0, "pending")] == (
        "Evicted by the PodsReady timeout (2 time(s)); requeued after a backoff of 120s"
    )
    assert messages[(1090.0, "rejected")] == (
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries (backoffLimitCount 2)"
    )


def test_why_pending_golden_timeline_with_both_layers_reasons(tmp_path):
    # One queue of 8 A100 GPUs. "trainer" waits for quota, is admitted when "first" ends,
    # then waits for placement: a higher-priority pod Kueue does not manage took a GPU on
    # each A100 node, so no node has 8 free. Its neighbours wait for reasons of their own.
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).obj()]
    jobs = [
        _job("first", "team-a", 0, 1000).obj(),
        make_workload("daemon-0").at(5).runs_for(1000).model("A100").priority(100).obj(),
        _job("trainer", "team-a", 10, 3000).obj(),
        _job("huge", "team-a", 20, 100).pods(2).obj(),
        _job("h100-only", "team-a", 30, 100).model("H100").obj(),
        _job("typo", "team-z", 40, 100).obj(),
        make_workload("daemon-1").at(1000).runs_for(5000).model("A100").priority(100).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2, make_node("h1").model("H100").obj()], jobs, manifests)
    trainer = [(r["time_s"], r["event"], r["reason"], r["message"]) for r in rows
               if r["workload_id"] == "trainer" and r["event"] in ("pending", "admitted", "started")]
    assert [row[:3] for row in trainer] == [
        (10.0, "pending", "WaitingForQuota"),
        (1001.0, "admitted", None),
        (1001.0, "pending", "Unschedulable"),
        (1005.0, "started", None),
    ]
    assert trainer[0][3] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "8 more needed; position 1 of 1 in ClusterQueue team-a"
    )
    assert trainer[1][3] == "Quota reserved in ClusterQueue team-a, wait time since queued was 991s"
    assert _placed(rows)[-1] == (1005.0, "trainer", "n2")
    assert pending_reasons(rows, "huge") == [
        (20.0, "ExceedsMaxQuota", "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
         "flavor a100, previously considered podsets requests (0) + current podset request (16) > maximum capacity (8); "
         "position 2 of 2 in ClusterQueue team-a"),
        (1001.0, "ExceedsMaxQuota", "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
         "flavor a100, previously considered podsets requests (0) + current podset request (16) > maximum capacity (8); "
         "position 1 of 2 in ClusterQueue team-a"),
    ]
    assert pending_reasons(rows, "h100-only")[0] == (
        30.0, "NoMatchingFlavor",
        "couldn't assign flavors to pod set main: flavor a100 doesn't match node affinity; position 3 of 3 in ClusterQueue team-a",
    )
    assert pending_reasons(rows, "typo") == [(40.0, "Misconfigured", "LocalQueue team-z doesn't exist")]
    assert not [r for r in rows if r["workload_id"] == "typo" and r["event"] in ("admitted", "rejected")]


def test_explain_answers_for_every_waiting_workload_and_the_log_is_byte_identical(tmp_path):
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).strategy(QueueingStrategy.STRICT_FIFO).obj()]
    jobs = [_job("w0", "team-a", 0, 1000, gpus=6).obj(), _job("big", "team-a", 10, 1000, gpus=4).obj(),
            _job("small", "team-a", 20, 1000, gpus=2).obj(), _job("typo", "team-z", 30, 100).obj()]
    logs = []
    for attempt in ("first", "second"):
        (tmp_path / attempt).mkdir()
        kueue_rows(tmp_path / attempt, [N1], jobs, manifests)
        logs.append((tmp_path / attempt / "run-gang-v1.37" / "events.parquet").read_bytes())
    assert logs[0] == logs[1]
    for workload, reason in (("small", "PendingEvaluation"), ("typo", "Misconfigured"), ("big", "WaitingForQuota")):
        out = StringIO()
        explain_run_dir(tmp_path / "first" / "run-gang-v1.37", workload, Console(file=out, width=400))
        assert reason in out.getvalue(), workload


def test_reclaim_while_borrowing_takes_a_victim_that_drops_its_queue_below_nominal(tmp_path):
    # team-a holds 9 of its nominal 8 (a1: 1 GPU, a2: 8 GPUs); team-b holds 6 of 8 and b1
    # wants 4 more, which would make team-b borrow 2. With borrowWithinCohort, a2 is a valid
    # victim while team-a is above nominal (9 > 8); removing it frees all 8 of its GPUs, not
    # just the 1 team-a borrowed. A shortcut that capped what team-a can give at what it
    # borrows would wrongly decide that no set of victims can make room.
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).preemption(
            reclaim=PreemptionPolicy.ANY, borrow=BorrowWithinCohortPolicy.LOWER_PRIORITY, max_priority_threshold=5).obj(),
    ]
    jobs = [
        _job("a1", "team-a", 0, 10_000, gpus=1).obj(),
        _job("a2", "team-a", 1, 10_000, gpus=8).obj(),
        _job("b0", "team-b", 2, 10_000, gpus=6).priority(10).obj(),
        _job("b1", "team-b", 100, 1_000, gpus=4).priority(10).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, *ADMISSION) if t < 1_000] == [
        (0.0, "admitted", "a1", None),
        (1.0, "admitted", "a2", "Borrowing"),
        (2.0, "admitted", "b0", None),
        (130.0, "requeued", "a2", "Preempted"),  # its pods' 30 s grace is over
        (130.0, "admitted", "b1", "Borrowing"),
    ]
    assert [r["reason"] for r in rows if r["event"] == "preempted"] == ["preempted-by:b1"]
