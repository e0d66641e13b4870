"""ResourceFlavor nodeLabels, nodeTaints and tolerations constrain placement (issue 15, item 9).

Kueue injects the nodeLabels of the flavor a workload was admitted under as a nodeSelector,
and the flavor's tolerations, into its pods (kueue pkg/podset/podset.go FromAssignment and
PodSetInfo.Merge); kube-scheduler's NodeAffinity and TaintToleration filters then keep the
pods on the flavor's nodes. A flavor's nodeTaints are the taints its nodes carry; Kueue's
flavor assigner skips a flavor whose taints the pod (with the flavor's tolerations) does not
tolerate (pkg/scheduler/flavorassigner/flavorassigner.go checkFlavorForPodSets,
FindMatchingUntoleratedTaint). Each story is a real replay through `kueue_rows`.
"""

from __future__ import annotations

import pytest

from tests.scheduler.admission_story import kueue_rows, pending_reasons, timeline
from tests.scheduler.builders import make_cluster_queue, make_flavor, make_node, make_workload
from tests.scheduler.scenario import lowest_index

SPOT = {"cloud.google.com/gke-spot": "true"}
ADMISSION = ("admitted",)


def _started(rows, event="started"):
    return [(r["time_s"], r["workload_id"], r["node"]) for r in rows if r["event"] == event]


def _job(name, at, runs_for, gpus=8, queue="team-a"):
    return make_workload(name).queue(queue).at(at).runs_for(runs_for).gpus(gpus)


def test_a_workload_admitted_under_a_spot_flavor_runs_only_on_spot_nodes(tmp_path):
    """kueue pkg/podset/podset.go FromAssignment: the flavor's nodeLabels become the pods'
    nodeSelector. The spot flavor's 24 GPUs of quota exceed its two spot nodes: the third job
    holds quota and waits for a spot node while the on-demand A100 node n1 stays idle (the
    old replay narrowed to the GPU model alone and ran everything on n1 first)."""
    nodes = [make_node("n1").obj(),  # on-demand, same GPU model
             make_node("s1").zone("z2").labels(SPOT).obj(),
             make_node("s2").zone("z2").labels(SPOT).obj()]
    manifests = [
        make_flavor("spot").gpu_model("A100").label("cloud.google.com/gke-spot", "true").obj(),
        make_cluster_queue("team-a").quota("spot", gpus=24).obj(),
    ]
    jobs = [_job("j1", 0, 1000).obj(), _job("j2", 1, 2000).obj(), _job("j3", 2, 500).obj()]
    rows = kueue_rows(tmp_path, nodes, jobs, manifests, lowest_index("gang-v1.37"))  # s1 before s2

    assert timeline(rows, *ADMISSION) == [
        (0.0, "admitted", "j1", None), (1.0, "admitted", "j2", None), (2.0, "admitted", "j3", None),
    ]
    assert _started(rows) == [(0.0, "j1", "s1"), (1.0, "j2", "s2"), (1000.0, "j3", "s1")]
    assert _started(rows, "finished") == [(1000.0, "j1", "s1"), (1500.0, "j3", "s1"), (2001.0, "j2", "s2")]
    reasons = pending_reasons(rows, "j3")
    assert reasons[-1] == (2.0, "Unschedulable", "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, "
                                                 "1 node(s) didn't match Pod's node affinity/selector.")


def test_a_zone_flavor_keeps_its_cost_on_the_zone_nodes(tmp_path):
    """kueue pkg/podset/podset.go FromAssignment: every nodeLabel of the flavor counts (here
    the zone), so the GPU-hours are spent on the zone's nodes only."""
    nodes = [make_node("a1").obj(), make_node("b1").zone("z2").obj()]
    manifests = [
        make_flavor("zone-b").gpu_model("A100").label("topology.kubernetes.io/zone", "z2").obj(),
        make_cluster_queue("team-a").quota("zone-b", gpus=16).obj(),
    ]
    rows = kueue_rows(tmp_path, nodes, [_job("j1", 0, 100, gpus=4).obj(), _job("j2", 0, 100, gpus=4).obj()], manifests)
    assert _started(rows) == [(0.0, "j1", "b1"), (0.0, "j2", "b1")]


