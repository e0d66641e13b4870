"""Hand-made runs, one behaviour each (horizon 2 h unless said, hourly charge periods).

Every scenario is its own run id, so one build holds them all (and doubles as the
"several runs in one database" case).
"""

from __future__ import annotations

from runs import RunBuilder
from scenarios_causes import ALL as CAUSE_RULES

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


def mig_partitions() -> RunBuilder:
    # one H100 published through DRA as a whole device and MIG slices (docs/dra.md); a 1g.10gb
    # slice (0.142 of the GPU) runs the first hour: the rest of the split GPU, 0.858 GPU-hours,
    # is partition fragmentation, not shared-device slack; the second hour nobody asks for it
    return (
        RunBuilder(START, 7200, run_id="mig")
        .node("n1", "H100", 1)
        .device("n1", "gpu-0", 0, 1000, False)
        .device("n1", "gpu-0-mig-1g.10gb-0", 0, 142, True, "1g.10gb")
        .device("n1", "gpu-0-mig-1g.10gb-1", 0, 142, True, "1g.10gb")
        .workload("w1", pods=1, gpus_per_pod=0.0, gpu_model="H100", kind="notebook")
        .event(0, "submitted", "w1")
        .event(0, "started", "w1", pod=0, node="n1", gpus=0.142)
        .takes("gpu-0-mig-1g.10gb-0", 142, True, "1g.10gb", claim="mig-1g")
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=0.142)
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
    # (2), then placement, then quota: 0..1800 6 free = 2 + 4 + 0; 1800..3600 8 free =
    # 0 + 8 + 0 (g and wp want 12): a failed placement is what the free GPUs wait for.
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


# --- Cost attribution II (docs/cost-model.md §3 and §6): one rule each ---------------------------


