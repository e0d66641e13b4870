"""Kueue Topology-Aware Scheduling: a pod set is admitted into one topology domain or waits
with `TopologyPlacementFailed`, and its pods are placed inside that domain.

Upstream: kueue pkg/cache/scheduler/tas_flavor_snapshot.go (findTopologyAssignment,
findLevelWithFitDomains, findBestFitDomain, sortedDomains, notFitMessage) and
pkg/scheduler/flavorassigner/flavorassigner.go (the TAS check of an assignment that fits);
apis/kueue/v1beta2/topology_types.go (Topology, the podset-required-topology and
podset-preferred-topology annotations, read here from the trace's topology columns).
"""

from __future__ import annotations

import pytest

from scheduler.admission.manifests import parse_queue_config
from scheduler.errors import InputError
from tests.scheduler.admission_story import kueue_rows, pending_reasons, timeline
from tests.scheduler.builders import (
    make_cluster_queue,
    make_flavor,
    make_node,
    make_topology,
    make_workload,
    manifests_yaml,
)
from tests.scheduler.scenario import lowest_index

TOPOLOGY = make_topology("default").levels("gpu-finops/block", "gpu-finops/rack", "kubernetes.io/hostname").obj()
TAS = make_flavor("tas").gpu_model("A100").topology("default").obj()
# Block b2 holds rack r3 (one node, first in the file); block b1 holds racks r1 (two nodes)
# and r2 (three nodes).
NODES = [make_node("n6").block("b2").rack("r3").obj(),
         make_node("n1").obj(), make_node("n2").obj(),
         *(make_node(f"n{i}").rack("r2").obj() for i in (3, 4, 5))]


def _gang(name, at, runs_for, pods, *, required=None, preferred=None):
    return (make_workload(name).queue("team-a").at(at).runs_for(runs_for).pods(pods).gpus(8)
            .topology(required=required, preferred=preferred).obj())


def _nodes_of(rows, workload):
    return sorted({r["node"] for r in rows if r["event"] == "started" and r["workload_id"] == workload})


def _rows(tmp_path, jobs):
    return kueue_rows(tmp_path, NODES, jobs, [TOPOLOGY, TAS, make_cluster_queue("team-a").quota("tas", gpus=64).obj()],
                      lowest_index("gang-v1.37"))  # the pods of a rack go to its nodes in file order


def test_required_rack_takes_the_best_fitting_rack_and_a_pod_set_that_fits_the_empty_topology_waits_for_quota(tmp_path):
    """findLevelWithFitDomains / findBestFitDomain: racks sorted by how many pods they hold
    (r2: 3, r1: 2, r3: 1); the first with the smallest count that still holds the pod set
    wins. j1 gets r1; j2, admitted in the next cycle of the same instant while j1's pods are
    not placed yet, sees r1 taken by j1's assumed usage and gets r2. j3 needs 3 pods in one
    rack: "allows to fit only 1 out of 3", so Kueue does not admit it (the old replay
    admitted it on quota and let placement fail with TopologyUnsatisfiable while it held the
    quota); it is admitted into r2 once j2's pods are gone. r2 would hold j3 on the empty
    topology, so the assignment turns Preempt (flavorassigner.go, WithSimulateEmpty); with no
    candidate (withinClusterQueue Never) it waits with WaitingForQuota and Kueue's message
    (scheduler.go processEntry, Preempt without targets), not TopologyPlacementFailed, which
    is for a pod set even the empty topology cannot hold."""
    jobs = [_gang("j1", 0, 1000, 2, required="rack"), _gang("j2", 0, 2000, 2, required="rack"),
            _gang("j3", 0, 500, 3, required="rack")]
    rows = _rows(tmp_path, jobs)

    assert timeline(rows, "admitted") == [
        (0.0, "admitted", "j1", None), (0.0, "admitted", "j2", None), (2001.0, "admitted", "j3", None),
    ]
    assert (_nodes_of(rows, "j1"), _nodes_of(rows, "j2"), _nodes_of(rows, "j3")) == (
        ["n1", "n2"], ["n3", "n4"], ["n3", "n4", "n5"])
    waits = pending_reasons(rows, "j3")
    assert {reason for _, reason, _ in waits} == {"WaitingForQuota"}
    assert waits[0] == (0.0, "WaitingForQuota",
                        'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of 3 pod(s); '
                        "position 1 of 1 in ClusterQueue team-a")
    assert "TopologyUnsatisfiable" not in {r["reason"] for r in rows}


