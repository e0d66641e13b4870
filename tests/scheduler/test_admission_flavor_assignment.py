"""Flavor assignment, one decision per row: which flavor a workload gets, in which mode (fit,
borrow, preempt, reclaim, no candidates, no fit) and, when it waits, Kueue's reason and
message (kueue pkg/scheduler/flavorassigner/flavorassigner.go; semantics reference §4.5)."""

from __future__ import annotations

import pytest

from scheduler.admission.flavor_assignment import Mode
from scheduler.admission.policies import (
    FlavorFungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
)
from scheduler.eventlog.schema import PendingReason
from tests.scheduler.admission_state import AdmissionState
from tests.scheduler.builders import make_cluster_queue, make_flavor, make_workload

GPU = "nvidia.com/gpu"
TRY_NEXT = FlavorFungibilityPolicy.TRY_NEXT_FLAVOR
STOP = FlavorFungibilityPolicy.MAY_STOP_SEARCH
A100 = make_flavor("a100").gpu_model("A100").obj()
H100 = make_flavor("h100").gpu_model("H100").obj()


def _two_teams(team_a=None):
    """team-a (8 A100) and team-b (8 A100) share the cohort org."""
    team_a = team_a or make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8)
    return [A100, team_a.obj(), make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj()]


# Each case: the objects, who holds quota [(queue, workload)], the pending workload's queue
# and shape; want: mode of the assignment, the flavor of its GPUs, the mode of that flavor's
# GPUs, its borrowing level, and for a workload that waits, the reason and message.
CASES = [
    pytest.param(
        _two_teams(), [], "team-a", make_workload("w").gpus(8),
        Mode.FIT, "a100", Mode.FIT, 0, None, "",
        id="fits in the nominal quota of the first flavor",
    ),
    pytest.param(
        _two_teams(), [], "team-a", make_workload("w").gpus(12),
        Mode.FIT, "a100", Mode.FIT, 1, None, "",
        id="borrows idle quota of the cohort: borrowing level 1",
    ),
    pytest.param(
        _two_teams(make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(within=PreemptionPolicy.LOWER_PRIORITY)),
        [("team-a", make_workload("low").gpus(8).priority(0)), ("team-b", make_workload("b").gpus(8))],
        "team-a", make_workload("w").gpus(4).priority(5),
        Mode.PREEMPT, "a100", Mode.PREEMPT, 0, None,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed",
        id="a lower-priority workload of its own queue holds the quota: preempt",
    ),
    pytest.param(
        _two_teams(make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(reclaim=PreemptionPolicy.ANY)),
        [("team-b", make_workload("b-borrows").gpus(16))], "team-a", make_workload("w").gpus(4),
        Mode.PREEMPT, "a100", Mode.RECLAIM, 0, None,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed",
        id="another queue borrowed its quota: reclaim",
    ),
    pytest.param(
        _two_teams(make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8).preemption(within=PreemptionPolicy.LOWER_PRIORITY)),
        [("team-a", make_workload("high").gpus(8).priority(9)), ("team-b", make_workload("b").gpus(8))],
        "team-a", make_workload("w").gpus(4).priority(5),
        Mode.PREEMPT, "a100", Mode.NO_CANDIDATES, 0, None,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed",
        id="only higher-priority workloads hold the quota: no candidates",
    ),
    pytest.param(
        _two_teams(), [], "team-a", make_workload("w").pods(3).gpus(8),
        Mode.NO_FIT, None, None, 0, PendingReason.EXCEEDS_MAX_QUOTA,
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100, previously "
        "considered podsets requests (0) + current podset request (24) > maximum capacity (16)",
        id="more than the whole cohort could ever lend: ExceedsMaxQuota",
    ),
    pytest.param(
        _two_teams(), [], "team-a", make_workload("w").gpus(4).model("H100"),
        Mode.NO_FIT, None, None, 0, PendingReason.NO_MATCHING_FLAVOR,
        "couldn't assign flavors to pod set main: flavor a100 doesn't match node affinity",
        id="asks for H100 nodes, the queue has only an A100 flavor: NoMatchingFlavor",
    ),
    pytest.param(
        _two_teams(), [], "team-a", make_workload("w").gpus(1).cpu(500),
        Mode.NO_FIT, None, None, 0, PendingReason.NO_MATCHING_FLAVOR,
        "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue",
        id="asks for a resource the queue does not cover: NoMatchingFlavor",
    ),
    pytest.param(
        [A100, make_cluster_queue("team-a").cohort("org").quota("a100", gpus=4).obj(),
         make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj()],
        [("team-b", make_workload("b").gpus(8))], "team-a", make_workload("w").gpus(6),
        Mode.NO_FIT, None, None, 0, PendingReason.WAITING_FOR_QUOTA,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 2 more needed",
        id="must borrow what the cohort does not have free, no preemption allowed: WaitingForQuota",
    ),
    pytest.param(
        [A100, H100, make_cluster_queue("team-a").quota("a100", gpus=8).quota("h100", gpus=8).obj()],
        [], "team-a", make_workload("w").pods(2).gpus(8).model("H100"),
        Mode.NO_FIT, None, None, 0, PendingReason.EXCEEDS_MAX_QUOTA,
        "couldn't assign flavors to pod set main: flavor a100 doesn't match node affinity, insufficient quota for "
        "nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (16) > "
        "maximum capacity (8)",
        id="of two flavors one does not match and one is too small: the least severe reason explains",
    ),
]


