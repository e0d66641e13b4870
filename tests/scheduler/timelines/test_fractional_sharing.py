"""Fractional GPU requests share one device."""

from tests.scheduler.scenario import job, node, replay_rows, story


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