def test_preferred_rack_goes_up_to_the_block_and_places_inside_it(tmp_path):
    """findLevelWithFitDomains: a preferred level that no domain holds moves one level up
    (no rack holds 4 pods; block b1 holds 5), and the pods run inside that block only (the
    old replay fell back to the whole cluster and used n6, the first node, in block b2)."""
    rows = _rows(tmp_path, [_gang("p1", 0, 100, 4, preferred="rack")])
    assert timeline(rows, "admitted") == [(0.0, "admitted", "p1", None)]
    assert _nodes_of(rows, "p1") == ["n1", "n2", "n3", "n4"]


def test_a_pod_set_no_domain_can_ever_hold_waits_for_good(tmp_path):
    """notFitMessage: a required rack for more pods than any rack has nodes is never admitted."""
    rows = _rows(tmp_path, [_gang("big", 0, 100, 4, required="rack")])
    assert timeline(rows, "admitted") == []
    assert pending_reasons(rows, "big")[0][1:] == (
        "TopologyPlacementFailed",
        'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 3 out of 4 pod(s); '
        "position 1 of 1 in ClusterQueue team-a")


def test_topology_manifests_are_read_and_checked():
    config = parse_queue_config(manifests_yaml(TOPOLOGY, TAS))
    assert config.topologies["default"].levels == ("gpu-finops/block", "gpu-finops/rack", "kubernetes.io/hostname")
    assert config.flavors["tas"].topology_name == "default"
    missing = parse_queue_config(manifests_yaml(make_flavor("tas").topology("other").obj()))
    assert missing.flavors["tas"].topology_name is None
    assert missing.warnings == ("queues.yaml: document 1: ResourceFlavor tas: Topology 'other' is not defined in this file; "
                                "its workloads are admitted without topology-aware scheduling",)
    with pytest.raises(InputError, match="can only be the lowest"):
        parse_queue_config(manifests_yaml(make_topology("t").levels("kubernetes.io/hostname", "gpu-finops/rack").obj()))


def test_a_verified_replay_with_topology_aware_scheduling_writes_the_same_log(tmp_path):
    """`replay --verify` with TAS pod sets (required and preferred racks and blocks, among
    jobs without topology and jobs Kueue does not manage): the placement fast paths agree
    with the plain computations under the domain selectors, and verifying changes nothing."""
    from scheduler.commands import replay
    from scheduler.verify import Verifier
    from tests.scheduler.admission_story import kueue_files

    nodes = [make_node(f"n{i:02d}").block(f"b{i // 6}").rack(f"r{i // 3}").obj() for i in range(12)]
    jobs = []
    for i in range(50):
        level = ("rack", "block", None)[i % 3]
        job = (make_workload(f"j{i:02d}").queue("team-a").at(i * 30).runs_for(200 + (i * 53) % 700)
               .pods(1 + i % 4).gpus((8, 4)[i % 2]).priority(i % 2))
        if level is not None:
            job = job.topology(required=level) if i % 2 else job.topology(preferred=level)
        jobs.append(job.obj())
    jobs.append(make_workload("free").at(10).runs_for(500).gpus(8).obj())
    manifests = [TOPOLOGY, TAS, make_cluster_queue("team-a").quota("tas", gpus=80).preemption(within="LowerPriority").obj()]
    trace, cluster, queues = kueue_files(tmp_path, nodes, jobs, manifests)
    verifier = Verifier()
    replay(trace, cluster, tmp_path / "verified", profile="gang-v1.37", seed=1, queues=queues, verifier=verifier)
    replay(trace, cluster, tmp_path / "plain", profile="gang-v1.37", seed=1, queues=queues)
    verified, plain = ((tmp_path / name / "events.parquet").read_bytes() for name in ("verified", "plain"))
    assert verified == plain
    assert "parked shape still fails" in verifier.checks, verifier.summary()
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "plain" / "events.parquet").to_pylist()
    reasons = {r["reason"] for r in rows if r["event"] == "pending"}
    assert "TopologyUnsatisfiable" not in reasons
    assert any("allows to fit only" in (r["message"] or "") for r in rows if r["event"] == "pending")
    assert any(r["event"] == "preempted" for r in rows)  # TAS-aware preemption took part
    assert sum(r["event"] == "admitted" for r in rows) >= 50  # every job ran in the end
    spec = {n.name: n for n in nodes}
    for job in jobs:
        if job.topology_required:  # each run of a required pod set stays in one domain
            runs: dict[int, set[str]] = {}
            attempt = 0
            for r in rows:
                if r["workload_id"] == job.workload_id:
                    attempt += r["event"] == "admitted"
                    if r["event"] == "started":
                        runs.setdefault(attempt, set()).add(spec[r["node"]].label(job.topology_required))
            assert runs and all(len(domains) == 1 for domains in runs.values()), (job.workload_id, runs)
