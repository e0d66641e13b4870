"""Kueue preemption, one decision per row: which admitted workloads a pending one evicts, and
why (kueue pkg/scheduler/preemption/; semantics reference §4.6 classical, §4.7 fair sharing).

Holders are written (queue, workload, admitted at); the pending workload asks for its GPUs at
the time it was submitted. Victims are listed with the reason of their Preempted condition.
"""

from __future__ import annotations

import pytest

from scheduler.admission.policies import (
    BorrowWithinCohortPolicy,
    FairSharingStrategy,
    PreemptionPolicy,
)
from scheduler.admission.preemption.common import PreemptionReason
from tests.scheduler.admission_state import AdmissionState
from tests.scheduler.builders import (
    make_cluster_queue,
    make_cohort,
    make_configuration,
    make_workload,
)

IN_QUEUE = PreemptionReason.IN_CLUSTER_QUEUE
RECLAMATION = PreemptionReason.IN_COHORT_RECLAMATION
WHILE_BORROWING = PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING
FAIR_SHARING = PreemptionReason.IN_COHORT_FAIR_SHARING
LOWER = PreemptionPolicy.LOWER_PRIORITY
ANY = PreemptionPolicy.ANY


def _alone(within: PreemptionPolicy) -> list[dict]:
    """team-a, 8 GPUs, no cohort."""
    return [make_cluster_queue("team-a").quota("a100", gpus=8).preemption(within=within).obj()]


def _two_teams(reclaim: PreemptionPolicy, borrow: BorrowWithinCohortPolicy | None = None, threshold: int | None = None) -> list[dict]:
    """team-a and team-b, 8 GPUs each, in the cohort org; team-b's policies as given."""
    return [
        make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).obj(),
        make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8)
        .preemption(reclaim=reclaim, borrow=borrow, max_priority_threshold=threshold).obj(),
    ]


def _hold(queue: str, name: str, gpus: int, at: float, priority: int = 0, evicting: bool = False):
    return queue, make_workload(name).gpus(gpus).priority(priority).at(at), evicting


# team-a holds 10 GPUs in one workload (borrowing 2 of team-b's); team-b holds 2 of its 8.
TEAM_A_BORROWS_2 = [_hold("team-a", "a", 10, 0), _hold("team-b", "b0", 2, 0)]
# team-a borrowed 4 of team-b's GPUs in four workloads; team-b holds none.
TEAM_A_BORROWS_4 = [_hold("team-a", "a1", 4, 0), _hold("team-a", "a2", 6, 1), _hold("team-a", "a3", 4, 2),
                    _hold("team-a", "a4", 2, 3)]
# team-a holds 9 of its 8 (a2 is the newest); team-b holds 6 at priority 10.
BORROW_WITHIN_COHORT = [_hold("team-b", "b0", 6, 2, priority=10)]


def _team_a_over_nominal(priority: int):
    return [_hold("team-a", "a1", 1, 0, priority), _hold("team-a", "a2", 8, 1, priority), *BORROW_WITHIN_COHORT]


def _research_tree(hierarchical: bool) -> list[dict]:
    """cv (2 GPUs) and nlp (2) under research, and prod (4), all under org; flat: all three
    directly under org."""
    parent = "research" if hierarchical else "org"
    return [
        make_cohort("org").obj(),
        *([make_cohort("research").parent("org").obj()] if hierarchical else []),
        make_cluster_queue("cv").cohort(parent).quota("a100", gpus=2).preemption(reclaim=LOWER).obj(),
        make_cluster_queue("nlp").cohort(parent).quota("a100", gpus=2).obj(),
        make_cluster_queue("prod").cohort("org").quota("a100", gpus=4).obj(),
    ]


# nlp holds 1 (within its 2); prod holds 7 of its 4: it borrowed the 3 GPUs research lends.
RESEARCH_HOLDERS = [_hold("nlp", "n1", 1, 0), _hold("prod", "p-old", 4, 0), _hold("prod", "p-new", 3, 10)]

