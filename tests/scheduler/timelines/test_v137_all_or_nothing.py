"""A v1.37 pod group starts whole or not at all."""

from tests.scheduler.scenario import job, lowest_index, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_gang_v137_places_the_whole_group_or_nothing(tmp_path):
    # n1 is busy until t=1000; the 2-pod gang arriving at t=10 must not start half.
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 1000), job("gang", 10, 500, pods=2)],
        lowest_index("gang-v1.37"),
    )
    assert story(rows, events=PLACEMENT) == [
        (0.0, "started", "busy", 0, "n1"),
        (1000.0, "finished", "busy", 0, "n1"),
        (1000.0, "started", "gang", 0, "n1"),
        (1000.0, "started", "gang", 1, "n2"),
        (1500.0, "finished", "gang", 0, "n1"),
        (1500.0, "finished", "gang", 1, "n2"),
    ]
    pending = [r for r in rows if r["event"] == "pending"]
    assert pending[0]["reason"] == "GangNotSatisfiable"
    assert "needs 2 pods x 8 GPUs (any model) = 16 GPUs, 8 free in the cluster" in pending[0]["message"]
