"""Hand-made runs, one behaviour each (horizon 2 h, hourly charge periods).

Every scenario is its own run id, so one build holds them all (and doubles as the
"several runs in one database" case).
"""

from __future__ import annotations

from runs import RunBuilder

START = "2026-11-02T00:00:00Z"


def finished_gang() -> RunBuilder:
    # two pods × 4 GPUs run 30 min and finish: all productive
    return (
        RunBuilder(START, 7200, run_id="finished-gang")
        .node("n1", "A100", 8)
        .workload("w1", pods=2, gpus_per_pod=4, tenant="team-a")
        .event(0, "submitted", "w1")
        .event(0, "admitted", "w1", cluster_queue="cq-a")
        .event(0, "started", "w1", pod=0, node="n1", gpus=4)
        .event(0, "started", "w1", pod=1, node="n1", gpus=4)
        .event(1800, "finished", "w1", pod=0, node="n1", gpus=4)
        .event(1800, "finished", "w1", pod=1, node="n1", gpus=4)
    )


def preempted_with_checkpoints() -> RunBuilder:
    # w1 (2 GPUs, checkpoint every 600 s) runs from 0, is preempted at 2000 by w2:
    # productive 0..1800, lost 1800..2000; then w1 waits (demand 2) while 2 GPUs are free
    return (
        RunBuilder(START, 7200, run_id="preempted")
        .node("n1", "A100", 8)
        .workload("w1", pods=1, gpus_per_pod=2, checkpoint_interval_s=600, tenant="team-a")
        .workload("w2", pods=1, gpus_per_pod=6, priority=10, tenant="team-b", submit_time_s=1990)
        .event(0, "submitted", "w1")
        .event(0, "started", "w1", pod=0, node="n1", gpus=2)
        .event(1990, "submitted", "w2")
        .event(1990, "pending", "w2", reason="Unschedulable", message="0/1 nodes: 2 GPUs free")
        .event(2000, "preempted", "w1", pod=0, node="n1", gpus=2, reason="preempted-by:w2")
        .event(2000, "requeued", "w1")
        .event(2000, "started", "w2", pod=0, node="n1", gpus=6)
        .event(2000, "pending", "w1", reason="Unschedulable", message="0/1 nodes: 2 GPUs free")
        .event(5000, "finished", "w2", pod=0, node="n1", gpus=6)
    )


def pod_by_pod_timeout() -> RunBuilder:
    # kube-default: 2 of 3 pods start one by one, the gang never completes and times out
    return (
        RunBuilder(START, 7200, run_id="pod-by-pod")
        .node("n1", "A100", 8)
        .workload("w1", pods=3, gpus_per_pod=4, tenant="team-a")
        .event(0, "submitted", "w1")
        .event(100, "started", "w1", pod=0, node="n1", gpus=4)
        .event(200, "started", "w1", pod=1, node="n1", gpus=4)
        .event(1300, "timed_out", "w1", pod=0, node="n1", gpus=4, reason="GangNotSatisfiable")
        .event(1300, "timed_out", "w1", pod=1, node="n1", gpus=4, reason="GangNotSatisfiable")
        .event(1300, "requeued", "w1")
    )


def reserved_then_started() -> RunBuilder:
    # pod 0 reserves at 0, pod 1 at 600 completes the gang: both start at 600 and run
    # across the hour boundary until 4200
    return (
        RunBuilder(START, 7200, run_id="reserved")
        .node("n1", "H100", 8, pricing_category="Committed")
        .workload("w1", pods=2, gpus_per_pod=2, tenant="team-c", queue=None)
        .event(0, "submitted", "w1")
        .event(0, "reserved", "w1", pod=0, node="n1", gpus=2)
        .event(0, "pending", "w1", reason="WaitingForGang", message="1/2 pods reserved")
        .event(600, "reserved", "w1", pod=1, node="n1", gpus=2)
        .event(600, "started", "w1", pod=0, node="n1", gpus=2)
        .event(600, "started", "w1", pod=1, node="n1", gpus=2)
        .event(4200, "finished", "w1", pod=0, node="n1", gpus=2)
        .event(4200, "finished", "w1", pod=1, node="n1", gpus=2)
    )


def fractional_sharing() -> RunBuilder:
    # 0.25 + 0.5 of one T4 on a spot node for the first hour: 0.25 GPU-hours idle
    return (
        RunBuilder(START, 7200, run_id="fractional")
        .node("n1", "T4", 1, pricing_category="Dynamic")
        .workload("w1", pods=1, gpus_per_pod=0.25, gpu_model="T4", kind="inference")
        .workload("w2", pods=1, gpus_per_pod=0.5, gpu_model="T4", kind="notebook", tenant="team-b")
        .event(0, "submitted", "w1")
        .event(0, "submitted", "w2")
        .event(0, "started", "w1", pod=0, node="n1", gpus=0.25)
        .event(0, "started", "w2", pod=0, node="n1", gpus=0.5)
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=0.25)
        .event(3600, "finished", "w2", pod=0, node="n1", gpus=0.5)
    )


def past_horizon() -> RunBuilder:
    # starts in the second hour and still runs when the window closes
    return (
        RunBuilder(START, 7200, run_id="past-horizon")
        .node("n1", "A100", 8)
        .workload("w1", pods=1, gpus_per_pod=8, submit_time_s=3000)
        .event(3000, "submitted", "w1")
        .event(3600, "started", "w1", pod=0, node="n1", gpus=8)
    )


ALL = (
    finished_gang,
    preempted_with_checkpoints,
    pod_by_pod_timeout,
    reserved_then_started,
    fractional_sharing,
    past_horizon,
)
