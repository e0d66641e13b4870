"""A preempted workload loses only the work since its last checkpoint."""

from tests.scheduler.scenario import GANG_V137_PREEMPTING, job, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_preempted_work_resumes_from_the_last_checkpoint(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1")],
        [job("trainer", 0, 3000, priority=1, checkpoint=600), job("urgent", 1000, 100, priority=9)],
        GANG_V137_PREEMPTING,
    )
    trainer = [s for s in story(rows, events=PLACEMENT) if s[2] == "trainer"]
    # Evicted at 1000, its pod terminates for the 30 s grace period (it holds the GPUs until
    # 1030, where urgent starts); checkpointed at 600: 430 s lost, 2400 s left; resumes when
    # urgent ends at 1130.
    assert trainer == [
        (0.0, "started", "trainer", 0, "n1"),
        (1030.0, "preempted", "trainer", 0, "n1"),
        (1030.0, "requeued", "trainer", None, None),
        (1130.0, "started", "trainer", 0, "n1"),
        (3530.0, "finished", "trainer", 0, "n1"),
    ]
