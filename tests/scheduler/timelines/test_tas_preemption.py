"""TAS-aware preemption: a pod set whose topology does not fit now but would fit the empty
topology turns Preempt and looks for targets; the targets must make its topology fit.

Upstream (Kueue ff69552): pkg/scheduler/flavorassigner/flavorassigner.go `Assign` (a Fit
assignment whose `FindTopologyAssignmentsForWorkload` fails turns Preempt; a Preempt one is
checked `WithSimulateEmpty`, NoFit / TopologyPlacementFailed when even the empty topology
cannot hold it, else `updateModeForTASRequests(..., Preempt)`), pkg/scheduler/preemption/
preemption.go (`GetTargets` with the TAS requests; `workloadFits` asks
`FindTopologyAssignmentsForWorkload` with the candidates removed), pkg/scheduler/scheduler.go
(`updateAssignmentIfNeeded`, TASRecomputeAssignmentWithinSchedulingCycle). The replay before
this rule waited with TopologyPlacementFailed until a low-priority job ended by itself.
"""

from __future__ import annotations

from tests.scheduler.admission_story import kueue_rows, pending_reasons, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_flavor,
    make_node,
    make_topology,
    make_workload,
)
from tests.scheduler.scenario import lowest_index

TOPOLOGY = make_topology("default").levels("gpu-finops/rack", "kubernetes.io/hostname").obj()
TAS = make_flavor("tas").gpu_model("A100").topology("default").obj()
NODES = [make_node("n1").rack("r1").obj(), make_node("n2").rack("r1").obj(),
         make_node("n3").rack("r2").obj(), make_node("n4").rack("r2").obj()]


# Which pod lands on which node of a rack follows the cluster file's order.
PROFILE = lowest_index("gang-v1.37")


def _job(name, at, pods, priority, runs_for=10_000):
    return (make_workload(name).queue("team-a").at(at).runs_for(runs_for).pods(pods).gpus(8).priority(priority)
            .topology(required="rack").obj())


def _queue(within="LowerPriority"):
    return make_cluster_queue("team-a").quota("tas", gpus=64).preemption(within=within).obj()


def _nodes_of(rows, workload):
    return sorted({r["node"] for r in rows if r["event"] == "started" and r["workload_id"] == workload})


def test_a_rack_bound_job_preempts_the_lower_priority_job_whose_rack_it_then_takes(tmp_path):
    """low-a (1 pod) takes rack r1, low-b (2 pods) rack r2; at 100 s high (2 pods, one rack)
    fits the quota (24 of 64 GPUs) but no rack has 2 free nodes: "allows to fit only 1 out of
    2". On the empty topology either rack holds it, so it looks for lower-priority targets in
    Kueue's candidate order (most recently admitted first: low-b) until its rack fits with
    them gone: low-b alone frees r2. low-b is preempted at 100 s (its pods end after the 30 s
    grace), high is admitted at 130 s and runs on r2; low-a runs on, low-b comes back when
    high is done."""
    jobs = [_job("low-a", 0, 1, 0), _job("low-b", 10, 2, 0), _job("high", 100, 2, 10, runs_for=500)]
    rows = kueue_rows(tmp_path, NODES, jobs, [TOPOLOGY, TAS, _queue()], PROFILE)

    assert timeline(rows, "admitted") == [
        (0.0, "admitted", "low-a", None), (10.0, "admitted", "low-b", None), (130.0, "admitted", "high", None),
        (631.0, "admitted", "low-b", None)]
    assert [(r["time_s"], r["workload_id"], r["node"], r["reason"]) for r in rows if r["event"] == "preempted"] == [
        (130.0, "low-b", "n3", "preempted-by:high"), (130.0, "low-b", "n4", "preempted-by:high")]
    assert _nodes_of(rows, "high") == ["n3", "n4"]
    waits = pending_reasons(rows, "high")
    assert waits[0] == (100.0, "WaitingForPreemptedWorkloads",
                        'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of 2 '
                        "pod(s). Pending the preemption of 1 workload(s); position 1 of 1 in ClusterQueue team-a")


def test_under_fair_sharing_the_victim_search_asks_the_topology_too(tmp_path):
    """preemption.go workloadFitsForFairSharing wraps the same workloadFits, TAS check
    included: with fair sharing on, the story of the first test ends alike (low-b preempted,
    high on r2)."""
    jobs = [_job("low-a", 0, 1, 0), _job("low-b", 10, 2, 0), _job("high", 100, 2, 10, runs_for=500)]
    rows = kueue_rows(tmp_path, NODES, jobs, [make_configuration().fair_sharing().obj(), TOPOLOGY, TAS, _queue()], PROFILE)
    assert sorted({r["workload_id"] for r in rows if r["event"] == "preempted"}) == ["low-b"]
    assert _nodes_of(rows, "high") == ["n3", "n4"]


