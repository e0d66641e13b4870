"""v1.35 preempts per pod, so it can evict victims for a gang that then times out anyway;
coscheduling rejects the group as soon as too much of it is unassigned."""

from tests.scheduler.scenario import job, lowest_index, node, replay_rows, story

CLUSTER = [node("n1"), node("n2"), node("n3")]
WORKLOADS = [
    job("low", 0, 9000, priority=10),  # n1: a victim the gang may preempt
    job("vip", 1, 9000, priority=900),  # n2: more important than the gang, never a victim
    job("gang", 10, 600, pods=3, priority=500),
]


def test_v135_evicts_a_victim_for_a_gang_that_then_times_out(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, WORKLOADS, lowest_index("gang-v1.35"))
    events = story(rows, events=("reserved", "preempted", "timed_out", "requeued"))
    assert events[:6] == [
        (10.0, "reserved", "gang", 0, "n3"),
        # premature: the gang cannot complete; the victim terminates for 30 s first
        (40.0, "preempted", "low", 0, "n1"),
        (40.0, "requeued", "low", None, None),
        (40.0, "reserved", "gang", 1, "n1"),
        (310.0, "timed_out", "gang", 0, "n3"),
        (310.0, "timed_out", "gang", 1, "n1"),
    ]
    waiting = [r for r in rows if r["workload_id"] == "gang" and r["reason"] == "WaitingForPreemptedWorkloads"]
    assert waiting[0]["time_s"] == 10.0  # the preemptor waits for its victim instead of preempting again
    preempted = next(r for r in rows if r["event"] == "preempted")
    assert preempted["reason"] == "preempted-by:gang"


def test_v137_does_not_preempt_for_a_group_that_cannot_fit(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, WORKLOADS, "gang-v1.37")
    assert [r for r in rows if r["event"] == "preempted"] == []


def test_coscheduling_rejects_the_group_when_too_much_is_unassigned(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, WORKLOADS, "coscheduling")
    released = [r for r in rows if r["event"] == "timed_out" and r["workload_id"] == "gang"]
    # at once when a pod fails (after the victim's 30 s grace), not after the 60 s Permit wait
    assert released and released[0]["time_s"] == 40.0
    assert released[0]["reason"] == "GangRejected"
    assert "1 of 3 required pods unassigned" in released[0]["message"]
