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


ALL = (
    pending_on_a_busy_node,
)