CLASSICAL = [
    pytest.param(_alone(LOWER), [_hold("team-a", "p3", 4, 0, 3), _hold("team-a", "p1", 4, 1, 1)],
                 ("team-a", make_workload("w").gpus(4).priority(5)), [("p1", IN_QUEUE)],
                 id="within the queue: the lowest priority goes first"),
    pytest.param(_alone(LOWER), [_hold("team-a", "old", 4, 0, 1), _hold("team-a", "new", 4, 10, 1)],
                 ("team-a", make_workload("w").gpus(4).priority(5)), [("new", IN_QUEUE)],
                 id="within the queue, equal priorities: the most recently admitted goes first"),
    pytest.param(_alone(LOWER), [_hold("team-a", "x", 4, 0, evicting=True), _hold("team-a", "y", 4, 10)],
                 ("team-a", make_workload("w").gpus(4).priority(5)), [("x", IN_QUEUE)],
                 id="a victim already being evicted comes first: its quota is on its way back"),
    pytest.param(_alone(LOWER), [_hold("team-a", "p5", 8, 0, 5)],
                 ("team-a", make_workload("w").gpus(4).priority(5)), [],
                 id="LowerPriority spares a workload of the preemptor's own priority"),
    pytest.param(_alone(PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY),
                 [_hold("team-a", "queued-before", 4, 0, 5), _hold("team-a", "queued-after", 4, 100, 5)],
                 ("team-a", make_workload("w").gpus(4).priority(5).at(50)), [("queued-after", IN_QUEUE)],
                 id="LowerOrNewerEqualPriority: an equal priority queued after the preemptor is fair game"),
    pytest.param(_two_teams(ANY), TEAM_A_BORROWS_4, ("team-b", make_workload("b1").gpus(4)), [("a3", RECLAMATION)],
                 id="the fewest victims: a4 alone is too small, a3 is enough, a4 is added back"),
    pytest.param(_two_teams(LOWER), TEAM_A_BORROWS_4, ("team-b", make_workload("b1").gpus(4)), [],
                 id="reclaim LowerPriority spares a borrower of the same priority"),
    pytest.param(_two_teams(LOWER), TEAM_A_BORROWS_4, ("team-b", make_workload("b1").gpus(4).priority(1)), [("a3", RECLAMATION)],
                 id="reclaim LowerPriority takes a lower-priority borrower"),
    pytest.param(_two_teams(ANY), TEAM_A_BORROWS_2, ("team-b", make_workload("b").gpus(8)), [],
                 id="borrowWithinCohort unset: 8 (within nominal alone) on team-b's 2 would borrow: no victim of team-a"),
    pytest.param(_two_teams(ANY), TEAM_A_BORROWS_2, ("team-b", make_workload("b").gpus(6)), [("a", RECLAMATION)],
                 id="reclaim Any: 6 on team-b's 2 fit its nominal quota: the borrower of equal priority is reclaimed"),
    pytest.param(_two_teams(LOWER), TEAM_A_BORROWS_2, ("team-b", make_workload("b").gpus(6)), [],
                 id="reclaim LowerPriority: the same 6 spare the borrower of equal priority"),
    pytest.param(_research_tree(hierarchical=True), RESEARCH_HOLDERS, ("cv", make_workload("c1").gpus(3).priority(5)),
                 [("p-new", RECLAMATION)],
                 id="hierarchical reclaim: quota its subtree lent out comes back although cv must borrow it"),
    pytest.param(_research_tree(hierarchical=False), RESEARCH_HOLDERS, ("cv", make_workload("c1").gpus(3).priority(5)), [],
                 id="the same queues in a flat cohort: cv may not preempt to borrow"),
    pytest.param(_two_teams(LOWER, BorrowWithinCohortPolicy.LOWER_PRIORITY, threshold=5), _team_a_over_nominal(3),
                 ("team-b", make_workload("b1").gpus(4).priority(10)), [("a2", WHILE_BORROWING)],
                 id="borrowWithinCohort: a victim at or below maxPriorityThreshold, though team-b ends up borrowing"),
    pytest.param(_two_teams(LOWER, BorrowWithinCohortPolicy.LOWER_PRIORITY, threshold=5), _team_a_over_nominal(7),
                 ("team-b", make_workload("b1").gpus(4).priority(10)), [],
                 id="borrowWithinCohort: nothing above maxPriorityThreshold is taken to borrow"),
    pytest.param(_two_teams(LOWER, BorrowWithinCohortPolicy.LOWER_PRIORITY), _team_a_over_nominal(7),
                 ("team-b", make_workload("b1").gpus(4).priority(10)), [("a2", WHILE_BORROWING)],
                 id="borrowWithinCohort without a threshold: any lower priority"),
    pytest.param(_two_teams(LOWER), _team_a_over_nominal(3), ("team-b", make_workload("b1").gpus(4).priority(10)), [],
                 id="borrowWithinCohort Never: no preemption that would leave team-b borrowing"),
]


