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