@pytest.mark.parametrize(
    ("objects", "holding", "queue", "workload", "want_mode", "want_flavor", "want_gpu_mode", "want_borrow",
     "want_reason", "want_message"),
    CASES,
)
def test_flavor_assignment(objects, holding, queue, workload, want_mode, want_flavor, want_gpu_mode, want_borrow,
                           want_reason, want_message):
    state = AdmissionState(*objects)
    for holder_queue, holder in holding:
        state.holding(holder_queue, holder.obj())
    assignment = state.assign(state.pending(queue, workload.obj()))
    assert assignment.mode is want_mode
    assert assignment.flavors.get(GPU) == want_flavor
    assert assignment.modes.get((want_flavor, GPU)) is want_gpu_mode
    assert assignment.borrow == want_borrow
    assert assignment.no_fit_reason is want_reason
    assert assignment.message() == want_message


def _a100_then_h100(*, when_can_borrow=None, when_can_preempt=None, preference=None, a100_gpus=4, h100_gpus=8):
    """team-a tries a100 first, then h100; team-b lends a100 quota in the same cohort."""
    team_a = (make_cluster_queue("team-a").cohort("org").quota("a100", gpus=a100_gpus).quota("h100", gpus=h100_gpus)
              .preemption(within=PreemptionPolicy.LOWER_PRIORITY)
              .fungibility(when_can_borrow=when_can_borrow, when_can_preempt=when_can_preempt, preference=preference))
    return [A100, H100, team_a.obj(), make_cluster_queue("team-b").cohort("org").quota("a100", gpus=8).obj()]


# (queue, flavor, workload) holding quota: team-a's a100 quota is all in use, and team-b's too.
A100_FULL = [("team-a", "a100", make_workload("low").gpus(8)), ("team-b", "a100", make_workload("b").gpus(8))]
H100_HELD = [("team-a", "h100", make_workload("low").gpus(6))]


@pytest.mark.parametrize(
    ("objects", "holding", "want_flavor", "want_gpu_mode", "want_borrow"),
    [
        pytest.param(_a100_then_h100(), [], "a100", Mode.FIT, 1,
                     id="whenCanBorrow MayStopSearch (default): borrows in the first flavor"),
        pytest.param(_a100_then_h100(when_can_borrow=TRY_NEXT), [], "h100", Mode.FIT, 0,
                     id="whenCanBorrow TryNextFlavor: the second flavor fits without borrowing"),
        pytest.param(_a100_then_h100(a100_gpus=8), A100_FULL, "h100", Mode.FIT, 0,
                     id="whenCanPreempt TryNextFlavor (default): the second flavor fits without preempting"),
        pytest.param(_a100_then_h100(a100_gpus=8, when_can_preempt=STOP), A100_FULL,
                     "a100", Mode.PREEMPT, 0, id="whenCanPreempt MayStopSearch: preempts in the first flavor"),
        # a100 can only borrow (level 1), h100 only preempt within its nominal quota (level 0).
        pytest.param(_a100_then_h100(when_can_borrow=TRY_NEXT, h100_gpus=6), H100_HELD,
                     "a100", Mode.FIT, 1, id="no preference, both TryNextFlavor: borrowing beats preempting"),
        pytest.param(_a100_then_h100(when_can_borrow=TRY_NEXT, when_can_preempt=TRY_NEXT, h100_gpus=6,
                                     preference=FungibilityPreference.PREEMPTION_OVER_BORROWING),
                     H100_HELD, "h100", Mode.PREEMPT, 0,
                     id="PreemptionOverBorrowing: the lower borrowing level wins, by preempting"),
        pytest.param(_a100_then_h100(when_can_borrow=TRY_NEXT, when_can_preempt=TRY_NEXT, h100_gpus=6,
                                     preference=FungibilityPreference.BORROWING_OVER_PREEMPTION),
                     H100_HELD, "a100", Mode.FIT, 1,
                     id="BorrowingOverPreemption: the flavor that fits by borrowing wins"),
    ],
)
def test_flavor_fungibility_and_preference(objects, holding, want_flavor, want_gpu_mode, want_borrow):
    # The pending workload asks for 6 GPUs at priority 5; holders run at priority 0.
    state = AdmissionState(*objects)
    for holder_queue, flavor, holder in holding:
        state.holding(holder_queue, holder.obj(), flavor=flavor)
    assignment = state.assign(state.pending("team-a", make_workload("w").gpus(6).priority(5).obj()))
    assert (assignment.flavors[GPU], assignment.modes[(want_flavor, GPU)], assignment.borrow) == (
        want_flavor, want_gpu_mode, want_borrow)


def test_an_assignment_keys_its_usage_with_the_trees_own_flavor_resource_objects():
    # One key object per (flavor, resource) in a tree: the quota dicts find an admitted
    # workload's usage by identity instead of comparing equal tuples item by item.
    state = AdmissionState(*_a100_then_h100())
    assignment = state.assign(state.pending("team-a", make_workload("w").gpus(2).obj()))
    for node in (state.tree.queue("team-a"), state.tree.queue("team-b"), state.tree.cohorts["org"]):
        nominal_keys = {fr: fr for fr in node.nominal}
        for fr in assignment.usage:
            if fr in nominal_keys:
                assert nominal_keys[fr] is fr
    assert state.tree.keys.of("a100", GPU) is state.tree.keys.of("a100", GPU)
    assert all(node.keys is state.tree.keys for node in state.tree.queues.values())