@pytest.mark.parametrize(("objects", "holders", "pending", "want_victims"), CLASSICAL)
def test_classical_preemption(objects, holders, pending, want_victims):
    assert _victims(objects, holders, pending) == want_victims


def _fair(*queues, strategies: tuple[FairSharingStrategy, ...] = (), org_gpus: int = 12) -> list[dict]:
    return [make_cohort("org").quota("a100", gpus=org_gpus).obj(), *(q.obj() for q in queues),
            make_configuration().fair_sharing(*strategies).obj()]


def _borrower(name: str, weight: float = 1, nominal: int = 0):
    """A queue of `nominal` GPUs in org that reclaims anything (fair sharing decides)."""
    return make_cluster_queue(name).cohort("org").quota("a100", gpus=nominal).preemption(reclaim=ANY).weight(weight)


def _ones(queue: str, count: int, gpus: int = 1):
    return [_hold(queue, f"{queue[-1]}{i}", gpus, i) for i in range(count)]


S1 = FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE
S2 = FairSharingStrategy.LESS_THAN_INITIAL_SHARE
FAIR = [
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b")), _ones("team-a", 8) + _ones("team-b", 4),
                 ("team-b", make_workload("w").gpus(1)), [("a7", FAIR_SHARING)],
                 id="B's share with the job (5/12) <= A's without the victim (7/12): A's newest goes"),
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b")), _ones("team-a", 6) + _ones("team-b", 6),
                 ("team-b", make_workload("w").gpus(1)), [],
                 id="equal shares: neither strategy lets B take from A"),
    pytest.param(_fair(_borrower("team-a", weight=2), _borrower("team-b")), _ones("team-a", 8) + _ones("team-b", 4),
                 ("team-b", make_workload("w").gpus(1)), [],
                 id="A of weight 2 keeps twice the GPUs: 8 against 4 is fair"),
    # A holds 6 in two 3-GPU jobs, B holds 4 of the cohort's 10 and asks for 1: B's share
    # with it (5) is below A's before (6) but above A's without a victim (3).
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b"), org_gpus=10), _ones("team-a", 2, gpus=3) + _ones("team-b", 4),
                 ("team-b", make_workload("w").gpus(1)), [("a1", FAIR_SHARING)],
                 id="default strategies: LessThanInitialShare applies when LessThanOrEqualToFinalShare did not"),
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b"), strategies=(S1,), org_gpus=10),
                 _ones("team-a", 2, gpus=3) + _ones("team-b", 4), ("team-b", make_workload("w").gpus(1)), [],
                 id="LessThanOrEqualToFinalShare alone: no victim"),
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b"), strategies=(S2,), org_gpus=10),
                 _ones("team-a", 2, gpus=3) + _ones("team-b", 4), ("team-b", make_workload("w").gpus(1)), [("a1", FAIR_SHARING)],
                 id="LessThanInitialShare alone: the victim"),
    pytest.param(_fair(_borrower("team-a"), _borrower("team-b", nominal=4), org_gpus=8), _ones("team-a", 10) + _ones("team-b", 2),
                 ("team-b", make_workload("w").gpus(2)), [("a9", RECLAMATION), ("a8", RECLAMATION)],
                 id="B stays within its nominal quota: it preempts whatever its share"),
]


@pytest.mark.parametrize(("objects", "holders", "pending", "want_victims"), FAIR)
def test_fair_sharing_preemption(objects, holders, pending, want_victims):
    assert _victims(objects, holders, pending) == want_victims


def _victims(objects, holders, pending):
    state = AdmissionState(*objects)
    for queue, workload, evicting in holders:
        state.holding(queue, workload.obj(), evicting=evicting)
    queue, workload = pending
    return [(t.workload.name, t.reason) for t in state.targets(state.pending(queue, workload.obj()))]
