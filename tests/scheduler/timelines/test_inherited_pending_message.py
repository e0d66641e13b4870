"""A newcomer to a parked GPU shape says why it waits in its own words.

Upstream: kube-scheduler writes each pod's FailedScheduling event from that pod's own
attempt (`schedule_one.go` `handleSchedulingFailure`: the FitError of the pod, and
scheduler-plugins' gang count is of the pod's own PodGroup). The replay does not retry a
newcomer whose shape is parked (it would fail the same way) and copies the shape's
diagnosis onto its row; the former replay copied the whole row of the workload that parked
the shape: "pod 9: …; 9 of 10 pods of the group placed" on a one-pod workload's row.
"""

from __future__ import annotations

from tests.scheduler.scenario import job, node, replay_rows


def test_the_inherited_row_names_the_newcomers_own_pod_and_group(tmp_path):
    nodes = [node("n1"), node("n2", model="H100"), node("n3", gpus=1)]
    workloads = [job("holder", 0, 200, model="H100"), job("gang", 1, 500, pods=10, gpus=1),
                 job("w", 5, 100, gpus=1)]
    rows = replay_rows(tmp_path, nodes, workloads, profile="coscheduling")
    gang_rows = [r["message"] for r in rows if r["workload_id"] == "gang" and r["event"] == "pending"
                 and r["reason"] == "Unschedulable"]
    assert gang_rows[0].startswith("pod 9: ") and gang_rows[0].endswith("; 9 of 10 pods of the group placed")
    first = next(r for r in rows if r["workload_id"] == "w" and r["event"] == "pending")
    assert first["time_s"] == 5.0 and first["reason"] == "Unschedulable"
    assert first["message"] == "pod 0: " + gang_rows[0].removeprefix("pod 9: ").removesuffix(
        "; 9 of 10 pods of the group placed")
