"""A preempted pod terminates before its preemptor binds.

kube-scheduler deletes the victims (their pods get terminationGracePeriodSeconds, 30 s by
default, to shut down and still hold their node's resources), nominates the preemptor and
binds it once the victims are gone; a preemptor whose victims are still terminating is not
eligible to preempt again (pkg/scheduler/framework/preemption: PodEligibleToPreemptOthers
and the pod group evaluator's preemptorEligibleToPreemptOthers). The replay's profiles take
the grace period as `termination_grace_s` (default 30 s, as upstream)."""

from tests.scheduler.scenario import GANG_V137_PREEMPTING, job, node, replay_rows, story

NO_GRACE = """
name = "gang-v1.37-no-grace"
unit = "pod_group"
[extension_points]
post_filter = ["WorkloadPreemption"]
[behaviour]
termination_grace_s = 0
"""


def _placement(rows):
    return [s for s in story(rows, events=("started", "preempted", "requeued", "finished"))]


def test_the_victim_holds_its_gpus_for_the_grace_period_and_the_preemptor_binds_after(tmp_path):
    rows = replay_rows(tmp_path, [node("n1")], [job("low", 0, 5000, priority=1), job("urgent", 100, 50, priority=9)],
                       GANG_V137_PREEMPTING)
    assert _placement(rows) == [
        (0.0, "started", "low", 0, "n1"),
        (130.0, "preempted", "low", 0, "n1"),
        (130.0, "requeued", "low", None, None),
        (130.0, "started", "urgent", 0, "n1"),
        (180.0, "finished", "urgent", 0, "n1"),
        (180.0, "started", "low", 0, "n1"),
        (5180.0, "finished", "low", 0, "n1"),
    ]
    waiting = [(r["time_s"], r["reason"]) for r in rows if r["event"] == "pending" and r["workload_id"] == "urgent"]
    assert waiting == [(100.0, "WaitingForPreemptedWorkloads")]
    preempted = next(r for r in rows if r["event"] == "preempted")
    assert "terminated after a 30s grace period" in preempted["message"]


def test_without_a_grace_period_the_preemptor_binds_at_once(tmp_path):
    rows = replay_rows(tmp_path, [node("n1")], [job("low", 0, 5000, priority=1), job("urgent", 100, 50, priority=9)],
                       NO_GRACE)
    assert _placement(rows)[1:4] == [
        (100.0, "preempted", "low", 0, "n1"),
        (100.0, "requeued", "low", None, None),
        (100.0, "started", "urgent", 0, "n1"),
    ]


def test_a_victim_that_finishes_while_it_terminates_is_not_requeued(tmp_path):
    rows = replay_rows(tmp_path, [node("n1")], [job("low", 0, 110, priority=1), job("urgent", 100, 50, priority=9)],
                       GANG_V137_PREEMPTING)
    assert _placement(rows) == [
        (0.0, "started", "low", 0, "n1"),
        (110.0, "finished", "low", 0, "n1"),
        (110.0, "started", "urgent", 0, "n1"),
        (160.0, "finished", "urgent", 0, "n1"),
    ]
