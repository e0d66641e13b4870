"""A PodGroup's scheduleTimeoutSeconds is how long its pods wait at Permit.

Upstream: scheduler-plugins `pkg/util/podgroup.go` `GetWaitTimeDuration`: the PodGroup's
`spec.scheduleTimeoutSeconds` when set, else the plugin's `permitWaitingTimeSeconds` (60 s
by default); `coscheduling.go` `Permit` waits that long. The trace's optional
`schedule_timeout_s` column carries it (the importer reads it from PodGroup objects); the
former replay waited the profile's 60 s for every group.
"""

from __future__ import annotations

import pytest

from tests.scheduler.scenario import job, node, replay_rows


@pytest.mark.parametrize(("timeout", "timed_out_at"), [("", 61.0), (10, 11.0), (300, 301.0)])
def test_the_podgroup_timeout_replaces_the_permit_wait(tmp_path, timeout, timed_out_at):
    # 9 of 10 pods fit (n1, n3) and wait at Permit for the tenth (n2 is held until 1000 s).
    nodes = [node("n1"), node("n2", model="H100"), node("n3", gpus=1)]
    workloads = [job("holder", 0, 1000, model="H100"),
                 job("gang", 1, 500, pods=10, gpus=1, schedule_timeout_s=timeout)]
    rows = replay_rows(tmp_path, nodes, workloads, profile="coscheduling")
    first = min(r["time_s"] for r in rows if r["event"] == "timed_out" and r["workload_id"] == "gang")
    assert first == timed_out_at
    message = next(r["message"] for r in rows if r["event"] == "timed_out" and r["workload_id"] == "gang")
    assert f"within {timed_out_at - 1:g}s" in message


def test_a_timeout_that_is_not_positive_quarantines_the_row_with_its_reason(tmp_path):
    replay_rows(tmp_path, [node("n1")], [job("gang", 1, 500, pods=2, gpus=1, schedule_timeout_s=0)],
                profile="coscheduling")
    rejected = (tmp_path / "run" / "rejected.csv").read_text().splitlines()
    assert rejected[1] == '2,gang,schedule_timeout_s,"must be > 0 when given, got 0"'
