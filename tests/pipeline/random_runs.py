"""A Hypothesis strategy for small, valid, random event logs (tests/pipeline/runs.py builders).

Each workload gets a story drawn at random: it is submitted; it may wait for Kueue quota and be
admitted (perhaps borrowing); it is then placed as a whole gang, pod by pod (kube-default), or
reserved pod by pod at a barrier (gang-v1.35); a gang that cannot complete times out and queues
again; a running gang finishes, is preempted, or still runs at the horizon; a workload that does
not fit stays pending. Placement checks GPU, CPU and memory capacity over the whole holding, so
the log never over-allocates a node (`held_intervals` returns what it placed, for independent
checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st
from runs import RunBuilder

PERIOD_S = 1800
HORIZON_S = 3 * PERIOD_S
# name: (GPU model, GPUs, pricing category, CPU milli, memory MiB)
NODES = {
    "n1": ("A100", 4, "Standard", 16000, 65536),
    "n2": ("T4", 2, "Dynamic", 0, 0),
    "n3": ("A100", 4, "Committed", 8000, 32768),
}
# after the ordering key, events at one instant: releases first (like the scheduler)
EVENT_ORDER = {
    "finished": 0, "preempted": 0, "timed_out": 0, "requeued": 1, "submitted": 2, "pending": 3,
    "admitted": 4, "reserved": 5, "started": 6,
}


@dataclass
class Cluster:
    # node -> [(start, end, gpus, cpu_milli, memory_mib)]
    placed: dict[str, list[tuple[float, float, float, int, int]]] = field(
        default_factory=lambda: {name: [] for name in NODES}
    )

    def fits(self, node: str, start: float, end: float, gpus: float, cpu: int, memory: int) -> bool:
        _, node_gpus, _, node_cpu, node_memory = NODES[node]
        if cpu and node_cpu and cpu > node_cpu or memory and node_memory and memory > node_memory:
            return False
        # occupancy only changes at interval starts: check each start inside [start, end)
        points = [start] + [s for s, e, *_ in self.placed[node] if start < s < end]
        for t in points:
            used = [(g, c, m) for s, e, g, c, m in self.placed[node] if s <= t < e]
            if sum(g for g, _, _ in used) + gpus > node_gpus + 1e-9:
                return False
            if node_cpu and sum(c for _, c, _ in used) + cpu > node_cpu:
                return False
            if node_memory and sum(m for _, _, m in used) + memory > node_memory:
                return False
        return True

    def place(self, node: str, start: float, end: float, gpus: float, cpu: int, memory: int) -> None:
        self.placed[node].append((start, end, gpus, cpu, memory))


def held_intervals(cluster: Cluster) -> dict[str, list[tuple[float, float, float]]]:
    return {node: [(s, e, g) for s, e, g, _, _ in placed] for node, placed in cluster.placed.items()}


@st.composite
def event_logs(draw, run_id: str = "random") -> RunBuilder:
    builder = RunBuilder(horizon_s=float(HORIZON_S), run_id=run_id)
    for name, (model, gpus, category, cpu, memory) in NODES.items():
        builder.node(name, model, gpus, pricing_category=category, cpu_milli=cpu, memory_mib=memory)
    builder.cluster_queue("cq-a", "a100", 4, borrowing_limit=4)
    cluster = Cluster()
    events: list[tuple[float, int, int, tuple, dict]] = []

    def emit(time_s: float, event: str, workload_id: str, **kwargs) -> None:
        events.append((time_s, EVENT_ORDER[event], len(events), (event, workload_id), kwargs))

    for index in range(draw(st.integers(1, 5))):
        workload_id = f"w{index}"
        pods = draw(st.integers(1, 3))
        min_count = draw(st.integers(1, pods))
        gpus = draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]))
        model = draw(st.sampled_from([None, "A100", "T4"]))
        cpu = draw(st.sampled_from([0, 2000]))
        memory = draw(st.sampled_from([0, 8192]))
        submit = float(draw(st.integers(0, HORIZON_S - 1)))
        builder.workload(
            workload_id, pods=pods, min_count=min_count, gpus_per_pod=gpus, gpu_model=model,
            tenant=f"t{index % 2}", checkpoint_interval_s=draw(st.sampled_from([None, 300.0])),
            submit_time_s=submit, cpu_milli_per_pod=cpu, memory_mib_per_pod=memory,
            kind=draw(st.sampled_from(["training", "inference"])),
        )
        emit(submit, "submitted", workload_id)
        ready = submit
        if draw(st.booleans()):  # Kueue holds it back, then (perhaps) admits it
            emit(submit, "pending", workload_id, reason="WaitingForQuota", cluster_queue="cq-a")
            ready = submit + draw(st.integers(0, 1200))
            if ready >= HORIZON_S:
                continue
            borrowing = draw(st.booleans())
            emit(ready, "admitted", workload_id, cluster_queue="cq-a", flavor="a100",
                 reason="Borrowing" if borrowing else None)
        start = ready + draw(st.integers(0, 600))
        if start >= HORIZON_S:
            continue
        mode = draw(st.sampled_from(["gang", "barrier", "pod_by_pod"]))
        steps = [start + i * draw(st.integers(0, 300)) for i in range(pods)]
        complete = draw(st.booleans()) or mode == "gang"
        placed_pods = pods if complete else draw(st.integers(1, max(min_count - 1, 1)))
        if not complete and placed_pods >= min_count:
            complete = True
        end_kind = draw(st.sampled_from(["finished", "preempted", "open"])) if complete else "timed_out"
        end = float(min(steps[placed_pods - 1] + draw(st.integers(1, 3600)), HORIZON_S))
        if end_kind == "open":
            end = float(HORIZON_S)
        if end <= steps[placed_pods - 1]:
            continue
        candidates = [n for n, (m, *_rest) in NODES.items() if model is None or m == model]
        choice = []
        for pod in range(placed_pods):
            pod_start = start if mode == "gang" else steps[pod]
            node = next(
                (n for n in candidates if cluster.fits(n, pod_start, end, gpus, cpu, memory)), None
            )
            if node is None:
                break
            cluster.place(node, pod_start, end, gpus, cpu, memory)
            choice.append((pod, node, pod_start))
        if len(choice) < placed_pods:
            # it did not fit: undo and leave it pending
            for _pod, node, pod_start in choice:
                cluster.placed[node].remove((pod_start, end, gpus, cpu, memory))
            emit(start, "pending", workload_id, reason="Unschedulable")
            continue
        run_from = steps[placed_pods - 1] if mode == "barrier" else start
        for pod, node, pod_start in choice:
            if mode == "barrier":
                emit(pod_start, "reserved", workload_id, pod=pod, node=node, gpus=gpus)
                if complete:
                    emit(run_from, "started", workload_id, pod=pod, node=node, gpus=gpus)
            else:
                emit(pod_start, "started", workload_id, pod=pod, node=node, gpus=gpus)
        if end_kind == "open":
            continue
        for pod, node, _ in choice:
            emit(end, end_kind, workload_id, pod=pod, node=node, gpus=gpus)
        if end_kind in ("preempted", "timed_out"):
            emit(end, "requeued", workload_id)
            emit(end, "pending", workload_id, reason="GangNotSatisfiable")
    for time_s, _, _, (event, workload_id), kwargs in sorted(events, key=lambda e: e[:3]):
        builder.event(time_s, event, workload_id, **kwargs)
    builder.placed = held_intervals(cluster)  # type: ignore[attr-defined]
    return builder
