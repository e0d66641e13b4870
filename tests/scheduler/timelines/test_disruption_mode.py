"""Disruption mode and the workload's policy on pod loss (golden timelines).

kube-scheduler's workload-aware preemption (preemption/types.go `getCrossNodesVictims`,
`getHighestAllAncestor`) makes a pod group one victim only when its PodGroup says
`disruptionMode: All`; under Single, the API default, each pod is a victim of its own.
What the loss of one pod means is then the workload's controller's business (on_pod_loss).

Four nodes of 8 GPUs, a 4-pod low-priority gang on all of them (checkpoint every 1000 s);
at t=100 a high-priority one-node job arrives. The plan takes n1 (lowest index), so the
victim is the gang's pod on n1 (Single) or the whole gang (All).
"""

import pytest

from tests.scheduler.scenario import (
    GANG_V137_PREEMPTING,
    job,
    lowest_index,
    node,
    replay_rows,
    story,
)

NODES = [node("n1"), node("n2"), node("n3"), node("n4")]


def _rows(tmp_path, **gang_columns):
    gang = job("gang", 0, 9000, pods=4, priority=1, checkpoint=1000, kind="training", **gang_columns)
    return replay_rows(tmp_path, NODES, [gang, job("urgent", 100, 500, priority=9)], lowest_index(GANG_V137_PREEMPTING))


def _gang_story(rows):
    return story([r for r in rows if r["workload_id"] == "gang"],
                 events=("preempted", "requeued", "started", "finished"))


def test_all_evicts_the_whole_group(tmp_path):
    rows = _rows(tmp_path, disruption_mode="all")
    assert _gang_story(rows)[4:] == [
        (130.0, "preempted", "gang", 0, "n1"),
        (130.0, "preempted", "gang", 1, "n2"),
        (130.0, "preempted", "gang", 2, "n3"),
        (130.0, "preempted", "gang", 3, "n4"),
        (130.0, "requeued", "gang", None, None),
        (630.0, "started", "gang", 0, "n1"),
        (630.0, "started", "gang", 1, "n2"),
        (630.0, "started", "gang", 2, "n3"),
        (630.0, "started", "gang", 3, "n4"),
        (9630.0, "finished", "gang", 0, "n1"),
        (9630.0, "finished", "gang", 1, "n2"),
        (9630.0, "finished", "gang", 2, "n3"),
        (9630.0, "finished", "gang", 3, "n4"),
    ]


def test_single_with_restart_group_picks_one_pod_and_its_controller_restarts_the_group(tmp_path):
    rows = _rows(tmp_path, on_pod_loss="restart_group")  # disruption_mode empty: Single
    (tmp_path / "all").mkdir()
    assert _gang_story(rows) == _gang_story(_rows(tmp_path / "all", disruption_mode="all"))
    message = next(r["message"] for r in rows if r["event"] == "preempted")
    assert "pod(s) 0 preempted" in message and "restarts the whole group" in message


def test_single_with_keep_running_loses_one_pod_and_the_rest_goes_on(tmp_path):
    rows = _rows(tmp_path, on_pod_loss="keep_running")
    assert _gang_story(rows)[4:] == [
        (130.0, "preempted", "gang", 0, "n1"),
        (9000.0, "finished", "gang", 1, "n2"),
        (9000.0, "finished", "gang", 2, "n3"),
        (9000.0, "finished", "gang", 3, "n4"),
    ]
    assert [r["workload_id"] for r in rows if r["event"] == "requeued"] == []
    assert [(r["time_s"], r["node"]) for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"] == [
        (130.0, "n1")]


def test_single_with_replace_pod_reruns_the_lost_pod_alone(tmp_path):
    rows = _rows(tmp_path, on_pod_loss="replace_pod")
    assert _gang_story(rows)[4:] == [
        (130.0, "preempted", "gang", 0, "n1"),
        (630.0, "started", "gang", 0, "n1"),  # once urgent is done, on the node it left
        (9000.0, "finished", "gang", 0, "n1"),
        (9000.0, "finished", "gang", 1, "n2"),
        (9000.0, "finished", "gang", 2, "n3"),
        (9000.0, "finished", "gang", 3, "n4"),
    ]
    assert [r["workload_id"] for r in rows if r["event"] == "requeued"] == []


@pytest.mark.parametrize(("kind", "preempted_pods"), [
    ("training", 4), ("fine-tune", 4), ("inference", 4), ("batch", 1), ("notebook", 1), ("anything-else", 4),
])
def test_the_default_policy_follows_the_workload_kind(tmp_path, kind, preempted_pods):
    gang = job("gang", 0, 9000, pods=4, priority=1, kind=kind)
    rows = replay_rows(tmp_path, NODES, [gang, job("urgent", 100, 500, priority=9)], lowest_index(GANG_V137_PREEMPTING))
    assert sum(r["event"] == "preempted" for r in rows) == preempted_pods
