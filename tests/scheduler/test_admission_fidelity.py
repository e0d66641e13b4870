"""Kueue admission rules read from upstream source, each pinned by a golden timeline: a real
replay through the Kueue layer (`admission_story.kueue_rows`) with the exact events the rule
implies. Each test's docstring names the upstream file and function it follows
(docs/fidelity.md, "Admission (Kueue)", lists them)."""

from __future__ import annotations

import pytest

from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    FlavorFungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
    QueueingStrategy,
)
from tests.scheduler.admission_story import A100, kueue_rows, pending_reasons, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_flavor,
    make_local_queue,
    make_node,
    make_workload,
    queue_config,
)
from tests.scheduler.scenario import dra_preemption

ADMISSION = ("admitted", "requeued", "finished", "preempted", "timed_out", "rejected")
TRY_NEXT = FlavorFungibilityPolicy.TRY_NEXT_FLAVOR
N1, N2, N3 = make_node("n1").obj(), make_node("n2").obj(), make_node("n3").obj()


def _job(name, queue, at, runs_for, gpus=8):
    """One pod of `gpus` GPUs in `queue`'s LocalQueue."""
    return make_workload(name).queue(queue).at(at).runs_for(runs_for).gpus(gpus)


def _story(rows, workload, *events):
    return [(t, e, r) for t, e, w, r in timeline(rows, *events) if w == workload]


def test_quota_is_kept_through_a_permit_timeout_and_the_pods_ready_timer_runs_from_admission(tmp_path):
    """kueue pkg/controller/core/workload_controller.go (Reconcile, reconcileNotReadyTimeout):
    only Kueue's own evictions (preemption, PodsReady timeout, deactivation) release a
    Workload's quota; a gang that times out at the Permit barrier keeps its admission (the
    job's pods are recreated) and its PodsReady timer keeps counting from the Admitted
    condition.

    A node-wide pod Kueue does not manage holds n1 until 5000 s. The 2 x 8-GPU gang is
    admitted at 10 s; one pod waits at Permit on n2 and times out every 300 s (gang-v1.35).
    The old replay gave the quota back and re-admitted the gang at each time-out, so the
    waiter got the quota for a moment and the PodsReady timer (10 min) restarted forever."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").quota("a100", gpus=16).obj(),
        make_configuration().wait_for_pods_ready(timeout="10m", block_admission=False).obj(),
    ]
    jobs = [
        make_workload("sys").runs_for(5_000).gpus(8).obj(),
        _job("gang", "team-a", 10, 1_000).pods(2).obj(),
        _job("waiter", "team-a", 20, 100).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests, profile="gang-v1.35")
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, *ADMISSION) if t < 1_300] == [
        (10.0, "admitted", "gang", None),
        (310.0, "requeued", "gang", "GangPermitTimeout"),  # a kube-level failure: quota kept, no re-admission
        (610.0, "requeued", "gang", "PodsReadyTimeout"),  # 10 min after the one Admitted condition
        (611.0, "admitted", "waiter", None),  # Kueue's eviction gave the quota back (requeue batch 1 s)
        (712.0, "admitted", "gang", None),  # backoff (60 s) over at 670; quota back when the waiter ends
        (1012.0, "requeued", "gang", "GangPermitTimeout"),
    ]


def test_preemption_within_the_queue_needs_the_request_to_fit_its_nominal_quota(tmp_path):
    """kueue pkg/scheduler/flavorassigner/flavorassigner.go (fitsResourceQuota): the
    preemption oracle is asked only when the request fits the ClusterQueue's nominal quota,
    reclaim lower in the cohort tree could help, or borrowWithinCohort (or fair sharing's
    reclaim) allows preempting while borrowing; otherwise the flavor is NoFit.

    team-a (nominal 8, withinClusterQueue LowerPriority, no borrowWithinCohort) holds 8 for
    a low-priority job; team-b uses 4 of its 8. "high" wants 12, above team-a's nominal: it
    waits for quota, and preempts nobody. The old replay asked the oracle anyway and evicted
    "low" so that "high" could borrow team-b's idle 4."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(within=PreemptionPolicy.LOWER_PRIORITY).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj(),
    ]
    jobs = [
        _job("low", "team-a", 0, 5_000).priority(1).obj(),
        _job("b1", "team-b", 1, 5_000, gpus=4).obj(),
        _job("high", "team-a", 100, 1_000, gpus=4).pods(3).priority(9).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2, N3], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, *ADMISSION, "pending")] == [
        (0.0, "admitted", "low", None),
        (1.0, "admitted", "b1", None),
        (100.0, "pending", "high", "WaitingForQuota"),
        (5001.0, "admitted", "high", "Borrowing"),  # low finished at 5000; 8 own + 4 idle of team-b
    ]
    assert pending_reasons(rows, "high")[0][2] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "8 more needed; position 1 of 1 in ClusterQueue team-a"
    )


