"""Kueue resumes a workload's flavor scan where its last attempt stopped.

Upstream (Kueue ff69552, 0.20 development; FlavorFungibilityPreserveScanProgress beta, on by
default): pkg/scheduler/flavorassigner/flavorassigner.go `findFlavorForPodSets` (the scan of
a resource group starts at `LastAssignment.NextFlavorToTryForPodSetResource`, the index after
the recorded `TriedFlavorIdx`, and records where it stopped: -1 once it looked at the last
flavor); pkg/workload/workload.go `PendingFlavors`; pkg/cache/queue/cluster_queue.go
`requeueIfNotPresent` (a workload with flavors still to try goes back to the heap, not to the
inadmissible set); pkg/scheduler/scheduler.go `markSkipped` (the progress is kept with the
gate, dropped without), `markPreemptionOutcome` (dropped once preemptions are issued),
`lastAssignmentOutdated` (with the gate, the progress of this or the previous cycle survives
a move of the ClusterQueue's AllocatableResourceGeneration; without it, any move drops it);
pkg/cache/scheduler/clusterqueue.go `deleteWorkload` (the generation moves whenever the cache
updates or removes one of the ClusterQueue's workloads). The replay before this rule scanned
every group from its first flavor at every attempt.
"""

from __future__ import annotations

import pytest

from scheduler.admission.workloads import ScanProgress
from tests.scheduler.admission_state import QuotaOnlyReplay
from tests.scheduler.admission_story import kueue_rows
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_flavor,
    make_node,
    make_topology,
    make_workload,
)

GATE = "FlavorFungibilityPreserveScanProgress"
A100 = make_flavor("a100").gpu_model("A100").obj()
H100 = make_flavor("h100").gpu_model("H100").obj()
NODES = [make_node("n1").obj(), make_node("n2").model("H100").obj()]


def _admissions(rows):
    return [(r["time_s"], r["workload_id"], r["flavor"]) for r in rows if r["event"] == "admitted"]


def _skip_story(tmp_path, *, gate: bool | None):
    """qa and qb share cohort c. qb owns 8 A100s, 4 of them held by "holder" until 1000 s;
    qa owns no A100 and 8 H100s, in one resource group [a100, h100]. At 10 s "big" (qb, 8
    GPUs) needs preemption inside qb, finds no candidates (withinClusterQueue Never) and holds
    qb's 4 free A100s for the cycle; "small" (qa, 4 GPUs), nominated before that, fits a100
    by borrowing them (whenCanBorrow MayStopSearch: the scan stops at a100, TriedFlavorIdx 0
    of 2). Processed after big (borrowing goes last), it no longer fits: skipped."""
    objects = [A100, H100,
               make_cluster_queue("qb").cohort("c").quota("a100", gpus=8).obj(),
               make_cluster_queue("qa").cohort("c").quota("a100", gpus=0).quota("h100", gpus=8)
               .fungibility(when_can_borrow="MayStopSearch").obj()]
    if gate is not None:
        objects.insert(0, make_configuration().feature_gate(GATE, gate).obj())
    jobs = [make_workload("holder").queue("qb").at(0).runs_for(1000).gpus(4).model("A100").obj(),
            make_workload("big").queue("qb").at(10).runs_for(100).gpus(8).model("A100").obj(),
            make_workload("small").queue("qa").at(10).runs_for(100).gpus(4).obj()]
    return kueue_rows(tmp_path, NODES, jobs, objects)


def test_a_skipped_workload_resumes_its_scan_at_the_next_flavor(tmp_path):
    """With the gate (Kueue's default) the skip keeps small's progress: it still has a flavor
    to try, so it goes back to the heap and Kueue's next cycle, right away, scans from h100,
    where it fits its own quota: admitted at 10 s on h100. (The a100 it was skipped on is
    free again in that cycle, but the resumed scan no longer looks at it.) big, parked, comes
    back with the inadmissible requeue 1 s after holder leaves."""
    rows = _skip_story(tmp_path, gate=None)
    assert _admissions(rows) == [(0.0, "holder", "a100"), (10.0, "small", "h100"), (1001.0, "big", "a100")]


