"""The FGD fragmentation study (Weng et al., USENIX ATC '23, §6): `gpu-finops experiment fgd`.

An openb pod list is placed pod by pod on an empty cluster under six scoring policies
(Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD), once per seed, and each run
reports the GPU allocation and fragmentation ratios against the arrived GPU demand
(`fgd_report`).

Two rule sets (``--rules``):

- ``artifact`` (default): the published artifact's rules, one by one
  (`hkust-adsl/kubernetes-scheduler-simulator`; `fgd_workload`, `fgd_rules`,
  `fgd_engine`). Its seeds cannot be matched (Go's math/rand), its distribution can:
  run ten seeds (``--seeds 42-51``) and compare means.
- ``project``: the project's earlier rules, on the scheduler's own framework and score
  plugins (`fgd_project`).

docs/traces.md gives each definition with the artifact file it follows, and every
difference between the two rule sets with what it changes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpu_finops.experiments import fgd_engine, fgd_project
from gpu_finops.experiments.fgd_report import PolicyResult
from gpu_finops.experiments.fgd_workload import (
    Arrival,
    artifact_arrivals,
    resample_arrivals,
    target_workload,
    typical_pods,
)
from scheduler.errors import InputError
from scheduler.model import Cluster
from scheduler.plugins.fgd import TargetWorkload, TaskType
from scheduler.trace.generic import RejectedRow
from scheduler.trace.inventories import read_any_cluster
from scheduler.trace.openb import OpenbPod, read_openb_pods

POLICIES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")
RULES = ("artifact", "project")
DEFAULT_TARGET_SHARE = 1.3  # -tune 1.3
# Per rule set: its own tie rule and the share of pods FGD's target workload covers.
DEFAULT_TIE_BREAK = {"artifact": "seeded-order", "project": "lowest-index"}
DEFAULT_POPULARITY = {"artifact": 0.95, "project": 1.0}


@dataclass(frozen=True)
class StudyOptions:
    rules: str = "artifact"
    tie_break: str | None = None  # None: the rule set's own
    popularity: float | None = None  # None: the rule set's own
    target_share: float = DEFAULT_TARGET_SHARE

    def __post_init__(self) -> None:
        if self.rules not in RULES:
            raise InputError("--rules", f"unknown rule set {self.rules!r}; known: {', '.join(RULES)}")
        ties = fgd_engine.TIE_BREAKS if self.rules == "artifact" else fgd_project.TIE_BREAKS
        if self.tie_break is not None and self.tie_break not in ties:
            raise InputError("--tie-break", f"{self.tie_break!r} is not a tie rule of --rules {self.rules}; "
                                            f"known: {', '.join(ties)}")
        if self.popularity is not None and not 0 < self.popularity <= 1:
            raise InputError("--popularity", f"must be in (0, 1], got {self.popularity}")
        if not self.target_share > 0:
            raise InputError("--target", f"must be > 0 (a share of the GPU capacity), got {self.target_share}")

    @property
    def ties(self) -> str:
        return self.tie_break or DEFAULT_TIE_BREAK[self.rules]

    @property
    def popularity_share(self) -> float:
        return self.popularity if self.popularity is not None else DEFAULT_POPULARITY[self.rules]


@dataclass(frozen=True)
class StudyInputs:
    pods_path: Path
    cluster_path: Path
    cluster: Cluster
    pods: tuple[OpenbPod, ...]
    pod_rows: int
    rejected: tuple[RejectedRow, ...]
    options: StudyOptions


@dataclass(frozen=True)
class SeedRun:
    """Everything a seed fixes before the first pod is scheduled, shared by the policies:
    the arrivals, FGD's target workload, the tie order and the generator's state."""

    seed: int
    arrivals: list[Arrival]
    typical: tuple[tuple[TaskType, float], ...] | None  # artifact rules
    workload: TargetWorkload | None  # project rules
    rank: np.ndarray
    rng_state: tuple[Any, ...] | None  # artifact rules: the generator after the node order

    @property
    def task_types(self) -> int:
        return len(self.typical) if self.typical is not None else len(self.workload.types) if self.workload else 0


def read_inputs(pods_path: Path, cluster_path: Path, options: StudyOptions) -> StudyInputs:
    """Read an openb pod list and a cluster (any inventory format); clear errors if the
    study cannot run on them."""
    pods_path, cluster_path = Path(pods_path), Path(cluster_path)
    cluster = read_any_cluster(cluster_path)
    if cluster.total_gpus <= 0:
        raise InputError(cluster_path, "the cluster has no GPUs")
    parsed = read_openb_pods(pods_path)
    if not any(p.total_gpu_milli for p in parsed.pods):
        raise InputError(pods_path, "no usable pod asks for a GPU: the demand can never reach the target")
    return StudyInputs(pods_path, cluster_path, cluster, parsed.pods, parsed.input_rows, parsed.rejected, options)


def prepare_seed(inputs: StudyInputs, seed: int) -> SeedRun:
    """The arrivals and the rest a seed fixes. Under the artifact's rules one generator
    drives, in its order, the shuffle, the tuning draws, the node order and then the
    scheduling draws (Random's node, a random device)."""
    options, cluster = inputs.options, inputs.cluster
    if options.rules == "project":
        arrivals = resample_arrivals(inputs.pods, cluster.total_gpus, options.target_share, seed)
        workload = target_workload(arrivals, options.popularity_share)
        return SeedRun(seed, arrivals, None, workload, np.arange(len(cluster.nodes)), None)
    rng = random.Random(seed)
    arrivals = artifact_arrivals(inputs.pods, cluster.total_gpus, options.target_share, rng)
    rank = fgd_engine.node_ranks(cluster, rng)
    typical = typical_pods(inputs.pods, round(options.popularity_share * 100, 9))
    return SeedRun(seed, arrivals, typical, None, rank, rng.getstate())


def run_one(inputs: StudyInputs, run: SeedRun, policy: str,
            progress: Callable[[int, int], None] | None = None) -> PolicyResult:
    """One policy under one seed, timed."""
    began, began_cpu = time.perf_counter(), time.process_time()
    options = inputs.options
    if options.rules == "project":
        assert run.workload is not None
        result = fgd_project.run_policy(inputs.cluster, run.arrivals, policy, run.workload, seed=run.seed,
                                        tie_break=options.ties, progress=progress)
    else:
        assert run.typical is not None and run.rng_state is not None
        rng = random.Random()
        rng.setstate(run.rng_state)  # each policy continues the seed's stream from the same point
        result = fgd_engine.run_artifact_policy(inputs.cluster, run.arrivals, policy, run.typical, rank=run.rank,
                                                rng=rng, seed=run.seed, tie_break=options.ties, progress=progress)
    result.seconds = time.perf_counter() - began
    result.cpu_seconds = time.process_time() - began_cpu
    # The artifact reports the percents 0 to 100 × tune (merge_alloc_discrete.py: 0–130);
    # a last pod may carry the demand past it.
    top = round(options.target_share * 100)
    result.points = [p for p in result.points if p.arrived_pct <= top]
    return result


def parse_seeds(text: str) -> tuple[int, ...]:
    """``42``, ``42-51`` or ``42,45,50-51`` → the seeds (non-negative), in order, each once."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        first, dash, last = part.partition("-")
        try:
            if dash:
                low, high = int(first), int(last)
                if high < low:
                    raise ValueError
                seeds.extend(range(low, high + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise InputError("--seeds", f"not a seed, a range like 42-51 or a list of them: {part!r}") from None
    return tuple(dict.fromkeys(seeds))


def check_policies(names: Sequence[str]) -> tuple[str, ...]:
    unknown = [p for p in names if p not in POLICIES]
    if unknown or not names:
        raise InputError("--policies", f"unknown policy {unknown[0] if unknown else ''!r}; known: {', '.join(POLICIES)}")
    return tuple(names)
