"""Hand-made runs of cost attribution IV (docs/cost-model.md §3.1 and §6.2): one rule a run,
every figure worked out in its comment. Part of scenarios.ALL (one build)."""

from __future__ import annotations

from runs import RunBuilder

START = "2026-11-02T00:00:00Z"


def pending_on_a_busy_node() -> RunBuilder:
    # Two hours on one 8-GPU A100 node. f1 holds all 8 GPUs the first hour, f2 holds 4 the
    # second. w (1 × 4 GPUs) waits for quota both hours. What the cluster could have run is
    # what was idle: 0 GPU-h in hour 0 (before: capped at the node's 8, so 4 GPU-h), 4 GPU-h
    # in hour 1: pending demand 4 GPU-h (before: 8), $8 at the A100 list price ($2).
    return (
        RunBuilder(START, 7200, run_id="pending-busy")
        .node("n1", "A100", 8)
        .workload("f1", gpus_per_pod=8, queue=None, duration_s=3600)
        .workload("f2", gpus_per_pod=4, queue=None, duration_s=3600, submit_time_s=3600)
        .workload("w", gpus_per_pod=4, tenant="team-a")
        .event(0, "submitted", "f1")
        .event(0, "started", "f1", pod=0, node="n1", gpus=8)
        .event(0, "submitted", "w", cluster_queue="cq-a")
        .event(0, "pending", "w", reason="WaitingForQuota", cluster_queue="cq-a")
        .event(3600, "finished", "f1", pod=0, node="n1", gpus=8)
        .event(3600, "submitted", "f2")
        .event(3600, "started", "f2", pod=0, node="n1", gpus=4)
        .event(7200, "finished", "f2", pod=0, node="n1", gpus=4)
    )


def shortfall_beside_free_nodes() -> RunBuilder:
    # One hour, three 8-GPU A100 nodes; f (team-x) holds a3. Kueue admitted gang g (3 × 8,
    # team-g) at 0; its placement fails (GangNotSatisfiable) until 1800, then it is requeued
    # and backs off (PodsReadyTimeout) to the end. Beside it two wholly free nodes: 16 free, 24
    # needed. Every free GPU is on a node that could host one of its pods (nothing fragmented)
    # and trying sooner would not place it: capacity_shortfall 16 GPU-h (before the fit test:
    # fragmentation 8 then scheduling_latency 8). Under the `cause` policy the platform carries
    # it ($2 × 16 = $32), never team-g; `window` gives it to team-x, the only user.
    return (
        RunBuilder(START, 3600, run_id="shortfall")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .node("a3", "A100", 8, rack="r3")
        .workload("f", gpus_per_pod=8, tenant="team-x", queue=None)
        .workload("g", pods=3, gpus_per_pod=8, tenant="team-g")
        .event(0, "submitted", "f")
        .event(0, "started", "f", pod=0, node="a3", gpus=8)
        .event(0, "submitted", "g", cluster_queue="cq-a")
        .event(0, "admitted", "g", cluster_queue="cq-a", flavor="a100")
        .event(0, "pending", "g", reason="GangNotSatisfiable", message="0 of 3 required pods placed")
        .event(1800, "requeued", "g")
        .event(1800, "pending", "g", reason="PodsReadyTimeout")
        .event(3600, "finished", "f", pod=0, node="a3", gpus=8)
    )


def fragmentation_then_latency() -> RunBuilder:
    # Two hours, two 8-GPU A100 nodes. f1 holds 4 GPUs of a1 for the first hour, f2 4 of a2
    # for both. Kueue admitted w (1 × 8) at 0; its placement fails (Unschedulable) to the end.
    # Hour 0: 4 + 4 free, no node fits its pod but packed they would: fragmentation 8 GPU-h.
    # Hour 1: a1 is wholly free, its pod fits as the GPUs are: trying again would have placed
    # it, scheduling_latency 8 GPU-h; the 4 free on a2 no pod of it could use: no_demand 4
    # (before the fit test: fragmentation 8 + 8, no_demand 4).
    return (
        RunBuilder(START, 7200, run_id="frag-latency")
        .node("a1", "A100", 8)
        .node("a2", "A100", 8, rack="r2")
        .workload("f1", gpus_per_pod=4, queue=None)
        .workload("f2", gpus_per_pod=4, queue=None, duration_s=7200)
        .workload("w", gpus_per_pod=8, tenant="team-w")
        .event(0, "submitted", "f1")
        .event(0, "started", "f1", pod=0, node="a1", gpus=4)
        .event(0, "submitted", "f2")
        .event(0, "started", "f2", pod=0, node="a2", gpus=4)
        .event(0, "submitted", "w", cluster_queue="cq-a")
        .event(0, "admitted", "w", cluster_queue="cq-a", flavor="a100")
        .event(0, "pending", "w", reason="Unschedulable", message="0/2 nodes have 8 free GPUs")
        .event(3600, "finished", "f1", pod=0, node="a1", gpus=4)
        .event(7200, "finished", "f2", pod=0, node="a2", gpus=4)
    )


def not_admitted_wait() -> RunBuilder:
    # One hour on an 8-GPU A100 node. Kueue admitted f (4 GPUs) at 0. w (1 × 4) waits from 0
    # with NoMatchingFlavor (Kueue never admitted it: no pods, no placement attempt) until it
    # is admitted and starts at 1800. Its wait is a quota wait, never placement: it fits the 4
    # free GPUs, quota 4 × 0.5 h = 2 GPU-h (before: fragmentation 2 GPU-h).
    return (
        RunBuilder(START, 3600, run_id="not-admitted")
        .node("n1", "A100", 8)
        .workload("f", gpus_per_pod=4, tenant="team-f")
        .workload("w", gpus_per_pod=4, tenant="team-w", duration_s=1800)
        .event(0, "submitted", "f", cluster_queue="cq-a")
        .event(0, "admitted", "f", cluster_queue="cq-a", flavor="a100")
        .event(0, "started", "f", pod=0, node="n1", gpus=4)
        .event(0, "submitted", "w", cluster_queue="cq-b")
        .event(0, "pending", "w", reason="NoMatchingFlavor", cluster_queue="cq-b",
               message="couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu")
        .event(1800, "admitted", "w", cluster_queue="cq-b", flavor="a100")
        .event(1800, "started", "w", pod=0, node="n1", gpus=4)
        .event(3600, "finished", "f", pod=0, node="n1", gpus=4)
        .event(3600, "finished", "w", pod=0, node="n1", gpus=4)
    )


ALL = (
    pending_on_a_busy_node,
    shortfall_beside_free_nodes,
    fragmentation_then_latency,
    not_admitted_wait,
)