def unservable_beside_quota() -> RunBuilder:
    # One hour, two 8-GPU A100 nodes; cq-a (team-a) and cq-b (team-b) own 4 GPUs each and may not
    # borrow. w_run (team-b) holds 4 GPUs all hour; w_a1 (team-a) holds 4 until 1800, so w_q
    # (team-a, 2 GPUs) waits for quota 0..1800 beside 8 free GPUs: 2 × 0.5 h = 1 GPU-hour of
    # `quota` idle. w_big (8 GPUs in cq-a) can never be admitted (ExceedsMaxQuota), w_wide is
    # rejected (LargerThanCluster), w_never asks 6 of cq-a's 4 with no attempt yet (the quota
    # table tells), w_t4 asks a GPU model the cluster does not have: none of them is demand.
    return (
        RunBuilder(START, 3600, run_id="unservable")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .cluster_queue("cq-a", "a100", 4, borrowing_limit=0)
        .cluster_queue("cq-b", "a100", 4, borrowing_limit=0)
        .workload("w_run", gpus_per_pod=4, tenant="team-b", queue="lq-b")
        .workload("w_a1", gpus_per_pod=4, tenant="team-a", queue="lq-a")
        .workload("w_q", gpus_per_pod=2, tenant="team-a", queue="lq-a", duration_s=1800)
        .workload("w_big", gpus_per_pod=8, tenant="team-a", queue="lq-a")
        .workload("w_wide", pods=3, gpus_per_pod=8, tenant="team-b", queue="lq-b", duration_s=7200)
        .workload("w_never", pods=3, gpus_per_pod=2, tenant="team-a", queue="lq-a")
        .workload("w_t4", gpus_per_pod=1, gpu_model="T4", tenant="team-b", queue="lq-b")
        .event(0, "submitted", "w_run", cluster_queue="cq-b")
        .event(0, "admitted", "w_run", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "w_run", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "w_a1", cluster_queue="cq-a")
        .event(0, "admitted", "w_a1", cluster_queue="cq-a", flavor="a100")
        .event(0, "started", "w_a1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "w_q", cluster_queue="cq-a")
        .event(0, "pending", "w_q", reason="WaitingForQuota", cluster_queue="cq-a",
               queue_position=1, queue_length=1)
        .event(0, "submitted", "w_big", cluster_queue="cq-a")
        .event(0, "pending", "w_big", reason="ExceedsMaxQuota", cluster_queue="cq-a")
        .event(0, "submitted", "w_wide")
        .event(0, "rejected", "w_wide", reason="LargerThanCluster")
        .event(0, "submitted", "w_never", cluster_queue="cq-a")
        .event(0, "submitted", "w_t4", cluster_queue="cq-b")
        .event(1800, "finished", "w_a1", pod=0, node="a1", gpus=4)
        .event(1800, "admitted", "w_q", cluster_queue="cq-a", flavor="a100")
        .event(1800, "started", "w_q", pod=0, node="a2", gpus=2)
        .event(3600, "finished", "w_run", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "w_q", pod=0, node="a2", gpus=2)
    )


def multi_model_demand() -> RunBuilder:
    # One hour. Two A100 nodes half held (4 free on each) and an H100 node half held (4 free):
    # w_x (one pod of 8 GPUs, A100 or H100) fits nowhere for the whole hour. Its 8 GPUs count
    # once, split over the models by their free GPUs (8 A100, 4 H100): fragmentation 16/3 GPU-h
    # on A100 and 8/3 on H100, 8 in all (counted per model it would be 12).
    return (
        RunBuilder(START, 3600, run_id="multi-model")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .node("h1", "H100", 8, rack="r3")
        .workload("fa1", gpus_per_pod=4, gpu_model="A100")
        .workload("fa2", gpus_per_pod=4, gpu_model="A100")
        .workload("fh1", gpus_per_pod=4, gpu_model="H100")
        .workload("w_x", gpus_per_pod=8, gpu_model="A100|H100", tenant="team-b")
        .event(0, "submitted", "fa1")
        .event(0, "started", "fa1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "fa2")
        .event(0, "started", "fa2", pod=0, node="a2", gpus=4)
        .event(0, "submitted", "fh1")
        .event(0, "started", "fh1", pod=0, node="h1", gpus=4)
        .event(0, "submitted", "w_x")
        .event(0, "pending", "w_x", reason="Unschedulable", message="0/3 nodes have 8 free GPUs")
    )


def barrier_on_its_model() -> RunBuilder:
    # One hour, an A100 node and an H100 node. Gang g (2 pods × 4 GPUs, any model) reserves pod 0
    # on the A100 node at 0 and waits at the barrier until its time-out at 1800; w_fill holds 2
    # A100 GPUs. Its missing 4 GPUs are asked on A100 only, where 2 are free: gang_barrier
    # 2 × 0.5 h = 1 GPU-h on A100 and none on H100. Then g waits for placement (8 GPUs, any
    # model) beside 6 free A100 and 8 free H100 GPUs: fragmentation 8 × 0.5 h, split 6:8.
    return (
        RunBuilder(START, 3600, run_id="barrier-model", profile="gang-v1.35")
        .node("a1", "A100", 8)
        .node("h1", "H100", 8, rack="r2")
        .workload("g", pods=2, gpus_per_pod=4, tenant="team-d")
        .workload("w_fill", gpus_per_pod=2, gpu_model="A100")
        .event(0, "submitted", "w_fill")
        .event(0, "started", "w_fill", pod=0, node="a1", gpus=2)
        .event(0, "submitted", "g")
        .event(0, "reserved", "g", pod=0, node="a1", gpus=4)
        .event(0, "pending", "g", reason="WaitingForGang", message="1/2 pods reserved")
        .event(1800, "timed_out", "g", pod=0, node="a1", gpus=4, reason="GangPermitTimeout")
        .event(1800, "requeued", "g")
        .event(1800, "pending", "g", reason="GangNotSatisfiable")
    )


def reclaim_within_cohort() -> RunBuilder:
    # One hour on a 12-GPU A100 node. cq-b (team-b, nominal 4, may borrow 4) runs w_o (4 GPUs,
    # all hour) and w_v (4 GPUs, checkpoint every 600 s) from 0: 4 GPUs above its nominal quota
    # until 2000, when team-a's w_r (cq-a, nominal 4) reclaims them: w_v loses 1800..2000 (4 ×
    # 200 s, $0.44 at the A100 list price) to w_r. w_r waits 1990..2000 for the preempted pod
    # to drain beside 4 free GPUs: scheduling_latency 4 × 10 s.
    return (
        RunBuilder(START, 3600, run_id="reclaim")
        .node("n1", "A100", 12)
        .cluster_queue("cq-a", "a100", 4, borrowing_limit=0)
        .cluster_queue("cq-b", "a100", 4, borrowing_limit=4)
        .workload("w_o", gpus_per_pod=4, tenant="team-b", queue="lq-b")
        .workload("w_v", gpus_per_pod=4, tenant="team-b", queue="lq-b", checkpoint_interval_s=600)
        .workload("w_r", gpus_per_pod=4, tenant="team-a", queue="lq-a", submit_time_s=1990)
        .event(0, "submitted", "w_o", cluster_queue="cq-b")
        .event(0, "admitted", "w_o", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "w_o", pod=0, node="n1", gpus=4)
        .event(0, "submitted", "w_v", cluster_queue="cq-b")
        .event(0, "admitted", "w_v", reason="Borrowing", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "w_v", pod=0, node="n1", gpus=4)
        .event(1990, "submitted", "w_r", cluster_queue="cq-a")
        .event(1990, "pending", "w_r", reason="WaitingForPreemptedWorkloads", cluster_queue="cq-a")
        .event(2000, "preempted", "w_v", pod=0, node="n1", gpus=4, reason="preempted-by:w_r",
               preemptor="w_r")
        .event(2000, "requeued", "w_v", reason="Preempted", preemptor="w_r")
        .event(2000, "pending", "w_v", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(2000, "admitted", "w_r", cluster_queue="cq-a", flavor="a100")
        .event(2000, "started", "w_r", pod=0, node="n1", gpus=4)
    )


def window_showback() -> RunBuilder:
    # Two hours; A100 nodes a1 and a2 ($2 a GPU-hour), an H100 node h1 ($4). team-a's w_a holds 4
    # GPUs of a1 in hour 0 only; team-b's w_b 4 GPUs of h1 in hour 1 only. By window a team
    # carries the idle of the cells (hour × GPU model) it used: team-a the A100 idle of hour 0
    # (12 GPU-h, $24), team-b the H100 idle of hour 1 (4 GPU-h, $16); the platform keeps the
    # H100 idle of hour 0 and the A100 idle of hour 1. By node, a2 (used by nobody) stays idle.
    return (
        RunBuilder(START, 7200, run_id="window")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .node("h1", "H100", 8, rack="r3")
        .workload("w_a", gpus_per_pod=4, gpu_model="A100", tenant="team-a")
        .workload("w_b", gpus_per_pod=4, gpu_model="H100", tenant="team-b", submit_time_s=3600)
        .event(0, "submitted", "w_a")
        .event(0, "started", "w_a", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "w_a", pod=0, node="a1", gpus=4)
        .event(3600, "submitted", "w_b")
        .event(3600, "started", "w_b", pod=0, node="h1", gpus=4)
        .event(7200, "finished", "w_b", pod=0, node="h1", gpus=4)
    )


def cause_owners() -> RunBuilder:
    # One hour on a 12-GPU A100 node. cq-a (team-a) owns 6 GPUs of quota and uses 1 (w_a); cq-b
    # (team-b) owns 2 and runs w_b (2 GPUs) all hour, so w_q (team-b, 2 GPUs) waits for quota.
    # team-c's notebook holds half a GPU (half a GPU of shared-device slack); team-d's gang g
    # holds one reserved pod of two (2 GPUs each) at the barrier. Free: 12 − 5.5 held − 0.5 slack
    # = 6: gang_barrier 2, quota 2, no_demand 2 GPU-h. Cause-aware: the barrier to team-d, quota
    # to team-a (who left 5 GPUs of its nominal quota unused), slack to team-c, no_demand to the
    # platform.
    return (
        RunBuilder(START, 3600, run_id="cause-owners", profile="gang-v1.35")
        .node("n1", "A100", 12)
        .cluster_queue("cq-a", "a100", 6, borrowing_limit=0)
        .cluster_queue("cq-b", "a100", 2, borrowing_limit=0)
        .workload("w_a", gpus_per_pod=1, tenant="team-a", queue="lq-a")
        .workload("w_b", gpus_per_pod=2, tenant="team-b", queue="lq-b")
        .workload("w_q", gpus_per_pod=2, tenant="team-b", queue="lq-b")
        .workload("w_f", gpus_per_pod=0.5, tenant="team-c", queue=None, kind="notebook")
        .workload("g", pods=2, gpus_per_pod=2, tenant="team-d", queue=None)
        .event(0, "submitted", "w_a", cluster_queue="cq-a")
        .event(0, "admitted", "w_a", cluster_queue="cq-a", flavor="a100")
        .event(0, "started", "w_a", pod=0, node="n1", gpus=1)
        .event(0, "submitted", "w_b", cluster_queue="cq-b")
        .event(0, "admitted", "w_b", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "w_b", pod=0, node="n1", gpus=2)
        .event(0, "submitted", "w_q", cluster_queue="cq-b")
        .event(0, "pending", "w_q", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(0, "submitted", "w_f")
        .event(0, "started", "w_f", pod=0, node="n1", gpus=0.5)
        .event(0, "submitted", "g")
        .event(0, "reserved", "g", pod=0, node="n1", gpus=2)
        .event(0, "pending", "g", reason="WaitingForGang")
        .event(3600, "finished", "w_a", pod=0, node="n1", gpus=1)
        .event(3600, "finished", "w_b", pod=0, node="n1", gpus=2)
        .event(3600, "finished", "w_f", pod=0, node="n1", gpus=0.5)
    )


def phases() -> RunBuilder:
    # Twelve hours; submissions at 0 and 10.5 h: the warm-up is hour 0 (it ends by 0 + a tenth of
    # the 10.5 h window), the drain starts at 11 h (the end of the hour of the last submission).
    return (
        RunBuilder(START, 12 * 3600, run_id="phases")
        .node("n1", "A100", 8)
        .workload("w1", gpus_per_pod=1)
        .workload("w2", gpus_per_pod=1, submit_time_s=37800)
        .event(0, "submitted", "w1")
        .event(0, "started", "w1", pod=0, node="n1", gpus=1)
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=1)
        .event(37800, "submitted", "w2")
        .event(37800, "started", "w2", pod=0, node="n1", gpus=1)
        .event(41400, "finished", "w2", pod=0, node="n1", gpus=1)
    )


def delay_window() -> RunBuilder:
    # Twelve hours on an 8-GPU A100 node ($2 list), the phases of `phases`: warm-up hour 0,
    # drain from 11 h (the last submission at 10.5 h). wa (team-a, 2 GPUs) waits for quota
    # through hour 0 (2 GPU-h pending in the warm-up) and runs 1-2 h; wb (team-b, 2 GPUs) waits
    # 10.5-11 h (1 GPU-h pending in the steady window) and runs in the drain. Free GPUs beside
    # both waits: nothing is capped. Steady window (hours 1-10): cost of delay 1 × $2; idle
    # 10 × 8 − 2 = 78 GPU-h × $2 = $156.
    return (
        RunBuilder(START, 12 * 3600, run_id="delay-window")
        .node("n1", "A100", 8)
        .workload("wa", gpus_per_pod=2, tenant="team-a", duration_s=3600)
        .workload("wb", gpus_per_pod=2, tenant="team-b", submit_time_s=37800, duration_s=1800)
        .event(0, "submitted", "wa")
        .event(0, "pending", "wa", reason="WaitingForQuota")
        .event(3600, "started", "wa", pod=0, node="n1", gpus=2)
        .event(7200, "finished", "wa", pod=0, node="n1", gpus=2)
        .event(37800, "submitted", "wb")
        .event(37800, "pending", "wb", reason="WaitingForQuota")
        .event(39600, "started", "wb", pod=0, node="n1", gpus=2)
        .event(41400, "finished", "wb", pod=0, node="n1", gpus=2)
    )


def commitment_pool() -> RunBuilder:
    # One hour, three H100 nodes: c1 and c2 Committed (one pool: gpu-h100, 16 GPU-h at $3), s1
    # Standard ($4). w_c holds all of c1, w_s 4 GPUs of s1 while c2 sits idle: utilization 8/16,
    # coverage 8 / (8 + 4), and the 4 on-demand GPU-hours the idle commitment could have
    # carried. Idle: c2's 8 GPU-h are sunk ($24), s1's 4 avoidable ($16).
    return (
        RunBuilder(START, 3600, run_id="pool")
        .node("c1", "H100", 8, pricing_category="Committed")
        .node("c2", "H100", 8, pricing_category="Committed", rack="r2")
        .node("s1", "H100", 8, rack="r3")
        .workload("w_c", gpus_per_pod=8, gpu_model="H100")
        .workload("w_s", gpus_per_pod=4, gpu_model="H100", tenant="team-b")
        .event(0, "submitted", "w_c")
        .event(0, "started", "w_c", pod=0, node="c1", gpus=8)
        .event(0, "submitted", "w_s")
        .event(0, "started", "w_s", pod=0, node="s1", gpus=4)
        .event(3600, "finished", "w_c", pod=0, node="c1", gpus=8)
        .event(3600, "finished", "w_s", pod=0, node="s1", gpus=4)
    )


def gpu_efficiency() -> RunBuilder:
    # w1: 1 pod × 8 A100 for 1 h at a measured 25 % engine-active: 2 active, 6 allocated idle.
    # w2: the same on the other node without a measurement: 8 unmeasured, no split.
    return (
        RunBuilder(START, 7200, run_id="gpu-efficiency")
        .node("n1", "A100", 8)
        .node("n2", "A100", 8)
        .workload("w1", pods=1, gpus_per_pod=8, tenant="team-a", kind="training", gpu_utilization=0.25)
        .workload("w2", pods=1, gpus_per_pod=8, tenant="team-b", kind="notebook")
        .event(0, "submitted", "w1")
        .event(0, "submitted", "w2")
        .event(0, "started", "w1", pod=0, node="n1", gpus=8)
        .event(0, "started", "w2", pod=0, node="n2", gpus=8)
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=8)
        .event(3600, "finished", "w2", pod=0, node="n2", gpus=8)
    )


def commitment_pool_spot() -> RunBuilder:
    # One hour, three H100 nodes: c1 Committed, s1 Standard, p1 spot (Dynamic). w_c holds 6 GPUs
    # of c1 (2 Unused), w_s 2 of s1, w_p all 8 of p1. Coverage on usage: 6 covered ÷ (6 + 2)
    # eligible = 0.75 (spot usage and the 2 Unused GPU-h are not eligible usage); on capacity it
    # would be 8 ÷ 16 = 0.5, with spot usage counted 6 ÷ 16. Utilization 6 ÷ 8 on the same rows.
    return (
        RunBuilder(START, 3600, run_id="pool-spot")
        .node("c1", "H100", 8, pricing_category="Committed")
        .node("s1", "H100", 8, pricing_category="Standard", rack="r2")
        .node("p1", "H100", 8, pricing_category="Dynamic", rack="r3")
        .workload("w_c", gpus_per_pod=6, gpu_model="H100")
        .workload("w_s", gpus_per_pod=2, gpu_model="H100", tenant="team-b")
        .workload("w_p", gpus_per_pod=8, gpu_model="H100", tenant="team-c")
        .event(0, "submitted", "w_c")
        .event(0, "started", "w_c", pod=0, node="c1", gpus=6)
        .event(0, "submitted", "w_s")
        .event(0, "started", "w_s", pod=0, node="s1", gpus=2)
        .event(0, "submitted", "w_p")
        .event(0, "started", "w_p", pod=0, node="p1", gpus=8)
        .event(3600, "finished", "w_c", pod=0, node="c1", gpus=6)
        .event(3600, "finished", "w_s", pod=0, node="s1", gpus=2)
        .event(3600, "finished", "w_p", pod=0, node="p1", gpus=8)
    )


def commitment_pool_moved() -> RunBuilder:
    # The pool run with w_s on the idle Committed c2 instead of the on-demand s1: the same
    # capacity is paid for, so the effective savings rate is the same (1/6).
    pool = commitment_pool()
    moved = RunBuilder(START, 3600, run_id="pool-moved")
    moved.nodes, moved.workloads = pool.nodes, pool.workloads
    for event in pool.events:
        moved.event(event["time_s"], event["event"], event["workload_id"], pod=event["pod_index"],
                    node="c2" if event["node"] == "s1" else event["node"], gpus=event["gpus"])
    return moved


# --- Cost attribution III (docs/cost-model.md §3.1): quota only where it kept GPUs from work ----


def admitted_unplaced() -> RunBuilder:
    # One hour, two 8-GPU A100 nodes, each half held by a filler (8 GPUs free, 4 a node). Kueue
    # admitted gang g (2 × 8 GPUs, cq-a) at 0 and its placement fails all hour
    # (GangNotSatisfiable): its quota is reserved, the 8 free GPUs wait for its placement:
    # fragmentation 8 GPU-h. w_q (cq-b, 1 × 4 GPUs, which would fit) waits for quota beside
    # them: no quota idle (quota first, it claimed 4 GPU-h of them).
    return (
        RunBuilder(START, 3600, run_id="admitted-unplaced")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .cluster_queue("cq-a", "a100", 16, borrowing_limit=0)
        .cluster_queue("cq-b", "a100", 8, borrowing_limit=0)
        .workload("f1", gpus_per_pod=4, tenant="team-b", queue="lq-b")
        .workload("f2", gpus_per_pod=4, tenant="team-b", queue="lq-b")
        .workload("g", pods=2, gpus_per_pod=8, tenant="team-a", queue="lq-a")
        .workload("w_q", gpus_per_pod=4, tenant="team-b", queue="lq-b")
        .event(0, "submitted", "f1", cluster_queue="cq-b")
        .event(0, "admitted", "f1", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "f1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "f2", cluster_queue="cq-b")
        .event(0, "admitted", "f2", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "f2", pod=0, node="a2", gpus=4)
        .event(0, "submitted", "g", cluster_queue="cq-a")
        .event(0, "admitted", "g", cluster_queue="cq-a", flavor="a100")
        .event(0, "pending", "g", reason="GangNotSatisfiable", message="0 of 2 required pods placed")
        .event(0, "submitted", "w_q", cluster_queue="cq-b")
        .event(0, "pending", "w_q", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(3600, "finished", "f1", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "f2", pod=0, node="a2", gpus=4)
    )


def quota_fit() -> RunBuilder:
    # One hour, two 8-GPU A100 nodes each half held (8 free, 4 a node). Waiting for quota:
    # w_big (1 × 8 GPUs) fits on no node and w_wide (3 × 4) does not either (two of its pods
    # fit), all hour; w_gang (2 × 4), waiting from 1800, fits one pod a node. Quota: 0 in the
    # first half hour (no_demand 4 GPU-h), 8 × 0.5 h = 4 GPU-h in the second (before the fit
    # test: min(8 free, demand) all hour, 8 GPU-h). An H100 node is half held too: w_any
    # (3 × 4, A100 or H100) fits three pods across the models but one model at a time at most
    # two (Kueue gives a workload one flavor): no quota idle, the free H100s are no_demand.
    return (
        RunBuilder(START, 3600, run_id="quota-fit")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .node("h1", "H100", 8, rack="r3")
        .workload("f1", gpus_per_pod=4, queue=None)
        .workload("f2", gpus_per_pod=4, queue=None)
        .workload("f3", gpus_per_pod=4, queue=None)
        .workload("w_any", pods=3, gpus_per_pod=4, gpu_model="A100|H100", tenant="team-b")
        .workload("w_big", gpus_per_pod=8, tenant="team-b")
        .workload("w_gang", pods=2, gpus_per_pod=4, tenant="team-b")
        .workload("w_wide", pods=3, gpus_per_pod=4, tenant="team-b")
        .event(0, "submitted", "f1")
        .event(0, "started", "f1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "f2")
        .event(0, "started", "f2", pod=0, node="a2", gpus=4)
        .event(0, "submitted", "f3")
        .event(0, "started", "f3", pod=0, node="h1", gpus=4)
        .event(0, "submitted", "w_any")
        .event(0, "pending", "w_any", reason="WaitingForQuota")
        .event(0, "submitted", "w_big")
        .event(0, "pending", "w_big", reason="WaitingForQuota")
        .event(0, "submitted", "w_wide")
        .event(0, "pending", "w_wide", reason="WaitingForQuota")
        # w_gang waits for quota in the second half hour only
        .event(1800, "submitted", "w_gang")
        .event(1800, "pending", "w_gang", reason="WaitingForQuota")
        .event(3600, "finished", "f1", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "f2", pod=0, node="a2", gpus=4)
        .event(3600, "finished", "f3", pod=0, node="h1", gpus=4)
    )


def pending_capped() -> RunBuilder:
    # One hour on an 8-GPU A100 node, nothing runs: wa (1 × 8) and wb (4 × 8, min_count 1)
    # wait for quota all hour. What the cluster could have run: wb one pod (8 GPUs), and the
    # two together 8 GPUs of the node's 8: 4 GPU-h each.
    return (
        RunBuilder(START, 3600, run_id="pending-capped")
        .node("n1", "A100", 8)
        .workload("wa", gpus_per_pod=8, tenant="team-a")
        .workload("wb", pods=4, min_count=1, gpus_per_pod=8, tenant="team-b")
        .event(0, "submitted", "wa")
        .event(0, "pending", "wa", reason="WaitingForQuota")
        .event(0, "submitted", "wb")
        .event(0, "pending", "wb", reason="WaitingForQuota")
    )


def admitted_latency() -> RunBuilder:
    # One hour on an 8-GPU A100 node, a filler holds 4. w_adm (4 GPUs) is admitted at 0 and not
    # placed until 1800 (the scheduler had not tried it): the 4 free GPUs are its
    # scheduling_latency (2 GPU-h), not the quota of w_q (4 GPUs, waiting for quota all hour),
    # which gets nothing in the second half either (no GPU free; before: quota 2 GPU-h).
    return (
        RunBuilder(START, 3600, run_id="admitted-latency")
        .node("a1", "A100", 8)
        .workload("f1", gpus_per_pod=4, queue=None)
        .workload("w_adm", gpus_per_pod=4, tenant="team-a", duration_s=1800)
        .workload("w_q", gpus_per_pod=4, tenant="team-b")
        .event(0, "submitted", "f1")
        .event(0, "started", "f1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "w_adm", cluster_queue="cq-a")
        .event(0, "admitted", "w_adm", cluster_queue="cq-a", flavor="a100")
        .event(0, "submitted", "w_q", cluster_queue="cq-b")
        .event(0, "pending", "w_q", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(1800, "started", "w_adm", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "f1", pod=0, node="a1", gpus=4)
        .event(3600, "finished", "w_adm", pod=0, node="a1", gpus=4)
    )


ALL = (
    finished_gang,
    preempted_with_checkpoints,
    pod_by_pod_timeout,
    reserved_then_started,
    fractional_sharing,
    mig_partitions,
    past_horizon,
    kueue_quota_and_borrowing,
    cpu_and_memory,
    mixed_idle_causes,
    unservable_beside_quota,
    multi_model_demand,
    barrier_on_its_model,
    reclaim_within_cohort,
    window_showback,
    cause_owners,
    phases,
    commitment_pool,
    gpu_efficiency,
    commitment_pool_moved,
    commitment_pool_spot,
    delay_window,
    admitted_unplaced,
    quota_fit,
    admitted_latency,
    pending_capped,
    *CAUSE_RULES,
)
