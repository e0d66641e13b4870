"""Name → factory map of in-tree plugins, per extension point."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from scheduler.plugins import fgd, gang, gpu_fit, names, packing, preemption, priority_sort, scoring

Factory = Callable[[dict[str, Any], random.Random], Any]

REGISTRY: dict[str, dict[str, Factory]] = {
    "queue_sort": {names.PRIORITY_SORT: lambda args, rng: priority_sort.PrioritySort()},
    "filter": {
        names.GPU_FIT: lambda args, rng: gpu_fit.GpuFit(),
        names.NODE_RESOURCES_FIT: lambda args, rng: gpu_fit.NodeResourcesFit(),
    },
    "score": {
        names.LEAST_ALLOCATED: lambda args, rng: scoring.LeastAllocated(),
        names.MOST_ALLOCATED: lambda args, rng: scoring.MostAllocated(),
        names.RANDOM_SCORE: lambda args, rng: scoring.RandomScore(rng),
        names.DOT_PROD: lambda args, rng: packing.DotProd(),
        names.GPU_PACKING: lambda args, rng: packing.GpuPacking(),
        names.GPU_CLUSTERING: lambda args, rng: packing.GpuClustering(),
        names.FGD: lambda args, rng: fgd.FgdScore.from_args(args),
    },
    "permit": {names.GANG_PERMIT: lambda args, rng: gang.GangPermit.from_args(args)},
    "post_filter": {
        names.WORKLOAD_PREEMPTION: lambda args, rng: preemption.WorkloadPreemption(
            str(args.get("victim_order", "priority"))
        ),
        names.DEFAULT_PREEMPTION: lambda args, rng: preemption.DefaultPreemption(),
    },
}


def known_plugins() -> dict[str, set[str]]:
    return {point: set(factories) for point, factories in REGISTRY.items()}


def build(point: str, name: str, args: dict[str, Any], rng: random.Random) -> Any:
    return REGISTRY[point][name](args, rng)
