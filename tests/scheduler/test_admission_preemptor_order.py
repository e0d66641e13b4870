"""The reclaim loop of partial admission, and the feature gate that ends it, as golden
timelines through the real replay (see docs/fidelity.md, "Admission (Kueue)").

kueue pkg/scheduler/scheduler.go (getInitialAssignments, the classical iterator) and
pkg/cache/queue/cluster_queue.go (preemptorWorkload). An elastic workload whose full count
neither fits nor may preempt is tried at smaller counts; a smaller count within its nominal
quota can reclaim from a borrowing workload of another ClusterQueue. When the victim is
gone, the next cycle tries the full count first again, and it now fits by borrowing. The
victim, requeued, also fits by borrowing; both borrow, the priorities are equal, and the
victim is older, so it is admitted first and the preemptor no longer fits: it reclaims
again. Kueue issue #13662 reports this thrashing; Kueue 0.20 (PR #13797) orders a workload
waiting for its preemptions first in the cycle, behind the alpha feature gate
PrioritizePreemptorWorkloads (off by default).

team-a (nominal 6) and team-b (nominal 2) share a cohort of 8 GPUs (one node), every queue
reclaiming from any borrower. "v" (team-b, 2 pods x 2 GPUs) borrows 2 of team-a's GPUs
from 0 s. "p" (team-a, 4 pods x 2 GPUs, min_count 3) arrives at 100 s: its 8 GPUs would
borrow, and a borrowing request may not preempt; its 6 fit team-a's nominal quota by
reclaiming from "v".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.admission.policies import PreemptionPolicy
from tests.scheduler.admission_story import A100, kueue_rows, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_node,
    make_workload,
)

PROFILES = Path(__file__).resolve().parents[2] / "scheduler" / "profiles"


def _rows(tmp_path: Path, *, prioritize_preemptors: bool | None, fair_sharing: bool = False) -> list[dict]:
    configuration = make_configuration()
    if fair_sharing:
        configuration.fair_sharing()
    if prioritize_preemptors is not None:
        configuration.feature_gate("PrioritizePreemptorWorkloads", prioritize_preemptors)
    manifests = [
        A100.obj(),
        configuration.obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=6).preemption(reclaim=PreemptionPolicy.ANY).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=2).preemption(reclaim=PreemptionPolicy.ANY).obj(),
    ]
    jobs = [
        make_workload("v").queue("team-b").at(0).runs_for(5_000).gpus(2).pods(2).obj(),
        make_workload("p").queue("team-a").at(100).runs_for(1_000).gpus(2).pods(4).min_count(3).obj(),
    ]
    # The loop never ends by itself: stop the replay after 400 simulated seconds.
    tmp_path.mkdir(exist_ok=True)
    profile = tmp_path / "gang-capped.toml"
    profile.write_text((PROFILES / "gang-v1.37.toml").read_text() + "max_simulated_s = 400\n")
    return kueue_rows(tmp_path, [make_node("n1").obj()], jobs, manifests, profile=str(profile))


def _admission(rows: list[dict]) -> list[tuple]:
    return [(t, e, w, r) for t, e, w, r in timeline(rows, "admitted", "requeued")]


@pytest.mark.parametrize("fair_sharing", [False, True], ids=["classical", "fair-sharing"])
def test_without_the_gate_the_preemptor_and_its_victim_take_turns(tmp_path, fair_sharing):
    """Kueue's default (PrioritizePreemptorWorkloads off): the victim, older, wins every
    cycle after its eviction, and the preemptor reclaims again 30 s (the grace period) later.
    Under fair sharing (fair_sharing_iterator.go) both shares are equal and the tie goes the
    same way."""
    rows = _rows(tmp_path, prioritize_preemptors=None, fair_sharing=fair_sharing)
    assert _admission(rows)[:7] == [
        (0.0, "admitted", "v", "Borrowing"),
        (130.0, "requeued", "v", "Preempted"),  # p's 6 GPUs reclaim; v's pods get 30 s to stop
        (130.0, "admitted", "v", "Borrowing"),  # v is older: first in the cycle; p (8, borrowing) no longer fits
        (160.0, "requeued", "v", "Preempted"),
        (160.0, "admitted", "v", "Borrowing"),
        (190.0, "requeued", "v", "Preempted"),
        (190.0, "admitted", "v", "Borrowing"),
    ]
    assert not [r for r in rows if r["event"] == "admitted" and r["workload_id"] == "p"]
    assert _admission(rows) == _admission(_rows(tmp_path / "off", prioritize_preemptors=False, fair_sharing=fair_sharing))


@pytest.mark.parametrize("fair_sharing", [False, True], ids=["classical", "fair-sharing"])
def test_with_prioritize_preemptor_workloads_the_preemptor_is_admitted(tmp_path, fair_sharing):
    """PrioritizePreemptorWorkloads on: "p", its queue's preemptor, goes first in the cycle
    after "v" left (step 1 of the classical iterator and of the fair-sharing comparer), is
    admitted with all 4 pods (borrowing), and "v" waits."""
    rows = _rows(tmp_path, prioritize_preemptors=True, fair_sharing=fair_sharing)
    assert _admission(rows) == [
        (0.0, "admitted", "v", "Borrowing"),
        (130.0, "requeued", "v", "Preempted"),
        (130.0, "admitted", "p", "Borrowing"),
    ]
    admitted = next(r for r in rows if r["event"] == "admitted" and r["workload_id"] == "p")
    assert "partially admitted" not in admitted["message"]


def test_with_partial_admission_off_the_elastic_workload_waits_for_its_full_count(tmp_path):
    """kueue pkg/features/kube_features.go (PartialAdmission, beta, on by default) and
    workload.CanBePartiallyAdmitted: with the gate off, minCount is ignored; "p" can neither
    fit its 8 GPUs nor preempt while borrowing, so it waits and "v" is never evicted."""
    manifests = [
        A100.obj(),
        make_configuration().feature_gate("PartialAdmission", False).obj(),
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=6).preemption(reclaim=PreemptionPolicy.ANY).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=2).preemption(reclaim=PreemptionPolicy.ANY).obj(),
    ]
    jobs = [
        make_workload("v").queue("team-b").at(0).runs_for(5_000).gpus(2).pods(2).obj(),
        make_workload("p").queue("team-a").at(100).runs_for(1_000).gpus(2).pods(4).min_count(3).obj(),
    ]
    rows = kueue_rows(tmp_path, [make_node("n1").obj()], jobs, manifests)
    assert _admission(rows) == [
        (0.0, "admitted", "v", "Borrowing"),
        (5001.0, "admitted", "p", "Borrowing"),  # v finished at 5000 (requeue batch 1 s)
    ]