def test_flavor_taints_keep_other_pods_off_and_the_flavor_tolerations_let_its_own_on(tmp_path):
    """kueue pkg/scheduler/flavorassigner/flavorassigner.go checkFlavorForPodSets: a flavor
    whose nodeTaints the pod does not tolerate, even with the flavor's tolerations, is
    skipped ("untolerated taint ... in flavor"); the nodeTaints are on the flavor's nodes, so
    kube-scheduler's TaintToleration filter keeps a workload admitted under the untainted
    on-demand flavor (whose nodeLabels the spot node also matches) and a workload Kueue does
    not manage off the spot node; the spot flavor's tolerations let its workloads on."""
    nodes = [make_node("n1").obj(), make_node("s1").labels(SPOT).obj()]
    manifests = [
        make_flavor("on-demand").gpu_model("A100").obj(),
        make_flavor("spot").gpu_model("A100").label("cloud.google.com/gke-spot", "true")
        .taint("cloud.google.com/gke-spot", "true").toleration("cloud.google.com/gke-spot", "true", "NoSchedule").obj(),
        make_flavor("locked").gpu_model("A100").label("cloud.google.com/gke-spot", "true")
        .taint("cloud.google.com/gke-spot", "true").obj(),
        make_cluster_queue("team-a").quota("on-demand", gpus=8).quota("spot", gpus=8).obj(),
        make_cluster_queue("team-b").quota("locked", gpus=8).obj(),
    ]
    jobs = [
        _job("od", 0, 1000, gpus=4).obj(),  # on-demand flavor: n1 (s1 matches its labels, not its taints)
        _job("sp", 1, 1000, gpus=8).obj(),  # on-demand has 4 left: the spot flavor, tolerated on s1
        make_workload("free").at(0.5).runs_for(1000).gpus(8).obj(),  # no queue: only untainted nodes
        _job("lk", 3, 100, queue="team-b").obj(),  # its one flavor's taint is tolerated by nothing
    ]
    rows = kueue_rows(tmp_path, nodes, jobs, manifests)

    assert [(r["workload_id"], r["flavor"]) for r in rows if r["event"] == "admitted"] == [
        ("od", "on-demand"), ("sp", "spot"),
    ]
    assert _started(rows) == [(0.0, "od", "n1"), (1.0, "sp", "s1"), (1000.0, "free", "n1")]
    assert pending_reasons(rows, "free")[0] == (
        0.5, "Unschedulable",
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {cloud.google.com/gke-spot: true}.",
    )
    locked = pending_reasons(rows, "lk")
    assert locked and all(reason == "NoMatchingFlavor" for _, reason, _ in locked)
    assert locked[0][2].startswith("couldn't assign flavors to pod set main: "
                                   "untolerated taint cloud.google.com/gke-spot=true:NoSchedule in flavor locked")


def test_a_flavor_no_node_matches_is_a_warning(tmp_path):
    from scheduler.admission.objects import unmatched_flavor_warnings
    from scheduler.model.cluster import Cluster
    from tests.scheduler.builders import queue_config

    config = queue_config(make_flavor("spot").gpu_model("A100").label("pool", "spot").obj(),
                          make_cluster_queue("team-a").quota("spot", gpus=8).obj())
    assert unmatched_flavor_warnings(Cluster((make_node("n1").obj(),)), config) == [
        "ResourceFlavor spot: no node of the cluster carries all its nodeLabels (nvidia.com/gpu.product=A100, pool=spot); "
        "workloads admitted under it cannot be placed"
    ]
    assert unmatched_flavor_warnings(Cluster((make_node("n1").labels({"pool": "spot"}).obj(),)), config) == []


@pytest.mark.parametrize("profile", ["gang-v1.37", "kube-default-gpu-random"])
def test_a_verified_replay_with_flavor_selectors_and_taints_writes_the_same_log(tmp_path, profile):
    """`replay --verify` over flavors that split GPU models by zone and pool, with tainted
    spot nodes and gangs that prefer one block: the selector-aware fast paths (usage-index
    walk, topology domains summed over the admitted nodes, parked shapes) agree with the
    plain computations, and verifying changes nothing."""
    nodes = [make_node(f"n{i}").zone(f"z{i % 2}").block(f"b{i % 4}").labels(SPOT if i % 3 == 0 else {}).obj()
             for i in range(12)]
    manifests = [
        make_flavor("on-demand").gpu_model("A100").obj(),
        make_flavor("spot-z0").gpu_model("A100").label("cloud.google.com/gke-spot", "true")
        .label("topology.kubernetes.io/zone", "z0").taint("cloud.google.com/gke-spot", "true")
        .toleration("cloud.google.com/gke-spot", operator="Exists").obj(),
        make_flavor("spot-z1").gpu_model("A100").label("cloud.google.com/gke-spot", "true")
        .label("topology.kubernetes.io/zone", "z1").taint("cloud.google.com/gke-spot", "true")
        .toleration("cloud.google.com/gke-spot", operator="Exists").obj(),
        make_cluster_queue("team-a").quota("on-demand", gpus=32).quota("spot-z0", gpus=16).quota("spot-z1", gpus=16).obj(),
    ]
    jobs = []
    for i in range(60):
        job = _job(f"j{i:02d}", i * 40, 300 + (i * 37) % 900, gpus=(1, 2, 4, 8)[i % 4]).priority(i % 3)
        if i % 5 == 0:
            job = job.pods(2)
            job = job.topology(preferred="block")
        if i % 7 == 0:
            job = make_workload(f"free{i}").at(i * 40).runs_for(600).gpus(4)
        jobs.append(job.obj())
    from scheduler.commands import replay
    from scheduler.verify import Verifier
    from tests.scheduler.admission_story import kueue_files

    trace, cluster, queues = kueue_files(tmp_path, nodes, jobs, manifests)
    if profile == "kube-default-gpu-random":  # the usage-index walk answers under the keyed draw
        from tests.scheduler.scenario import with_tie_break

        (tmp_path / "random.toml").write_text(with_tie_break("kube-default-gpu", "random"))
        profile = str(tmp_path / "random.toml")
    verifier = Verifier()
    replay(trace, cluster, tmp_path / "verified", profile=profile, seed=1, queues=queues, verifier=verifier)
    replay(trace, cluster, tmp_path / "plain", profile=profile, seed=1, queues=queues)
    assert verifier.checks, verifier.summary()
    verified, plain = ((tmp_path / name / "events.parquet").read_bytes() for name in ("verified", "plain"))
    assert verified == plain
    if profile == "gang-v1.37":
        assert "free GPUs of a topology domain from running sums" in verifier.checks
    else:
        assert "node chosen through the usage index" in verifier.checks
