"""Mutable min_count (elastic): shrinking a blocked group's quorum lets it start at once,
without disturbing anything that runs."""

from tests.scheduler.scenario import job, lowest_index, node, replay_rows, story


def test_an_elastic_shrink_lets_a_blocked_group_start(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 5000), job("elastic", 10, 600, pods=2)],
        lowest_index("gang-v1.37"),
        resizes=[("elastic", 100, 1)],
    )
    elastic = story(rows, events=("started", "finished", "resized"))
    assert elastic[:3] == [
        (0.0, "started", "busy", 0, "n1"),
        (100.0, "resized", "elastic", None, None),
        (100.0, "started", "elastic", 0, "n2"),  # one pod is now a quorum: it runs
    ]
    resized = next(r for r in rows if r["event"] == "resized")
    assert resized["message"] == "min_count 2 -> 1"
    # The group finishes 600 s after it started; its second pod never found room before.
    assert (700.0, "finished", "elastic", 0, "n2") in elastic
    assert not any(t[2] == "elastic" and t[3] == 1 for t in elastic)


def test_a_shrink_does_not_disturb_a_running_group(tmp_path):
    rows = replay_rows(
        tmp_path, [node("n1"), node("n2")], [job("running", 0, 600, pods=2)], lowest_index("gang-v1.37"),
        resizes=[("running", 100, 1)],
    )
    assert [r["event"] for r in rows if r["event"] in ("preempted", "timed_out", "requeued")] == []
    assert story(rows, events=("finished",)) == [(600.0, "finished", "running", 0, "n1"),
                                                  (600.0, "finished", "running", 1, "n2")]


# Four nodes: busy-a holds n1 until 500, busy-b n2 until 2000. "elastic" (4 pods, min_count
# 2) starts pods 0 and 1 on n3 and n4 at 10; its min_count is raised to 4 at 100.
RAISE_NODES = [node("n1"), node("n2"), node("n3"), node("n4")]
RAISE_WORKLOADS = [job("busy-a", 0, 500), job("busy-b", 0, 2000), job("elastic", 10, 5000, pods=4, min_count=2)]


def _elastic_starts(rows):
    return [(t[0], t[3], t[4]) for t in story(rows, events=("started",)) if t[2] == "elastic"]


def test_after_a_raise_the_pending_pods_reach_the_new_min_count_together(tmp_path):
    """kube-scheduler gangscheduling.go PlacementFeasible: scheduled (running) pods and the
    pending ones must reach minCount together: with 2 running and minCount 4, one free node
    (n1 at 500) is not enough; pods 2 and 3 bind together once n2 is free too."""
    rows = replay_rows(tmp_path, RAISE_NODES, RAISE_WORKLOADS, lowest_index("gang-v1.37"),
                       resizes=[("elastic", 100, 4)])
    assert _elastic_starts(rows) == [(10.0, 0, "n3"), (10.0, 1, "n4"), (2000.0, 2, "n1"), (2000.0, 3, "n2")]


def test_lowering_a_raised_min_count_lets_a_single_pod_bind_at_once(tmp_path):
    rows = replay_rows(tmp_path, RAISE_NODES, RAISE_WORKLOADS, lowest_index("gang-v1.37"),
                       resizes=[("elastic", 100, 4), ("elastic", 600, 3)])
    # 2 running + 1 pending reach 3: pod 2 binds on n1 (free since 500) at the resize
    assert _elastic_starts(rows) == [(10.0, 0, "n3"), (10.0, 1, "n4"), (600.0, 2, "n1"), (2000.0, 3, "n2")]


def test_without_a_raise_single_pods_of_a_running_group_bind_as_nodes_free(tmp_path):
    rows = replay_rows(tmp_path, RAISE_NODES, RAISE_WORKLOADS, lowest_index("gang-v1.37"))
    assert _elastic_starts(rows) == [(10.0, 0, "n3"), (10.0, 1, "n4"), (500.0, 2, "n1"), (2000.0, 3, "n2")]
