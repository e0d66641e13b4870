"""Replays that cannot end stop once nothing can change (quiescence), with one summary line.

Upstream: nothing in Kubernetes stops; the rule is what a long replay owes its user.
kube-scheduler retries an unschedulable pod at least every five minutes (`scheduling_queue.go`
`flushUnschedulablePodsLeftover`), and Kueue readmits a workload evicted by waitForPodsReady
after its backoff (`workload_controller.go`, `pkg/workload` `UpdateRequeueState`): a workload
that can never start keeps both loops going for good. The former replay ran them to the
90-day safety stop (and, with a flavor whose nodeLabels match no node and an unlimited
backoffLimitCount, died on day 63 in the requeue backoff). Now the replay ends at the last
action after which every retry fails the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.scheduler.admission_story import kueue_files, kueue_rows
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_flavor,
    make_node,
    make_workload,
)
from tests.scheduler.scenario import job, node, replay_rows

NOWHERE = make_flavor("a100-pool-x").gpu_model("A100").label("cloud.google.com/gke-nodepool", "pool-x")


def test_a_flavor_matching_no_node_settles_within_the_day(tmp_path):
    nodes = [make_node("n1").gpus(8).model("A100").obj()]
    objects = [NOWHERE.obj(), make_configuration().wait_for_pods_ready(timeout="10m").obj(),
               make_cluster_queue("team-a").quota("a100-pool-x", gpus=8).obj()]
    workloads = [make_workload("w").queue("team-a").gpus(4).runs_for(600).obj()]
    rows = kueue_rows(tmp_path, nodes, workloads, objects)
    run = json.loads((tmp_path / "run-gang-v1.37" / "run.json").read_text())
    assert run["last_event_s"] < 86_400  # was the 90-day cap
    assert run["settled"].startswith("settled at ")
    assert "1 workload waits for good" in run["settled"]
    assert "w: " in run["settled"]
    assert [r["event"] for r in rows if r["pod_index"] is None][:2] == ["submitted", "admitted"]


def test_the_cli_prints_the_summary_and_exits_0_within_seconds(tmp_path):
    nodes = [make_node("n1").gpus(8).model("A100").obj()]
    objects = [NOWHERE.obj(), make_configuration().wait_for_pods_ready(timeout="10m").obj(),
               make_cluster_queue("team-a").quota("a100-pool-x", gpus=8).obj()]
    trace, cluster, queues = kueue_files(tmp_path, nodes, [make_workload("w").queue("team-a").gpus(4).obj()], objects)
    done = subprocess.run([sys.executable, "-m", "gpu_finops.cli", "replay", "-q", "--trace", str(trace), "--cluster",
                           str(cluster), "--queues", str(queues), "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("settled at ")]


def _run(tmp_path):
    return json.loads((tmp_path / "run" / "run.json").read_text())


def test_without_kueue_a_gang_that_never_fits_settles_once_the_rest_is_done(tmp_path):
    """A gang needing one GPU model for all its pods where no model has enough nodes (the
    tiny preset's alpha-training-00025): it waits for good; the others run to completion."""
    nodes = [node("h1", model="H100"), node("a1", model="A100")]
    workloads = [job("big", 0, 600, pods=2, model="H100|A100"), job("small", 5, 3600)]
    rows = replay_rows(tmp_path, nodes, workloads, profile="gang-v1.37")
    assert [r["workload_id"] for r in rows if r["event"] == "finished"] == ["small"]
    run = _run(tmp_path)
    assert run["last_event_s"] <= 3605 + 300
    assert "1 workload waits for good: 1 GangNotSatisfiable (e.g. big:" in run["settled"]


def test_a_workload_that_could_start_keeps_the_replay_going(tmp_path):
    """Not quiescent while something runs: the long job finishes on its own time."""
    workloads = [job("long", 0, 5 * 86_400), job("next", 10, 60)]
    rows = replay_rows(tmp_path, [node("n1")], workloads, profile="gang-v1.37")
    assert [r["workload_id"] for r in rows if r["event"] == "finished"] == ["long", "next"]
    assert "settled" not in _run(tmp_path)
