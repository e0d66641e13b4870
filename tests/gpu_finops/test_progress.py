"""The replay's progress bar ends on the replay's own last figures, however few updates it drew."""

from __future__ import annotations

from gpu_finops.progress import replay_progress


def test_the_bar_ends_on_the_last_day_and_pods_started(capsys):
    with replay_progress("replay", enabled=True) as update:
        assert update is not None
        for pods in range(1, 24):  # 23 calls: fewer than the throttle's 200
            update(pods * 3600.0, pods, 86400.0)
    err = capsys.readouterr().err
    assert "23 pods started" in err and "day 1.0" in err, err


def test_the_summary_names_the_file_of_rejected_rows():
    from gpu_finops.progress import rejected_rows
    assert rejected_rows(0, "run") == "no rejected rows"
    assert rejected_rows(1, "run") == "1 rejected row (why: run/rejected.csv)"
    assert rejected_rows(2_000, "run") == "2,000 rejected rows (why: run/rejected.csv)"