H100 = make_flavor("h100").gpu_model("H100")
H1 = make_node("h1").model("H100").obj()


def _a100_then_h100(a100_gpus=4, h100_gpus=6, **fungibility):
    """team-a tries a100 (borrowing from team-b in the cohort) before h100."""
    team_a = (make_cluster_queue("team-a").cohort("org").quota("a100", gpus=a100_gpus).quota("h100", gpus=h100_gpus)
              .preemption(within=PreemptionPolicy.LOWER_PRIORITY).fungibility(**fungibility))
    return [A100.obj(), H100.obj(), team_a.obj(), make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj()]


@pytest.mark.parametrize(("preference", "want"), [
    (FungibilityPreference.PREEMPTION_OVER_BORROWING, [
        (0.0, "admitted", "low", None, "h100"),
        (130.0, "requeued", "low", "Preempted", None),  # h100 needs no borrowing: preempt there
        (130.0, "admitted", "w", None, "h100"),
    ]),
    (FungibilityPreference.BORROWING_OVER_PREEMPTION, [
        (0.0, "admitted", "low", None, "h100"),
        (100.0, "admitted", "w", "Borrowing", "a100"),  # a100 fits by borrowing: no preemption
    ]),
])
def test_flavor_fungibility_preference_has_current_kueues_meaning(tmp_path, preference, want):
    """kueue pkg/scheduler/flavorassigner/flavorassigner.go (isPreferred, after kueue #9464):
    BorrowingOverPreemption (and no preference) ranks flavors by preemption mode first, so a
    flavor that fits by borrowing beats one that needs preemption; PreemptionOverBorrowing
    ranks by borrowing level first, so preempting within nominal quota beats borrowing.

    team-a tries a100 (4 own GPUs, 8 to borrow from team-b) before h100 (6 GPUs, all held by
    "low"); "w" (6 GPUs, higher priority) can borrow in a100 or preempt in h100. The old
    replay had both preferences the other way round."""
    manifests = _a100_then_h100(when_can_borrow=TRY_NEXT, when_can_preempt=TRY_NEXT, preference=preference)
    jobs = [_job("low", "team-a", 0, 5_000, gpus=6).model("H100").priority(0).obj(),
            _job("w", "team-a", 100, 1_000, gpus=6).priority(5).obj()]
    rows = kueue_rows(tmp_path, [N1, N2, H1], jobs, manifests)
    assert [(r["time_s"], r["event"], r["workload_id"], r["reason"], r["flavor"]) for r in rows
            if r["event"] in ("admitted", "requeued") and r["time_s"] < 1_000] == want


@pytest.mark.parametrize(("fungibility", "a100_gpus", "holders", "want"), [
    ({"when_can_borrow": "Borrow"}, 4, [], [
        (100.0, "admitted", "w", "Borrowing", "a100"),  # MayStopSearch: stops at the borrowing flavor
    ]),
    ({"when_can_preempt": "Preempt"}, 8, [("low", "team-a"), ("b", "team-b")], [
        (0.0, "admitted", "low", None, "a100"),
        (1.0, "admitted", "b", None, "a100"),
        (130.0, "requeued", "low", "Preempted", None),  # MayStopSearch: preempts in the first flavor
        (130.0, "admitted", "w", None, "a100"),
    ]),
])
def test_v1beta1_fungibility_spellings_mean_may_stop_search(tmp_path, fungibility, a100_gpus, holders, want):
    """kueue apis/kueue/v1beta1/clusterqueue_types.go (FlavorFungibilityPolicy) and
    clusterqueue_conversion.go: the deprecated whenCanBorrow ``Borrow`` and whenCanPreempt
    ``Preempt`` are old names for MayStopSearch. The old replay read them as TryNextFlavor
    and gave "w" the free h100 flavor instead."""
    manifests = _a100_then_h100(a100_gpus=a100_gpus, **fungibility)
    jobs = [_job(name, queue, at, 5_000).model("A100").priority(0).obj() for at, (name, queue) in enumerate(holders)]
    jobs.append(_job("w", "team-a", 100, 1_000, gpus=6).priority(5).obj())
    rows = kueue_rows(tmp_path, [N1, N2, H1], jobs, manifests)
    assert [(r["time_s"], r["event"], r["workload_id"], r["reason"], r["flavor"]) for r in rows
            if r["event"] in ("admitted", "requeued") and r["time_s"] < 1_000] == want


