"""Without gang awareness, a gang starts pod by pod and holds GPUs without progress."""

from tests.scheduler.scenario import job, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_kube_default_places_pod_by_pod_and_holds_gpus_without_progress(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 400), job("gang", 10, 500, pods=2)],
        "kube-default",
    )
    first = rows[[r["event"] for r in rows].index("started")]["node"]  # the empty nodes tie: drawn
    other = {"n1": "n2", "n2": "n1"}[first]
    assert story(rows, events=PLACEMENT) == [
        (0.0, "started", "busy", 0, first),
        (10.0, "started", "gang", 0, other),  # partial placement: 1 of 2 pods run, no progress
        (400.0, "finished", "busy", 0, first),
        (400.0, "started", "gang", 1, first),
        (900.0, "finished", "gang", 0, other),  # 500 s of work counted from the gang's completion
        (900.0, "finished", "gang", 1, first),
    ]
    reasons = [r["reason"] for r in rows if r["event"] == "pending" and r["workload_id"] == "gang"]
    assert "WaitingForGang" in reasons
