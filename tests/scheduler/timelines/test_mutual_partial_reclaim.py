"""Two elastic workloads of two ClusterQueues reclaim from each other at their reduced
counts, also with PrioritizePreemptorWorkloads on (the demo's deepest preemption chain:
speech-training-00099 and vision-training-00105, every 31 s for 20 minutes). See
docs/fidelity.md, "Known differences (admission)".

Kueue (ff69552, 0.20 development), each step:
- pkg/scheduler/scheduler.go `getInitialAssignments`: the full count first; Preempt with no
  targets, then PartialAdmission's `PodSetReducer.Search` over smaller counts.
- pkg/scheduler/preemption/preemption.go `classicalPreemptions`: with borrowWithinCohort
  unset and no hierarchical candidate, a request that would leave its queue borrowing gets
  no victim of another queue (runs [false, true]; in the borrowing run the other queue's
  candidates are `ReclaimWithoutBorrowing`, not valid).
- classical/hierarchical_preemption.go `collectCandidatesForHierarchicalReclaim`: a request
  that fits its own queue's nominal quota (`QuantitiesFitInQuota`) has a hierarchical
  advantage over every borrower of the cohort, of any priority that reclaimWithinCohort
  (Any) allows: the reduced count reclaims.
- the next cycle starts at the full count again, which now fits by borrowing; the victim,
  also elastic and within its nominal quota at its own reduced count, reclaims in turn.
The gate orders a ClusterQueue's preemptor first in the cycle; here the preemptor is
admitted first anyway, and the loop is between two queues.

team-a and team-b, 8 GPUs of nominal quota each, share a cohort of 16 GPUs (two nodes).
"b0" (team-b) holds 2 throughout. "a" (team-a, 5 pods x 2 GPUs, min_count 3) and "b"
(team-b, 4 pods x 2 GPUs, min_count 3) are elastic. b's full count (8) is within team-b's
nominal quota alone, so flavor assignment asks preemption (`fitsResourceQuota`), but on top
of b0's 2 it borrows, so preemption finds no victim of team-a (as for both in the demo);
a's full count (10) is above team-a's nominal quota and flavor assignment does not ask.
"""

from __future__ import annotations

from pathlib import Path

from scheduler.admission.policies import PreemptionPolicy
from tests.scheduler.admission_story import A100, kueue_rows, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_node,
    make_workload,
)

PROFILES = Path(__file__).resolve().parents[3] / "scheduler" / "profiles"


def _rows(tmp_path: Path, reclaim: str) -> list[dict]:
    manifests = [
        A100.obj(),
        make_configuration().feature_gate("PrioritizePreemptorWorkloads", True).obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(reclaim=reclaim).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).preemption(reclaim=reclaim).obj(),
    ]
    jobs = [
        make_workload("b0").queue("team-b").at(0).runs_for(9_000).gpus(2).obj(),
        make_workload("a").queue("team-a").at(1).runs_for(5_000).gpus(2).pods(5).min_count(3).obj(),
        make_workload("b").queue("team-b").at(100).runs_for(5_000).gpus(2).pods(4).min_count(3).obj(),
    ]
    # The loop does not end by itself: stop the replay after 300 simulated seconds.
    tmp_path.mkdir(exist_ok=True)
    profile = (PROFILES / "gang-v1.37.toml").read_text() + "max_simulated_s = 300\n"
    return kueue_rows(tmp_path, [make_node("n1").obj(), make_node("n2").obj()], jobs, manifests, profile=profile)


def _admission(rows: list[dict]) -> list[tuple]:
    return timeline(rows, "admitted", "requeued")


def _preemptors(rows: list[dict]) -> list[tuple[float, str, str | None]]:
    return [(r["time_s"], r["workload_id"], r["preemptor"]) for r in rows
            if r["event"] == "requeued" and r["pod_index"] is None]


def test_two_elastic_workloads_reclaim_from_each_other_every_grace_period(tmp_path):
    """"b"'s 8 GPUs on team-b's 2 would borrow: no victim. Its 6 fit team-b's nominal quota:
    "a" (borrowing 2) is reclaimed, 30 s of grace. Then "b" fits whole by borrowing; "a",
    back in its queue, fits neither whole nor at 8 without reclaiming "b", which now
    borrows, and so on."""
    rows = _rows(tmp_path, PreemptionPolicy.ANY)
    assert _admission(rows)[:9] == [
        (0.0, "admitted", "b0", None),
        (1.0, "admitted", "a", "Borrowing"),  # 10 GPUs, 2 above team-a's nominal 8
        (130.0, "requeued", "a", "Preempted"),  # b (at 100 s) reclaimed at its reduced count
        (130.0, "admitted", "b", "Borrowing"),  # the full count first: 8 GPUs fit by borrowing
        (160.0, "requeued", "b", "Preempted"),  # a's reduced count (8, team-a's nominal) reclaimed at 130 s
        (160.0, "admitted", "a", "Borrowing"),
        (190.0, "requeued", "a", "Preempted"),
        (190.0, "admitted", "b", "Borrowing"),
        (220.0, "requeued", "b", "Preempted"),
    ]
    assert _preemptors(rows)[:4] == [(130.0, "a", "b"), (160.0, "b", "a"), (190.0, "a", "b"), (220.0, "b", "a")]
    # Each reclaim is for the reduced count, "2 more needed" (6 of "b" with 4 free, 8 of
    # "a" with 6 free); the full counts, which would borrow, may not reclaim (4 more needed).
    waits = [(r["time_s"], r["workload_id"], r["message"]) for r in rows
             if r["event"] == "pending" and r["reason"] == "WaitingForPreemptedWorkloads"]
    assert [(t, w) for t, w, _ in waits][:4] == [(100.0, "b"), (130.0, "a"), (160.0, "b"), (190.0, "a")]
    assert all("in flavor a100, 2 more needed. Pending the preemption of 1 workload(s)" in m for _, _, m in waits)
    reclaims = [r["message"] for r in rows if r["event"] == "requeued" and r["pod_index"] is None]
    assert all("due to reclamation within the cohort" in m for m in reclaims)


def test_with_reclaim_lower_priority_the_equal_priority_borrower_keeps_its_quota(tmp_path):
    """reclaimWithinCohort LowerPriority (`SatisfiesPreemptionPolicy` before any variant):
    "a" is of "b"'s priority, so "b" waits for it, at any count."""
    rows = _rows(tmp_path, PreemptionPolicy.LOWER_PRIORITY)
    assert _admission(rows) == [(0.0, "admitted", "b0", None), (1.0, "admitted", "a", "Borrowing")]