def test_a_cycle_rechecks_fit_before_it_preempts(tmp_path):
    """kueue pkg/scheduler/scheduler.go (processEntry, fits): before issuing preemptions an
    entry checks that it fits with the cycle's earlier admissions counted and its targets
    (and the cycle's other victims) removed; one that no longer fits is skipped ("Workload
    no longer fits after processing another workload") and preempts nobody.

    team-a and team-b (8 GPUs each) share a cohort; team-b's "low" holds 8. At 100 s two
    heads meet in one cycle: "a" (8, within team-a's nominal: Fit) and "big" (12, may
    borrow while preempting: Preempt "low"). "a" goes first (no borrowing) and takes team-a's
    idle 8, so "big" would not fit even without "low". The old replay evicted "low" anyway."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).preemption(
            within=PreemptionPolicy.LOWER_PRIORITY, reclaim=PreemptionPolicy.LOWER_PRIORITY,
            borrow=BorrowWithinCohortPolicy.LOWER_PRIORITY).obj(),
    ]
    jobs = [
        _job("low", "team-b", 0, 5_000).priority(0).obj(),
        _job("a", "team-a", 100, 1_000).priority(1).obj(),
        _job("big", "team-b", 100, 1_000, gpus=4).pods(3).priority(9).obj(),
    ]
    rows = kueue_rows(tmp_path, [N1, N2, N3, make_node("n4").obj()], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, *ADMISSION, "pending") if t < 1_200] == [
        (0.0, "admitted", "low", None),
        (100.0, "admitted", "a", None),
        (100.0, "pending", "big", "WaitingForQuota"),  # skipped: no preemption issued
        (1101.0, "pending", "big", "WaitingForPreemptedWorkloads"),  # "a" ended at 1100: now it preempts
        (1131.0, "requeued", "low", "Preempted"),
        (1131.0, "admitted", "big", "Borrowing"),
        (1131.0, "pending", "low", "WaitingForQuota"),
    ]
    assert pending_reasons(rows, "big")[0][2] == (
        "Workload no longer fits after processing another workload; position 1 of 1 in ClusterQueue team-b"
    )


def test_pods_ready_means_every_pod_running_not_min_count(tmp_path):
    """kueue pkg/controller/jobframework/reconciler.go (PodsReady from the job's PodsReady:
    for a batch Job, ready + succeeded pods >= parallelism) and workload_controller.go
    (reconcileNotReadyTimeout): PodsReady needs every pod of the pod set running, not the
    gang's min_count; a job whose quorum runs but whose other pods never place is evicted
    by the PodsReady timeout.

    "elastic" (2 pods of 8 GPUs, min_count 1) runs one pod on n1; n2 is held by a pod Kueue
    does not manage. The old replay called it ready at one pod and never timed it out."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").quota("a100", gpus=16).obj(),
        make_configuration().wait_for_pods_ready(timeout="5m", block_admission=False).obj(),
    ]
    jobs = [make_workload("sys").runs_for(5_000).gpus(8).obj(),
            _job("elastic", "team-a", 10, 1_000).pods(2).min_count(1).obj()]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert _story(rows, "elastic", *ADMISSION)[:3] == [
        (10.0, "admitted", None),
        (310.0, "requeued", "PodsReadyTimeout"),  # one of two pods ran for 300 s: not ready
        (370.0, "admitted", None),  # backoff 60 s
    ]


