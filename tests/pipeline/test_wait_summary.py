"""`explain` starts with the answer: where a workload's wait went, hours per concern, then the
timeline with long runs of one pending reason folded; GPU shortfalls in GPUs."""

from __future__ import annotations

import pytest

from pipeline.wait_summary import Folded, fold, human_message, summary_sentence, wait_shares


def _row(t: float, event: str, reason: str | None = None, message: str = "") -> dict:
    return {"time_s": t, "event": event, "reason": reason, "message": message, "pod_index": None}


TIMELINE = [
    _row(0, "submitted"),
    _row(60, "pending", "WaitingForQuota"),
    _row(3660, "pending", "WaitingForQuota"),
    _row(7260, "pending", "Unschedulable"),
    _row(9060, "requeued"),
    _row(9660, "pending", "GangNotSatisfiable"),
    _row(10860, "pending", "WaitingForPreemptedWorkloads"),
    _row(11460, "started"),
    _row(20000, "finished"),
]


def test_the_wait_is_split_by_concern_to_the_second():
    shares = {s.concern: s for s in wait_shares(TIMELINE)}
    assert {c: s.seconds for c, s in shares.items()} == {
        "quota": 7200, "placement": 1800, "backoff": 600, "gang barrier": 1200, "preemption": 600,
        "before the first attempt": 60}
    assert shares["quota"].attempts == 2 and shares["quota"].reasons == ("WaitingForQuota",)
    assert sum(s.seconds for s in shares.values()) == 11460  # submission to start, exactly


def test_the_summary_sentence_leads_with_the_biggest_share():
    sentence = summary_sentence(TIMELINE)
    assert sentence.startswith("Waited 3.2 h: quota 2.0 h (2 attempts: WaitingForQuota), placement 30 min")
    assert summary_sentence([_row(0, "submitted"), _row(0, "started")]).startswith("It never waited")


def test_a_workload_still_waiting_waits_until_the_end_given():
    rows = [_row(0, "submitted"), _row(0, "pending", "WaitingForQuota")]
    assert wait_shares(rows, end_s=7200)[0].seconds == 7200


def test_long_runs_of_one_reason_fold_into_one_line_with_their_count():
    rows = [_row(0, "submitted"), *[_row(60 * i, "pending", "WaitingForQuota") for i in range(1, 2241)],
            _row(200_000, "started")]
    folded = fold(rows)
    assert len(folded) == 3 and isinstance(folded[1], Folded) and folded[1].count == 2240
    assert folded[1].last["time_s"] == 60 * 2240
    assert fold(rows[:3]) == rows[:3]  # short runs stay as they are


@pytest.mark.parametrize(("message", "shown"), [
    ("insufficient unused quota for nvidia.com/gpu in flavor a100, 126250m more needed; position 3",
     "insufficient unused quota for nvidia.com/gpu in flavor a100, 126.25 GPUs more needed; position 3"),
    ("quota for nvidia.com/gpu in flavor h100, 500m more needed", "quota for nvidia.com/gpu in flavor h100, 0.5 GPUs more needed"),
    ("quota for memory in flavor a100, 4544Gi more needed", "quota for memory in flavor a100, 4544Gi more needed"),
    # one form for whole and fractional shortfalls, GPUs and CPU cores alike (explain mixed
    # "87 more needed", "72.5 GPUs more needed" and "111250m more needed")
    ("quota for nvidia.com/gpu in flavor h100, 87 more needed", "quota for nvidia.com/gpu in flavor h100, 87 GPUs more needed"),
    ("quota for cpu in flavor h100, 111250m more needed", "quota for cpu in flavor h100, 111.25 CPUs more needed"),
    ("quota for cpu in flavor h100, 64 more needed", "quota for cpu in flavor h100, 64 CPUs more needed"),
])
def test_gpu_shortfalls_read_in_gpus(message, shown):
    assert human_message(message) == shown
