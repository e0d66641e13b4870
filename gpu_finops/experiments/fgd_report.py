"""What a run of the FGD study reports, and how seeds are summed up.

A run records one sample per arrival, after it was scheduled (or not): the arrived GPU
demand, the allocated milli-GPUs, the fragmented and the idle milli-GPUs (the artifact's
`pkg/simulator/analysis.go` ClusterGpuFragReport logs them once per pod).

The report is the artifact's (`experiments/analysis/merge_alloc_discrete.py` and
`merge_frag_ratio_discrete.py`): for each whole percent X of arrived demand (arrived
milli-GPUs / capacity, rounded half to even), the mean over the arrivals that round to X
of the allocation ratio (allocated / capacity in %, each rounded to two decimals; the mean
rounded to two) and of the fragmentation ratio (fragmented / idle milli-GPUs in %, each
rounded to two decimals). A percent no arrival rounds to takes the arrivals within one
percent of it. Over seeds, each point is the mean and the sample standard deviation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean, stdev

import numpy as np

from scheduler.model.workload import MILLI

# The points the summary reports (the and the paper's): allocation at 100 % and
# 130 % of demand, fragmentation ratio at 90 %.
ALLOCATION_AT = (100, 130)
FRAGMENTATION_AT = (90,)


@dataclass
class PodSamples:
    """One entry per arrival, after it was scheduled (or not)."""

    arrived_milli: list[int] = field(default_factory=list)  # cumulative GPU demand
    allocated_milli: list[int] = field(default_factory=list)
    fragmented_milli: list[float] = field(default_factory=list)
    idle_milli: list[int] = field(default_factory=list)
    placed: list[bool] = field(default_factory=list)

    def record(self, arrived: int, allocated: int, fragmented: float, idle: int, placed: bool) -> None:
        self.arrived_milli.append(arrived)
        self.allocated_milli.append(allocated)
        self.fragmented_milli.append(fragmented)
        self.idle_milli.append(idle)
        self.placed.append(placed)


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One whole percent of arrived demand in one run."""

    policy: str
    seed: int
    arrived_pct: int
    pods: int  # arrivals averaged over
    allocation_pct: float
    fragmentation_pct: float
    fragmented_gpus: float
    placed_pods: int  # by the last arrival averaged over
    failed_pods: int


@dataclass
class PolicyResult:
    """One policy under one seed: its points, one per whole percent of arrived demand."""

    policy: str
    seed: int
    capacity_gpus: int
    points: list[CurvePoint] = field(default_factory=list)
    seconds: float = 0.0  # wall
    cpu_seconds: float = 0.0  # this process's CPU time: what a busy machine does not inflate

    def at(self, pct: int) -> CurvePoint:
        """The point at `pct` % of arrived demand. On a cluster so small that one pod is more
        than 1 % of it, arrivals skip percents, and the artifact's last arrival may stop short
        of the target: the state at `pct` is then the last point below it."""
        below = [point for point in self.points if point.arrived_pct <= pct]
        if not below:
            raise KeyError(f"{self.policy}, seed {self.seed}: no arrival near {pct} % of capacity")
        return below[-1]

    @property
    def last(self) -> CurvePoint:
        return self.points[-1]


def discrete_report(policy: str, seed: int, capacity_gpus: int, samples: PodSamples) -> PolicyResult:
    """The artifact's report of one run: a point per whole percent of arrived demand."""
    result = PolicyResult(policy, seed, capacity_gpus)
    if not samples.arrived_milli:
        return result
    arrived_pct = np.round(np.asarray(samples.arrived_milli) / capacity_gpus / 10, 0)
    allocation = np.round(np.asarray(samples.allocated_milli) / capacity_gpus / 10, 2)
    idle = np.asarray(samples.idle_milli, dtype=float)
    fragmented = np.asarray(samples.fragmented_milli, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        fragmentation = np.round(np.where(idle > 0, 100 * fragmented / idle, 0.0), 2)
    placed = np.cumsum(samples.placed)
    for pct in range(int(arrived_pct.max()) + 1):
        chosen = np.flatnonzero(arrived_pct == pct)
        if not len(chosen):
            chosen = np.flatnonzero((arrived_pct >= pct - 1) & (arrived_pct <= pct + 1))
            if not len(chosen):
                continue
        last = int(chosen[-1])
        result.points.append(CurvePoint(
            policy, seed, pct, len(chosen),
            round(float(allocation[chosen].mean()), 2),
            float(fragmentation[chosen].mean()),
            float(fragmented[chosen].mean()) / MILLI,
            int(placed[last]), last + 1 - int(placed[last]),
        ))
    return result


@dataclass(frozen=True, slots=True)
class Spread:
    """One figure over seeds: mean, sample standard deviation (0 for one seed), extremes."""

    mean: float
    std: float
    runs: int
    low: float
    high: float

    @staticmethod
    def of(values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("no values to summarise")
        return Spread(fmean(values), stdev(values) if len(values) > 1 else 0.0, len(values), min(values), max(values))

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.std:.2f}"


@dataclass(frozen=True)
class PolicySummary:
    """One policy over all its seeds."""

    policy: str
    seeds: tuple[int, ...]
    allocation: dict[int, Spread]  # at each percent of ALLOCATION_AT
    fragmentation: dict[int, Spread]  # at each percent of FRAGMENTATION_AT
    seconds: Spread
    cpu_seconds: Spread


def summarise(results: Sequence[PolicyResult]) -> list[PolicySummary]:
    """Per policy (in first-seen order): mean ± spread over its seeds at the report points."""
    by_policy: dict[str, list[PolicyResult]] = {}
    for result in results:
        by_policy.setdefault(result.policy, []).append(result)
    return [
        PolicySummary(
            policy,
            tuple(r.seed for r in runs),
            {pct: Spread.of([r.at(pct).allocation_pct for r in runs]) for pct in ALLOCATION_AT},
            {pct: Spread.of([r.at(pct).fragmentation_pct for r in runs]) for pct in FRAGMENTATION_AT},
            Spread.of([r.seconds for r in runs]),
            Spread.of([r.cpu_seconds for r in runs]),
        )
        for policy, runs in by_policy.items()
    ]


@dataclass(frozen=True, slots=True)
class MeanPoint:
    """One policy at one percent of arrived demand, over all its seeds."""

    policy: str
    arrived_pct: int
    allocation: Spread
    fragmentation: Spread


def mean_curves(results: Sequence[PolicyResult]) -> list[MeanPoint]:
    """Per policy and percent of arrived demand, the mean and spread over seeds of the
    allocation and fragmentation ratios (at the percents every seed of the policy reached)."""
    grouped: dict[tuple[str, int], list[CurvePoint]] = {}
    runs: dict[str, int] = {}
    for result in results:
        runs[result.policy] = runs.get(result.policy, 0) + 1
        for point in result.points:
            grouped.setdefault((result.policy, point.arrived_pct), []).append(point)
    return [
        MeanPoint(policy, pct, Spread.of([p.allocation_pct for p in points]),
                  Spread.of([p.fragmentation_pct for p in points]))
        for (policy, pct), points in grouped.items()
        if len(points) == runs[policy]
    ]