def test_the_victim_search_gives_back_a_victim_the_topology_does_not_need(tmp_path):
    """The quota alone needs no victim (it fits); the topology needs some. The search removes
    candidates, most recently admitted first, until a rack holds the pod set, then gives back
    those it does not need (fillBackWorkloads, each time asking workloadFits with its TAS
    check): low-d (r1, admitted last) goes first and frees one node of r1, not enough;
    low-b (both nodes of r2) frees r2; low-d is added back since r2 alone holds high. Only
    low-b is preempted, and high runs on r2."""
    jobs = [_job("low-a", 0, 1, 0), _job("low-b", 10, 2, 0), _job("low-d", 20, 1, 0),
            _job("high", 100, 2, 10, runs_for=500)]
    rows = kueue_rows(tmp_path, NODES, jobs, [TOPOLOGY, TAS, _queue()], PROFILE)
    assert {w: _nodes_of(rows, w) for w in ("low-a", "low-b", "low-d")} == {
        "low-a": ["n1"], "low-b": ["n3", "n4"], "low-d": ["n2"]}
    assert sorted({r["workload_id"] for r in rows if r["event"] == "preempted"}) == ["low-b"]
    assert _nodes_of(rows, "high") == ["n3", "n4"]


def test_without_candidates_it_waits_for_quota_and_when_even_the_empty_topology_cannot_hold_it_topology_placement_failed(
        tmp_path):
    """withinClusterQueue Never: no candidate, so high waits with WaitingForQuota (Preempt
    without targets) and Kueue's message; a pod set of 3 pods in one rack of 2 nodes cannot
    fit even the empty topology: NoFit with TopologyPlacementFailed."""
    jobs = [_job("low-a", 0, 1, 0), _job("low-b", 10, 2, 0), _job("high", 100, 2, 10, runs_for=500),
            _job("huge", 100, 3, 10, runs_for=500)]
    rows = kueue_rows(tmp_path, NODES, jobs, [TOPOLOGY, TAS, _queue(within="Never")], PROFILE)
    assert not [r for r in rows if r["event"] == "preempted"]
    assert pending_reasons(rows, "high")[0][1:] == (
        "WaitingForQuota", 'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of 2 '
        "pod(s); position 1 of 2 in ClusterQueue team-a")
    assert pending_reasons(rows, "huge")[0][1] == "TopologyPlacementFailed"


def test_a_preemptor_without_targets_holds_its_empty_topology_domain_for_the_rest_of_the_cycle(tmp_path):
    """scheduler.go updateAssignmentForTAS: a TAS preemptor without candidates gets the
    assignment it would have on the empty topology, and reserveCapacityForUnreclaimablePreempt
    adds it to the cycle's TAS usage. Rack r1 has 2 nodes, r2 has 3; x1 holds one node of r1,
    x2 two of r2 (priority 20, which nothing may preempt). At 100 s, in one cycle, high (team-a,
    priority 10, 2 pods) fits neither rack now; on the empty topology r1 is the best fit, so it
    holds r1 for the cycle; low (team-b, priority 0, 1 pod), processed after it, then finds no
    room in r1 and takes the free node of r2 (without the reservation it took r1's, the first
    rack with the fewest free nodes that holds it)."""
    nodes = [make_node("n1").rack("r1").obj(), make_node("n2").rack("r1").obj(),
             *(make_node(f"n{i}").rack("r2").obj() for i in (3, 4, 5))]
    queues = [make_cluster_queue(name).quota("tas", gpus=64).obj() for name in ("team-a", "team-b")]
    jobs = [_job("x1", 0, 1, 20), _job("x2", 0, 2, 20), _job("high", 100, 2, 10, runs_for=500),
            make_workload("low").queue("team-b").at(100).runs_for(500).gpus(8).topology(required="rack").obj()]
    rows = kueue_rows(tmp_path, nodes, jobs, [TOPOLOGY, TAS, *queues], PROFILE)
    assert (_nodes_of(rows, "x1"), _nodes_of(rows, "x2")) == (["n1"], ["n3", "n4"])
    assert _nodes_of(rows, "low") == ["n5"]
    assert pending_reasons(rows, "high")[0][1] == "WaitingForQuota"
