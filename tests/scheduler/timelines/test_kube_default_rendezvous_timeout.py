"""Without gangs, a partially placed job crashes when its rendezvous times out."""

from tests.scheduler.scenario import job, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_kube_default_rendezvous_timeout_releases_a_partial_gang(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 5000), job("gang", 10, 500, pods=2)],
        "kube-default",
    )
    gang = [s for s in story(rows, events=PLACEMENT) if s[2] == "gang"]
    assert gang[:3] == [
        (10.0, "started", "gang", 0, "n1"),  # busy drew n2 of the two empty nodes (seed 1)
        (610.0, "timed_out", "gang", 0, "n1"),
        (610.0, "requeued", "gang", None, None),
    ]
