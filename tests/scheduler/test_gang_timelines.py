"""Golden timelines: all-or-nothing placement, the gang wait time-outs, and partial
placement under the no-gang baseline. Each test is one small story on 2-3 nodes."""

from tests.scheduler.scenario import job, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_gang_v137_places_the_whole_group_or_nothing(tmp_path):
    # n1 is busy until t=1000; the 2-pod gang arriving at t=10 must not start half.
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 1000), job("gang", 10, 500, pods=2)],
        "gang-v1.37",
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


def test_kube_default_places_pod_by_pod_and_holds_gpus_without_progress(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 400), job("gang", 10, 500, pods=2)],
        "kube-default",
    )
    assert story(rows, events=PLACEMENT) == [
        (0.0, "started", "busy", 0, "n1"),
        (10.0, "started", "gang", 0, "n2"),  # partial placement: 1 of 2 pods run, no progress
        (400.0, "finished", "busy", 0, "n1"),
        (400.0, "started", "gang", 1, "n1"),
        (900.0, "finished", "gang", 0, "n2"),  # 500 s of work counted from the gang's completion
        (900.0, "finished", "gang", 1, "n1"),
    ]
    reasons = [r["reason"] for r in rows if r["event"] == "pending" and r["workload_id"] == "gang"]
    assert "WaitingForGang" in reasons


def test_gang_v135_permit_timeout_releases_reservations_at_exactly_300s(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 5000), job("gang", 10, 500, pods=2)],
        "gang-v1.35",
    )
    gang = [s for s in story(rows, events=PLACEMENT) if s[2] == "gang"]
    assert gang[:3] == [
        (10.0, "reserved", "gang", 0, "n2"),
        (310.0, "timed_out", "gang", 0, "n2"),
        (310.0, "requeued", "gang", None, None),
    ]
    timed_out = next(r for r in rows if r["event"] == "timed_out")
    assert timed_out["reason"] == "GangPermitTimeout"
    assert "1 of 2 required pods placed within 300s" in timed_out["message"]
    # After the busy pod leaves, the gang is reserved in full and runs.
    assert (5000.0, "started", "gang", 1, "n1") in gang or (5000.0, "started", "gang", 0, "n1") in gang


def test_kube_default_rendezvous_timeout_releases_a_partial_gang(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 5000), job("gang", 10, 500, pods=2)],
        "kube-default",
    )
    gang = [s for s in story(rows, events=PLACEMENT) if s[2] == "gang"]
    assert gang[:3] == [
        (10.0, "started", "gang", 0, "n2"),
        (610.0, "timed_out", "gang", 0, "n2"),
        (610.0, "requeued", "gang", None, None),
    ]


def test_gang_v137_preemption_evicts_whole_groups_and_no_more_than_needed(tmp_path):
    # Three low-priority single-node jobs; a high-priority 2-node gang needs two nodes.
    # Equal priorities: the longest-running victim is the most important and is spared.
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2"), node("n3")],
        [
            job("low-a", 0, 9000, priority=10),
            job("low-b", 5, 9000, priority=10),
            job("low-c", 6, 9000, priority=10),
            job("urgent", 100, 600, pods=2, priority=1000),
        ],
        "gang-v1.37",
    )
    preempted = {(r["workload_id"], r["reason"]) for r in rows if r["event"] == "preempted"}
    assert preempted == {("low-b", "preempted-by:urgent"), ("low-c", "preempted-by:urgent")}
    started = [(r["pod_index"], r["node"]) for r in rows if r["event"] == "started" and r["workload_id"] == "urgent"]
    assert [t for t in rows if t["event"] == "started" and t["workload_id"] == "urgent"][0]["time_s"] == 100.0
    assert sorted(n for _, n in started) == ["n2", "n3"]


def test_preempted_work_resumes_from_the_last_checkpoint(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1")],
        [job("trainer", 0, 3000, priority=1, checkpoint=600), job("urgent", 1000, 100, priority=9)],
        "gang-v1.37",
    )
    trainer = [s for s in story(rows, events=PLACEMENT) if s[2] == "trainer"]
    # Ran 1000 s, checkpointed at 600: 400 s lost, 2400 s left; resumes when urgent ends.
    assert trainer == [
        (0.0, "started", "trainer", 0, "n1"),
        (1000.0, "preempted", "trainer", 0, "n1"),
        (1000.0, "requeued", "trainer", None, None),
        (1100.0, "started", "trainer", 0, "n1"),
        (3500.0, "finished", "trainer", 0, "n1"),
    ]


def test_fractional_requests_share_one_device(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1", gpus=1)],
        [job("nb-1", 0, 100, gpus=0.5), job("nb-2", 0, 100, gpus=0.5), job("nb-3", 0, 100, gpus=0.5)],
        "gang-v1.37",
    )
    assert story(rows, events=("started",)) == [
        (0.0, "started", "nb-1", 0, "n1"),
        (0.0, "started", "nb-2", 0, "n1"),
        (100.0, "started", "nb-3", 0, "n1"),
    ]


def test_a_gang_larger_than_the_cluster_is_rejected_with_its_numbers(tmp_path):
    rows = replay_rows(tmp_path, [node("n1"), node("n2")], [job("huge", 0, 100, pods=3)], "gang-v1.37")
    assert [r["event"] for r in rows] == ["submitted", "rejected"]
    assert rows[1]["reason"] == "LargerThanCluster"
    assert "16" in rows[1]["message"]
