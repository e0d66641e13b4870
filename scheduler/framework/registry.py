"""Name → factory map of in-tree plugins, per extension point (kube-scheduler's
`NewInTreeRegistry`), typed by the point's protocol.

A factory takes the plugin's arguments from the profile (`[plugin_args.<Name>]`) and the
replay's seeded random generator. The registry is built by a function, not kept in a
module-level table, so nothing here is shared between replays.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.framework.interface import (
    FilterPlugin,
    PermitPlugin,
    PostFilterPlugin,
    QueueSortPlugin,
    ScorePlugin,
)
from scheduler.plugins import (
    coscheduling,
    fgd,
    gang,
    gpu_fit,
    names,
    node_resources,
    packing,
    preemption,
    priority_sort,
    scoring,
)

PluginArgs = Mapping[str, Any]


@dataclass(frozen=True)
class Registry:
    queue_sort: Mapping[str, Callable[[PluginArgs, random.Random], QueueSortPlugin]]
    filter: Mapping[str, Callable[[PluginArgs, random.Random], FilterPlugin]]
    score: Mapping[str, Callable[[PluginArgs, random.Random], ScorePlugin]]
    permit: Mapping[str, Callable[[PluginArgs, random.Random], PermitPlugin]]
    post_filter: Mapping[str, Callable[[PluginArgs, random.Random], PostFilterPlugin]]

    def names(self) -> dict[str, set[str]]:
        """Plugin names known per extension point (what a profile may list)."""
        return {point: set(getattr(self, point)) for point in POINTS}


POINTS = ("queue_sort", "filter", "score", "permit", "post_filter")


def in_tree_registry() -> Registry:
    return Registry(
        queue_sort={
            names.PRIORITY_SORT: lambda args, rng: priority_sort.PrioritySort(),
            names.COSCHEDULING: lambda args, rng: coscheduling.CoschedulingSort(),
        },
        filter={
            names.GPU_FIT: lambda args, rng: gpu_fit.GpuFit(),
            names.NODE_RESOURCES_FIT: lambda args, rng: gpu_fit.NodeResourcesFit(),
        },
        score={
            names.NODE_RESOURCES_FIT: lambda args, rng: node_resources.NodeResourcesFitScore.from_args(args),
            names.NODE_RESOURCES_BALANCED_ALLOCATION:
                lambda args, rng: node_resources.NodeResourcesBalancedAllocation.from_args(args),
            names.LEAST_ALLOCATED: lambda args, rng: scoring.LeastAllocated(),
            names.MOST_ALLOCATED: lambda args, rng: scoring.MostAllocated(),
            names.RANDOM_SCORE: lambda args, rng: scoring.RandomScore(rng),
            names.DOT_PROD: lambda args, rng: packing.DotProd(),
            names.GPU_PACKING: lambda args, rng: packing.GpuPacking(),
            names.GPU_CLUSTERING: lambda args, rng: packing.GpuClustering(),
            names.FGD: lambda args, rng: fgd.FgdScore.from_args(args),
        },
        permit={names.GANG_PERMIT: lambda args, rng: gang.GangPermit.from_args(args)},
        post_filter={
            names.WORKLOAD_PREEMPTION: lambda args, rng: preemption.WorkloadPreemption.from_args(args),
            names.DEFAULT_PREEMPTION: lambda args, rng: preemption.DefaultPreemption(rng),
            names.PRIORITY_LEVEL_SEARCH: lambda args, rng: preemption.PriorityLevelSearchPreemption.from_args(args),
        },
    )


def known_plugins() -> dict[str, set[str]]:
    return in_tree_registry().names()