@pytest.mark.parametrize(("recovery_timeout", "evicted_at"), [
    (None, 400.0),  # recoveryTimeout defaults to the timeout: 100 s + 300 s (was 430 s)
    ("2m", 220.0),  # 100 s + 120 s (was 250 s)
    ("0s", 100.0),  # evicted as soon as the pods are marked for deletion (was 130 s)
])
def test_recovery_timeout_runs_from_when_the_pods_are_marked_for_deletion(tmp_path, recovery_timeout, evicted_at):
    """kueue pkg/controller/core/workload_controller.go (admittedNotReadyWorkload:
    WaitForRecovery counts from the PodsReady condition's last transition),
    pkg/controller/jobframework/reconciler.go (PodsReady turns False, WaitForRecovery, as
    soon as the Job's ready count is below its pods: `Job.PodsReady`), kubernetes
    pkg/controller/job (ready counts active pods, and a pod marked for deletion is not
    active); apis/config/v1beta2/defaults.go (recoveryTimeout defaults to the timeout).

    "train" runs on the only node; at 100 s a pod Kueue does not manage preempts it
    (kube-scheduler marks its pod for deletion then; it is gone at 130 s after the 30 s
    grace period). Kueue keeps the quota (a kube-level failure) and evicts it when the
    recovery timer, started at 100 s, runs out; it is admitted again 60 s later (backoff).
    The replay started the timer at 130 s."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").quota("a100", gpus=8).obj(),
        make_configuration().wait_for_pods_ready(timeout="5m", block_admission=False,
                                                 recovery_timeout=recovery_timeout).obj(),
    ]
    jobs = [_job("train", "team-a", 0, 5_000).priority(0).obj(),
            make_workload("urgent").at(100).runs_for(2_000).gpus(8).priority(100).obj()]
    # kube-scheduler preempts "train" only where it may free DRA-claimed GPUs (KEP-5690)
    rows = kueue_rows(tmp_path, [N1], jobs, manifests, profile=dra_preemption("gang-v1.37"))
    story = _story(rows, "train", *ADMISSION)
    assert story[0] == (0.0, "admitted", None)
    assert (130.0, "requeued", "Preempted") in story or evicted_at <= 130.0  # still admitted after the preemption
    assert (evicted_at, "requeued", "PodsReadyTimeout") in story
    assert story[story.index((evicted_at, "requeued", "PodsReadyTimeout")) + 1] == (evicted_at + 60.0, "admitted", None)
    evicted = next(r for r in rows if r["workload_id"] == "train" and r["reason"] == "PodsReadyTimeout")
    wait = 300 if recovery_timeout is None else {"2m": 120, "0s": 0}[recovery_timeout]
    assert evicted["message"] == (
        f"Exceeded the PodsReady timeout train: pods not ready again {wait}s after they stopped running (recoveryTimeout)"
    )


@pytest.mark.parametrize(("timestamp", "after_eviction"), [
    ("Eviction", (1000.0, "admitted", "later", None)),  # "later" heads the StrictFIFO queue and blocks it
    ("Creation", (370.0, "admitted", "stuck", None)),  # "stuck" keeps its place: admitted after its backoff
])
def test_requeuing_strategy_timestamp_orders_a_workload_evicted_by_the_pods_ready_timeout(tmp_path, timestamp,
                                                                                          after_eviction):
    """kueue pkg/workload/workload.go (Ordering.GetQueueOrderTimestamp): with
    requeuingStrategy.timestamp Eviction a workload evicted by the PodsReady timeout queues
    by its eviction time; with Creation it keeps its creation time.

    StrictFIFO queue of 24 GPUs; "filler" (8) holds quota until 1000 s. "stuck" (2 x 8,
    created at 10 s) cannot place (a pod Kueue does not manage holds n1), is evicted at
    310 s and back from its backoff at 370 s; "later" (3 x 8, created at 20 s) needs the
    whole quota. By eviction time "later" is the head and blocks the queue until "filler"
    ends; by creation time "stuck" is the head and is admitted again at 370 s."""
    configuration = make_configuration().wait_for_pods_ready(timeout="5m", block_admission=False).obj()
    configuration["waitForPodsReady"]["requeuingStrategy"]["timestamp"] = timestamp
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=24).strategy(QueueingStrategy.STRICT_FIFO).obj(),
                 configuration]
    jobs = [make_workload("sys").runs_for(5_000).gpus(8).obj(),
            _job("filler", "team-a", 0, 1_000).obj(),
            _job("stuck", "team-a", 10, 1_000).pods(2).obj(),
            _job("later", "team-a", 20, 1_000).pods(3).obj()]
    rows = kueue_rows(tmp_path, [N1, N2, N3], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, "admitted", "requeued") if t <= 1000][:4] == [
        (0.0, "admitted", "filler", None),
        (10.0, "admitted", "stuck", None),
        (310.0, "requeued", "stuck", "PodsReadyTimeout"),
        after_eviction,
    ]


@pytest.mark.parametrize(("strategy", "winner"), [
    (QueueingStrategy.STRICT_FIFO, "high"),  # not sticky: the higher-priority head takes the freed quota
    (QueueingStrategy.BEST_EFFORT_FIFO, "mid"),  # sticky: the preemptor keeps its turn
])
def test_the_preemptor_is_sticky_only_under_best_effort_fifo(tmp_path, strategy, winner):
    """kueue pkg/cache/queue/cluster_queue.go (requeueIfNotPresent, preemptorWorkload): a
    head pending its preemptions is tracked as the queue's preemptor, and made sticky at
    the head only when the queue is BestEffortFIFO; under StrictFIFO the heap order alone
    decides the next head.

    "mid" preempts "low" at 100 s (the quota is back at 130 s, after the grace period);
    "high" arrives at 110 s. Under StrictFIFO "high" heads the queue and is admitted at
    130 s; the old replay kept "mid" sticky under both strategies."""
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).strategy(strategy)
                 .preemption(within=PreemptionPolicy.LOWER_PRIORITY).obj()]
    jobs = [_job("low", "team-a", 0, 5_000).priority(0).obj(),
            _job("mid", "team-a", 100, 1_000).priority(5).obj(),
            _job("high", "team-a", 110, 1_000).priority(9).obj()]
    rows = kueue_rows(tmp_path, [N1], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, "admitted", "requeued") if t <= 130] == [
        (0.0, "admitted", "low", None),
        (130.0, "requeued", "low", "Preempted"),
        (130.0, "admitted", winner, None),
    ]


def test_fair_sharing_breaks_a_tie_between_target_queues_by_their_first_candidates(tmp_path):
    """kueue pkg/scheduler/preemption/fairsharing/ordering.go (nextTarget): when two
    ClusterQueues have the same dominant resource share, the one whose first candidate
    comes first in CandidatesOrdering (preemption/common/ordering.go: evicted, other
    queues, lower priority, newer admission) is the target.

    team-a and team-b both borrow 2 GPUs (equal shares); team-a's job has priority 0,
    team-b's priority 5. team-c reclaims its nominal 4 and preempts team-a's job. The old
    replay took the last queue of equal share (team-b)."""
    manifests = [A100.obj(), make_configuration().fair_sharing().obj()] + [
        make_cluster_queue(name).cohort("org").quota("a100", gpus=4).preemption(reclaim=PreemptionPolicy.ANY).obj()
        for name in ("team-a", "team-b", "team-c")
    ]
    jobs = [_job("a1", "team-a", 0, 5_000, gpus=6).priority(0).obj(),
            _job("b1", "team-b", 1, 5_000, gpus=6).priority(5).obj(),
            _job("c1", "team-c", 100, 1_000, gpus=4).obj()]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, "admitted", "requeued") if t <= 130] == [
        (0.0, "admitted", "a1", "Borrowing"),
        (1.0, "admitted", "b1", "Borrowing"),
        (130.0, "requeued", "a1", "Preempted"),
        (130.0, "admitted", "c1", None),
    ]


def test_kueue_fields_the_replay_does_not_model_give_one_warning_line_each():
    """kueue apis/kueue/v1beta2/clusterqueue_types.go (namespaceSelector: "null is a nothing
    selector"; admissionChecks, admissionChecksStrategy) and localqueue_types.go
    (stopPolicy): fields that change what Kueue decides but that the replay ignores are said
    once per field, naming the objects; they used to be accepted silently. admissionScope
    (admission fair sharing) is modelled and says nothing."""
    checked = make_cluster_queue("checked").quota("a100", gpus=8).obj()
    checked["spec"]["admissionChecks"] = ["provisioning"]
    checked["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
    also_checked = make_cluster_queue("also-checked").quota("a100", gpus=8).obj()
    also_checked["spec"]["admissionChecks"] = ["provisioning"]
    unselected = make_cluster_queue("unselected").quota("a100", gpus=8).obj()
    del unselected["spec"]["namespaceSelector"]
    held = make_local_queue("held").cluster_queue("checked").obj()
    held["spec"]["stopPolicy"] = "Hold"
    config = queue_config(A100.obj(), checked, also_checked, unselected, held)
    assert config.warnings == (
        "queues.yaml: spec.admissionChecks is not modelled: workloads are admitted as if every admission check "
        "passed at once (checked, also-checked)",
        "queues.yaml: ClusterQueue without spec.namespaceSelector: Kueue's null selector matches no namespace, so "
        "Kueue would admit nothing from it; the replay admits from every LocalQueue as if it were {} (unselected)",
        "queues.yaml: LocalQueue spec.stopPolicy is not modelled: the LocalQueue is never held (held/held)",
    )


def test_a_head_without_preemption_candidates_reserves_only_its_nominal_quota(tmp_path):
    """kueue pkg/scheduler/scheduler.go (reserveCapacityForUnreclaimablePreempt,
    quotaResourcesToReserve): a head that needs preemption but has no candidates holds, for
    the rest of the cycle, what it could claim: when it would not borrow, its request capped
    at its ClusterQueue's unused nominal quota (with borrowing: capped at nominal +
    borrowingLimit); not everything available in the cohort.

    team-a (StrictFIFO, nominal 4) heads with "w" (10 GPUs, no candidates); team-c (nominal
    0) has "x" (4 GPUs, borrowing) in the same cycle. "w" goes first and holds team-a's 4;
    8 are free in the cohort, so "x" is admitted. The old replay held all 8 for "w"."""
    manifests = [
        A100.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=4).strategy(QueueingStrategy.STRICT_FIFO).preemption(
            reclaim=PreemptionPolicy.LOWER_PRIORITY, borrow=BorrowWithinCohortPolicy.LOWER_PRIORITY).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj(),
        make_cluster_queue("team-c").cohort("org").quota("a100", gpus=0).obj(),
    ]
    jobs = [_job("b1", "team-b", 0, 5_000, gpus=4).priority(10).obj(),
            _job("w", "team-a", 100, 1_000, gpus=2).pods(5).priority(5).obj(),
            _job("x", "team-c", 100, 1_000, gpus=4).obj()]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert [(t, e, w, r) for t, e, w, r in timeline(rows, "admitted", "pending") if t <= 1_000] == [
        (0.0, "admitted", "b1", None),
        (100.0, "admitted", "x", "Borrowing"),
        (100.0, "pending", "w", "WaitingForQuota"),
    ]


def test_partial_admission_admits_the_largest_count_down_to_min_count(tmp_path):
    """kueue pkg/scheduler/scheduler.go (getInitialAssignments) and
    pkg/scheduler/flavorassigner/podset_reducer.go (PodSetReducer.Search): when the full
    pod count neither fits nor can preempt, a pod set with minCount is tried at lower
    counts, by binary search down to minCount, and admitted with the largest count that
    fits; the job then runs that many pods. A trace's min_count is the pod set's minCount.

    "elastic" asks for 4 pods of 4 GPUs (min_count 1) in a queue of 8 GPUs: Kueue admits 2
    pods, which run. The old replay left it pending (ExceedsMaxQuota) forever."""
    manifests = [A100.obj(), make_cluster_queue("team-a").quota("a100", gpus=8).obj()]
    jobs = [_job("elastic", "team-a", 10, 1_000, gpus=4).pods(4).min_count(1).obj()]
    rows = kueue_rows(tmp_path, [N1, N2], jobs, manifests)
    assert [(r["time_s"], r["event"], r["pod_index"]) for r in rows
            if r["event"] in ("admitted", "started", "finished", "pending")] == [
        (10.0, "admitted", None),
        (10.0, "started", 0),
        (10.0, "started", 1),
        (1010.0, "finished", 0),
        (1010.0, "finished", 1),
    ]
    admitted = next(r for r in rows if r["event"] == "admitted")
    assert admitted["message"] == (
        "Quota reserved in ClusterQueue team-a, wait time since queued was 0s; partially admitted: 2 of 4 pods"
    )
