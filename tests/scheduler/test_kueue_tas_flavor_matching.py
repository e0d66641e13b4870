"""Kueue TAS flavor matching: which flavors a pod set may be assigned at all.

Upstream: kueue pkg/scheduler/flavorassigner/flavorassigner.go `checkFlavorForPodSets` calls
tas_flavorassigner.go `checkPodSetAndFlavorMatchForTAS` (with TopologyAwareScheduling on)
before taints and node affinity: a pod set that asks for a topology level
(`IsExplicitlyRequestingTAS`) skips a flavor without a Topology ("does not support
TopologyAwareScheduling") and a Topology without the level (`HasLevel`: "does not contain the
requested level"); a pod set asking for none skips a TAS flavor ("supports only
TopologyAwareScheduling") unless the ClusterQueue is TAS-only (`isTASImplied`, `IsTASOnly`),
where every flavor matches. (The trace's topology columns are read as Kueue's podset topology
annotations whenever some ResourceFlavor of the queues file has a Topology.) The former replay assigned the first flavor that fit either way:
a rack-bound job ran on the plain pool without TAS, and plain jobs took the TAS pool.
"""

from __future__ import annotations

from tests.scheduler.admission_story import kueue_rows, pending_reasons
from tests.scheduler.builders import (
    make_cluster_queue,
    make_flavor,
    make_node,
    make_topology,
    make_workload,
)
from tests.scheduler.scenario import lowest_index

POOL = "cloud.google.com/gke-nodepool"
TOPOLOGY = make_topology("racks").levels("gpu-finops/rack", "kubernetes.io/hostname").obj()
BLOCKS_ONLY = make_topology("blocks").levels("gpu-finops/block").obj()
PLAIN = make_flavor("plain").gpu_model("A100").label(POOL, "plain").obj()
TAS = make_flavor("tas").gpu_model("A100").label(POOL, "tas").topology("racks").obj()
TAS_BLOCKS = make_flavor("tas-blocks").gpu_model("A100").label(POOL, "tas").topology("blocks").obj()
NODES = [make_node("p1").labels({POOL: "plain"}).obj(), make_node("t1").labels({POOL: "tas"}).obj(),
         make_node("t2").labels({POOL: "tas"}).obj()]


def _admitted(rows):
    return {r["workload_id"]: r["flavor"] for r in rows if r["event"] == "admitted"}


def _started_on(rows, workload):
    return sorted({r["node"] for r in rows if r["event"] == "started" and r["workload_id"] == workload})


def _job(name, queue, *, rack=None):
    return make_workload(name).queue(queue).runs_for(600).gpus(8).topology(required=rack).obj()


def test_a_topology_pod_set_skips_a_flavor_without_a_topology_and_a_plain_one_skips_a_tas_flavor(tmp_path):
    objects = [TOPOLOGY, PLAIN, TAS,
               make_cluster_queue("plain-first").quota("plain", gpus=16).quota("tas", gpus=16).obj(),
               make_cluster_queue("tas-first").quota("tas", gpus=16).quota("plain", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("rack-job", "plain-first", rack="rack"), _job("plain-job", "tas-first")],
                      objects, lowest_index("gang-v1.37"))  # the first node of the flavor's
    assert _admitted(rows) == {"rack-job": "tas", "plain-job": "plain"}
    assert _started_on(rows, "rack-job") == ["t1"]
    assert _started_on(rows, "plain-job") == ["p1"]


def test_a_topology_without_the_requested_level_does_not_match(tmp_path):
    objects = [TOPOLOGY, BLOCKS_ONLY, TAS_BLOCKS, TAS,
               make_cluster_queue("team-a").quota("tas-blocks", gpus=16).quota("tas", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("rack-job", "team-a", rack="rack")], objects)
    assert _admitted(rows) == {"rack-job": "tas"}


def test_no_matching_flavor_says_why_for_each_flavor(tmp_path):
    objects = [TOPOLOGY, BLOCKS_ONLY, PLAIN, TAS_BLOCKS,
               make_cluster_queue("team-a").quota("plain", gpus=16).quota("tas-blocks", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("rack-job", "team-a", rack="rack")], objects)
    assert _admitted(rows) == {}
    reasons = pending_reasons(rows, "rack-job")
    assert reasons[0][1] == "NoMatchingFlavor"
    assert reasons[0][2].startswith('couldn\'t assign flavors to pod set main: Flavor "plain" does not support '
                                    'TopologyAwareScheduling, Flavor "tas-blocks" does not contain the requested level')


def test_a_queues_file_without_any_topology_keeps_the_topology_columns_for_placement(tmp_path):
    """The trace's topology columns are Kueue's annotations only where the queues file uses
    TAS at all; without any Topology they stay the gang scheduler's own constraint (the demo's
    preferred blocks), and the job is admitted to the plain flavor."""
    objects = [PLAIN, make_cluster_queue("team-a").quota("plain", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("rack-job", "team-a", rack="rack")], objects)
    assert _admitted(rows) == {"rack-job": "plain"}


def test_a_cluster_queue_without_tas_flavors_refuses_a_topology_pod_set_when_tas_is_in_use(tmp_path):
    """checkFlavorForPodSets runs checkPodSetAndFlavorMatchForTAS for every flavor of every
    ClusterQueue, whether or not the ClusterQueue has a TAS flavor: with a Topology in the
    queues file, a rack-bound job in a plain-only ClusterQueue matches no flavor and waits
    (the former replay admitted it to the plain flavor, applying the check only in
    ClusterQueues with a TAS flavor); the plain job of the same size there is admitted, no
    longer parked with it as an equivalent (the topology request is part of the shape)."""
    objects = [TOPOLOGY, PLAIN, TAS, make_cluster_queue("plain-only").quota("plain", gpus=16).obj(),
               make_cluster_queue("tas-team").quota("tas", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("rack-job", "plain-only", rack="rack"), _job("plain-job", "plain-only")],
                      objects)
    assert _admitted(rows) == {"plain-job": "plain"}
    reasons = pending_reasons(rows, "rack-job")
    assert reasons[0][1] == "NoMatchingFlavor"
    assert reasons[0][2].startswith('couldn\'t assign flavors to pod set main: Flavor "plain" does not support '
                                    'TopologyAwareScheduling')


def test_in_a_tas_only_cluster_queue_tas_is_implied_and_a_plain_pod_set_matches(tmp_path):
    objects = [TOPOLOGY, TAS, make_cluster_queue("team-a").quota("tas", gpus=16).obj()]
    rows = kueue_rows(tmp_path, NODES, [_job("plain-job", "team-a")], objects)
    assert _admitted(rows) == {"plain-job": "tas"}
    assert _started_on(rows, "plain-job") in (["t1"], ["t2"])
