"""Placement under the artifact's rules (`fgd_rules`), pod by pod, and the report the
artifact draws from it.

The loop follows the artifact's simulator (`pkg/simulator/simulator.go` SchedulePods):
each arrival is scheduled once on the state the previous ones left (no departures, no
retries); after each, the arrived GPU demand, the allocated milli-GPUs and the cluster's
fragmentation are recorded (`pkg/simulator/analysis.go` ClusterGpuFragReport: one
``[Alloc]`` and one ``[Report]`` line per pod).

The report drawn from the samples is the artifact's too (`fgd_report.discrete_report`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from gpu_finops.experiments.fgd_report import PodSamples, PolicyResult, discrete_report
from gpu_finops.experiments.fgd_rules import (
    SCORES,
    Fragmentation,
    NodeTable,
    Pod,
    StateKey,
    pick_node,
    shared_device,
    whole_devices,
)
from gpu_finops.experiments.fgd_workload import Arrival
from scheduler.model import Cluster
from scheduler.model.workload import MILLI
from scheduler.plugins.fgd import TaskType

ARTIFACT_POLICIES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")
# -gpusel per policy (experiments/run_scripts/generate_run_scripts.py, resolved by
# scripts/generate_config_and_run.py): FGD picks its own device, Random a random one.
GPU_SELECTION = {"Random": "random", "FGD": "fgd"}
# How a score tie between nodes is broken: the artifact's (the first node in a seeded
# order of the nodes), the cluster file's order, or a tied node drawn uniformly.
TIE_BREAKS = ("seeded-order", "lowest-index", "random")


def node_ranks(cluster: Cluster, rng: random.Random) -> np.ndarray:
    """The artifact's tie order: nodes sorted by name, each given a position of a seeded
    permutation (it prefixes node names with it; the smallest name wins a tie)."""
    by_name = sorted(range(len(cluster.nodes)), key=lambda i: cluster.nodes[i].name)
    permutation = list(range(len(by_name)))
    rng.shuffle(permutation)
    rank = np.empty(len(by_name), dtype=np.int64)
    for position, node in enumerate(by_name):
        rank[node] = permutation[position]
    return rank


class ArtifactScheduler:
    """One policy's scheduler over a cluster: the node and devices for a pod, and the
    cluster's fragmentation as pods are placed."""

    def __init__(self, cluster: Cluster, policy: str, typical: tuple[tuple[TaskType, float], ...], *,
                 rank: np.ndarray, rng: random.Random, tie_break: str = "seeded-order") -> None:
        if policy not in ARTIFACT_POLICIES:
            raise ValueError(f"unknown policy {policy!r}; known: {', '.join(ARTIFACT_POLICIES)}")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie break {tie_break!r}; known: {', '.join(TIE_BREAKS)}")
        self.policy = policy
        self.table = NodeTable(cluster)
        self.rank = np.arange(len(self.table), dtype=np.int64) if tie_break == "lowest-index" else rank
        self.rng = rng
        self.tie_rng = rng if tie_break == "random" else None
        self.measure = Fragmentation(typical)
        self.score = SCORES.get(policy)
        self.selection = GPU_SELECTION.get(policy, "best")
        keys: list[StateKey] = [self.table.state_key(n) for n in range(len(self.table))]
        self.states = np.array([self.measure.state_id(k) for k in keys], dtype=np.int64)
        self.node_fragmentation = np.array([self.measure.of_state(k) for k in keys])

    def choose(self, pod: Pod) -> tuple[int, tuple[int, ...]] | None:
        """The node (and its devices) the policy gives ``pod``, or None if none fits."""
        nodes = self.table.feasible(pod)
        if not len(nodes):
            return None
        if self.policy == "Random":  # RandomScore: one feasible node drawn, the only one above 0
            node = int(nodes[self.rng.randrange(len(nodes))])
        elif self.score is not None:
            node = pick_node(nodes, self.score(self.table, pod, nodes), self.rank, self.tie_rng)
        else:
            node = pick_node(nodes, self.measure.fgd_scores(pod, self.states[nodes]), self.rank, self.tie_rng)
        if pod.shared:
            values = self.measure.fgd_choice(int(self.states[node]), pod)[1] if self.selection == "fgd" else frozenset()
            return node, (shared_device(self.table, node, pod, self.selection, self.rng, values),)
        return node, whole_devices(self.table, node, pod) if pod.gpus else ()

    def place(self, node: int, pod: Pod, devices: tuple[int, ...]) -> None:
        self.table.place(node, pod, devices)
        key = self.table.state_key(node)
        self.states[node] = self.measure.state_id(key)
        self.node_fragmentation[node] = self.measure.of_state(key)


def run_artifact_policy(
    cluster: Cluster,
    arrivals: Sequence[Arrival],
    policy: str,
    typical: tuple[tuple[TaskType, float], ...],
    *,
    rank: np.ndarray,
    rng: random.Random,
    seed: int = 42,
    tie_break: str = "seeded-order",
    progress: Callable[[int, int], None] | None = None,
) -> PolicyResult:
    """Schedule ``arrivals`` one by one under ``policy``; the discrete report of the run."""
    capacity = cluster.total_gpus
    if capacity <= 0:
        raise ValueError("the cluster has no GPUs")
    scheduler = ArtifactScheduler(cluster, policy, typical, rank=rank, rng=rng, tie_break=tie_break)
    samples = PodSamples()
    arrived = allocated = 0
    for index, arrival in enumerate(arrivals, start=1):
        pod = Pod.of(arrival.request)
        arrived += pod.total_milli
        choice = scheduler.choose(pod)
        if choice is not None:
            scheduler.place(choice[0], pod, choice[1])
            allocated += pod.total_milli
        fragmented = float(scheduler.node_fragmentation.sum())
        samples.record(arrived, allocated, fragmented, capacity * MILLI - allocated, choice is not None)
        if progress and index % 500 == 0:
            progress(index, len(arrivals))
    return discrete_report(policy, seed, capacity, samples)
