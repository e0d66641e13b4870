"""The replay window ends at the hour of the last event, with no idle hour after a pod that
ends exactly on the hour (issue 25)."""

from __future__ import annotations

import json

from scheduler.commands import run_horizon_s
from tests.scheduler.scenario import job, node, replay_rows


def test_a_run_whose_last_pod_ends_on_the_hour_ends_there(tmp_path):
    # one pod of 8 GPUs from 0 to exactly 2 h: the window is 2 h, not 3
    rows = replay_rows(tmp_path, [node("n1")], [job("w1", 0, 7200)], "kube-default")
    assert rows[-1]["event"] == "finished" and rows[-1]["time_s"] == 7200.0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["horizon_s"] == 7200.0


def test_the_horizon_rule():
    assert run_horizon_s(7200.0, 100.0) == 7200.0  # the last pod ends on the hour
    assert run_horizon_s(7200.5, 100.0) == 10800.0
    assert run_horizon_s(0.0, 0.0) == 3600.0  # at least an hour
    assert run_horizon_s(3600.0, 3600.0) == 7200.0  # a submission on the hour lies inside