def test_without_the_gate_the_skip_throws_the_progress_away(tmp_path):
    """Gate off: markSkipped clears LastAssignment, the next scan starts at a100 again, and
    small takes the borrowed A100s. (Kueue would retry it in its next cycle, at 10 s; the
    replay runs its next cycle when something changes, here at 1000 s.)"""
    rows = _skip_story(tmp_path, gate=False)
    small = [a for a in _admissions(rows) if a[1] == "small"]
    assert [flavor for _, _, flavor in small] == ["a100"]


TOPOLOGY = make_topology("default").levels("gpu-finops/rack", "kubernetes.io/hostname").obj()
TAS_A100 = make_flavor("tas-a100").gpu_model("A100").topology("default").obj()
TAS_H100 = make_flavor("tas-h100").gpu_model("H100").topology("default").obj()


def test_with_flavors_still_to_try_the_workload_goes_back_to_the_heap(tmp_path):
    """Kueue's own case (scheduler_preserve_flavor_scan_progress_test.go): a ClusterQueue's
    quota on each flavor exceeds what its one node holds. "blocker" (A100s only) fills n1; at
    10 s "pending" (8 GPUs, one rack, any model) fits tas-a100's quota, where the scan stops
    (TriedFlavorIdx 0 of 2), but no rack of A100s holds it, and with equal priorities there is
    no one to preempt. It has a flavor still to try (PendingFlavors), so it goes back to the
    heap, not to the inadmissible set, and the next cycle, right away, resumes at tas-h100:
    admitted at 10 s on H100s. The replay before this rule parked it until blocker ended."""
    objects = [TOPOLOGY, TAS_A100, TAS_H100,
               make_cluster_queue("team-a").quota("tas-a100", gpus=16).quota("tas-h100", gpus=16)
               .preemption(within="LowerPriority").obj()]
    nodes = [make_node("n1").rack("r1").obj(), make_node("n2").model("H100").rack("r2").obj()]
    jobs = [make_workload("blocker").queue("team-a").at(0).runs_for(10_000).gpus(8).model("A100")
            .topology(required="rack").obj(),
            make_workload("pending").queue("team-a").at(10).runs_for(100).gpus(8).topology(required="rack").obj()]
    rows = kueue_rows(tmp_path, nodes, jobs, objects)
    assert _admissions(rows) == [(0.0, "blocker", "tas-a100"), (10.0, "pending", "tas-h100")]
    assert [(r["time_s"], r["workload_id"], r["node"]) for r in rows if r["event"] == "started"] == [
        (0.0, "blocker", "n1"), (10.0, "pending", "n2")]


def _admitter(gate: bool):
    """The admitter of a layer whose ClusterQueue has one group of two flavors."""
    objects = [make_configuration().feature_gate(GATE, gate).obj(), A100, H100,
               make_cluster_queue("team-a").quota("a100", gpus=8).quota("h100", gpus=8).obj()]
    return QuotaOnlyReplay(*objects).layer.admitter


@pytest.mark.parametrize(("gate", "kept"), [
    pytest.param(True, [True, True, False], id="gate on: kept in this and the next cycle, then dropped"),
    pytest.param(False, [False, False, False], id="gate off: dropped once the generation moved"),
])
def test_the_progress_survives_a_generation_move_only_within_one_cycle_with_the_gate(gate, kept):
    """scheduler.go lastAssignmentOutdated. Progress recorded in cycle 5 at generation 3 of
    team-a; a workload of team-a then changes in the cache (generation 4). In the replay the
    workload whose scan has flavors left is retried at once, so a move of the generation
    between the two cycles comes from the cycle itself (an eviction in team-a by another
    queue's preemptor, after the nomination): the rule is asked of the admitter's `ScanProgressRules` directly."""
    rules = _admitter(gate).scan
    rules.generations["team-a"] = 3
    scan = ScanProgress(((0, 0),), generation=3, cycle=5)
    rules.workloads_changed("team-a")
    outdated = []
    for cycle in (5, 6, 7):
        rules.cycle = cycle
        outdated.append(rules.outdated(scan, "team-a"))
    assert [not o for o in outdated] == kept
    # Without a move of the generation the progress is never outdated, gate or not.
    rules.generations["team-a"] = 3
    assert not rules.outdated(scan, "team-a")


def test_the_gate_is_read_from_the_configuration():
    assert _admitter(True).scan.preserve and not _admitter(False).scan.preserve
    assert QuotaOnlyReplay(A100, make_cluster_queue("team-a").quota("a100", gpus=8).obj()).layer.admitter.scan.preserve
