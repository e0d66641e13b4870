"""Hand-made runs, one behaviour each (horizon 2 h unless said, hourly charge periods).

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
        .event(2000, "preempted", "w1", pod=0, node="n1", gpus=2, reason="preempted-by:w2", preemptor="w2")
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




def kueue_quota_and_borrowing() -> RunBuilder:
    # One 8-GPU A100 node, Kueue queues cq-a (nominal 4, may borrow 4) and cq-b (nominal 4).
    # w1 (cq-a, 4 GPUs) runs 0..3600 on nominal quota. w2 (cq-a, 4 GPUs) waits for quota
    # 0..600 while 4 GPUs are free (idle: quota), is admitted Borrowing at 600 and runs to 4200.
    # w3 (cq-b, 2 GPUs) waits for quota from 1200 to the end: 2 of the free GPUs are `quota`.
    return (
        RunBuilder(START, 7200, run_id="kueue")
        .node("n1", "A100", 8)
        .cluster_queue("cq-a", "a100", 4, borrowing_limit=4)
        .cluster_queue("cq-b", "a100", 4, borrowing_limit=0)
        .workload("w1", pods=1, gpus_per_pod=4, tenant="team-a", queue="lq-a")
        .workload("w2", pods=1, gpus_per_pod=4, tenant="team-a", queue="lq-a")
        .workload("w3", pods=1, gpus_per_pod=2, tenant="team-b", queue="lq-b", submit_time_s=1200)
        .event(0, "submitted", "w1", cluster_queue="cq-a")
        .event(0, "admitted", "w1", cluster_queue="cq-a", flavor="a100")
        .event(0, "started", "w1", pod=0, node="n1", gpus=4)
        .event(0, "submitted", "w2", cluster_queue="cq-a")
        .event(0, "pending", "w2", reason="WaitingForQuota", cluster_queue="cq-a",
               message="insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed")
        .event(600, "admitted", "w2", reason="Borrowing", cluster_queue="cq-a", flavor="a100")
        .event(600, "started", "w2", pod=0, node="n1", gpus=4)
        .event(1200, "submitted", "w3", cluster_queue="cq-b")
        .event(1200, "pending", "w3", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=4)
        .event(4200, "finished", "w2", pod=0, node="n1", gpus=4)
    )


def cpu_and_memory() -> RunBuilder:
    # An A100 node with 32 cores and 256 GiB, and a CPU-only node with 16 cores and 64 GiB.
    # w1 (2 GPUs, 8 cores, 64 GiB) runs on the GPU node for the first hour. The price book's
    # default CPU and memory rows cost both nodes.
    return (
        RunBuilder(START, 7200, run_id="cpu-memory")
        .node("g1", "A100", 8, cpu_milli=32000, memory_mib=262144)
        .node("c1", None, 0, cpu_milli=16000, memory_mib=65536, rack="r2")
        .workload("w1", pods=1, gpus_per_pod=2, cpu_milli_per_pod=8000, memory_mib_per_pod=65536)
        .event(0, "submitted", "w1")
        .event(0, "started", "w1", pod=0, node="g1", gpus=2)
        .event(3600, "finished", "w1", pod=0, node="g1", gpus=2)
    )


def mixed_idle_causes() -> RunBuilder:
    # One hour on one 8-GPU node. Gang g (2 × 2 GPUs) reserves pod 0 at 0 and waits for pod 1
    # until its time-out at 1800, then queues again. wq (4 GPUs) waits for quota all hour;
    # wp (8 GPUs) cannot be placed all hour. Free GPUs go to the gang's missing pod first
    # (2), then quota (4), then placement: 0..1800 6 free = 2 + 4 + 0; 1800..3600 8 free =
    # 0 + 4 + 4 (g and wp want 12).
    return (
        RunBuilder(START, 3600, run_id="mixed-causes")
        .node("n1", "A100", 8)
        .workload("g", pods=2, gpus_per_pod=2, tenant="team-a")
        .workload("wq", pods=1, gpus_per_pod=4, tenant="team-b")
        .workload("wp", pods=1, gpus_per_pod=8, tenant="team-c")
        .event(0, "submitted", "g")
        .event(0, "reserved", "g", pod=0, node="n1", gpus=2)
        .event(0, "pending", "g", reason="WaitingForGang", message="1/2 pods reserved")
        .event(0, "submitted", "wq")
        .event(0, "pending", "wq", reason="WaitingForQuota")
        .event(0, "submitted", "wp")
        .event(0, "pending", "wp", reason="Unschedulable")
        .event(1800, "timed_out", "g", pod=0, node="n1", gpus=2, reason="GangTimeout")
        .event(1800, "requeued", "g")
        .event(1800, "pending", "g", reason="GangNotSatisfiable")
    )


ALL = (
    finished_gang,
    preempted_with_checkpoints,
    pod_by_pod_timeout,
    reserved_then_started,
    fractional_sharing,
    past_horizon,
    kueue_quota_and_borrowing,
    cpu_and_memory,
    mixed_idle_causes,
)
