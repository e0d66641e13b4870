"""Coscheduling's queue order after a PodGroup fails: by the time of its last failure.

Upstream: scheduler-plugins afaa22f ("Fix head-of-line blocking in coscheduling QueueSort",
in v0.34.7 and v0.35.x): `core.go` `GetCreationTimestamp` returns the PodGroup's last
scheduling failure (`MarkPodGroupScheduleFailure`, called from `PostFilter` when it rejects the
group and from `Unreserve` when a waiting pod is rejected or times out at Permit), cleared by
`Permit` once quorum is reached (`ClearPodGroupScheduleFailure`), kept 30 minutes
(`lastFailedSchedulePG`, go-cache). `coscheduling.go` `Less` compares those timestamps among
equal priorities.

Story: "gang" (10 pods x 1 GPU, minMember 10, created at 1) gets 9 of its pods reserved on
n1 and n3 and waits at Permit for its tenth, which needs a GPU of n2, held by "holder" until
200. Within the 10 % reject threshold it waits the 60 s Permit timeout, times out, backs off
and waits again, over and over: each time-out marks the group failed. "single" (1 pod x 8
H100 GPUs, created at 30) also waits for n2. When n2 frees at 200, the former replay (by
creation time) served the gang first: its tenth pod took one GPU of n2, the gang started and
single waited on. Now the gang's timestamp is its last time-out (after 30): single goes first
and takes n2; the gang's tenth pod finds no GPU left.
"""

from __future__ import annotations

from tests.scheduler.scenario import job, node, replay_rows


def _started(rows):
    return {(r["workload_id"], r["time_s"]) for r in rows if r["event"] == "started"}


def test_a_podgroup_that_timed_out_at_permit_sorts_by_its_failure_time(tmp_path):
    nodes = [node("n1"), node("n2", model="H100"), node("n3", gpus=1)]
    workloads = [job("holder", 0, 200, model="H100"),
                 job("gang", 1, 500, pods=10, gpus=1),
                 job("single", 30, 100, model="H100")]
    rows = replay_rows(tmp_path, nodes, workloads, profile="coscheduling")
    started_at_200 = sorted({w for w, t in _started(rows) if t == 200.0})
    assert started_at_200 == ["single"]
    timeouts = [r["time_s"] for r in rows if r["event"] == "timed_out" and r["workload_id"] == "gang"
                and r["reason"] == "GangPermitTimeout"]
    assert timeouts and min(timeouts) == 61.0


def test_the_failure_record_lives_30_minutes_and_quorum_clears_it():
    from scheduler.workload_run import WorkloadRun
    from tests.scheduler.builders import make_workload

    run = WorkloadRun.of(make_workload("w").at(5).pods(2).obj(), 0)
    assert run.group_timestamp_s(10.0) == 5.0
    run.group_failed_s = 100.0
    assert (run.group_timestamp_s(100.0), run.group_timestamp_s(1899.0), run.group_timestamp_s(1900.0)) == (100.0, 100.0, 5.0)
