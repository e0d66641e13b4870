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
    busy = next(r["node"] for r in rows if r["event"] == "started" and r["workload_id"] == "busy")
    other = {"n1": "n2", "n2": "n1"}[busy]  # busy drew one of the two empty nodes
    gang = [s for s in story(rows, events=PLACEMENT) if s[2] == "gang"]
    assert gang[:3] == [
        (10.0, "started", "gang", 0, other),
        (610.0, "timed_out", "gang", 0, other),
        (610.0, "requeued", "gang", None, None),
    ]
