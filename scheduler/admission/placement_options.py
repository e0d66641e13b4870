"""What placement could still be asked for a Kueue workload: the flavors it could be admitted
under from now on, as the narrowings Kueue would inject (`kueue.inject_flavor`).

Used by the replay's quiescence test (`scheduler/quiescence.py`): a workload none of whose
possible flavors could hold its quorum on the empty cluster waits for good. A flavor is
possible when `flavor_assignment.assign_flavors` could pick it on some cycle: every resource
of the workload is covered by the ClusterQueue, the flavor's taints are tolerated, its GPU
label matches the pod's GPU models, and the workload's smallest admissible request (minCount
pods, partial admission) fits the queue's potential quota (else ExceedsMaxQuota forever).

Flavors are tried in order and the search stops at one that fits (whenCanBorrow
MayStopSearch; `should_try_next`): a later flavor is possible only if an earlier one could
ever fail. It cannot when the workload's request plus every other waiting workload's of the
cohort tree fits that flavor's potential quota (usage anywhere in the tree lowers what is
available by at most its amount), within nominal quota when borrowing would send the search
on. This is what keeps a workload admitted again and again under a first flavor whose
nodeLabels match no node from counting the flavors after it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from scheduler.admission.flavor_assignment import (
    TasFlavors,
    flavor_accepts,
    tas_flavors,
    topology_mismatch,
)
from scheduler.admission.objects import (
    GPU_PRODUCT_LABEL,
    GPU_RESOURCE,
    ClusterQueue,
    QueueConfig,
    ResourceFlavor,
    Topology,
)
from scheduler.admission.quota import FlavorResource, QuotaNode, QuotaTree
from scheduler.admission.workloads import AdmissionWorkload, State
from scheduler.model.cluster import NodeSelector, untolerated

if TYPE_CHECKING:
    from scheduler.workload_run import WorkloadRun

Narrowing = tuple[tuple[str, ...], NodeSelector]
_FOR_GOOD = (State.DEACTIVATED, State.MISCONFIGURED, State.FINISHED)


class PlacementOptionsOf:
    """The admission layer's `placement_options` (the `AdmissionLayer` protocol), over its
    workloads, queue configuration and cohort tree."""

    workloads: dict[str, AdmissionWorkload]
    config: QueueConfig
    tree: QuotaTree

    def placement_options(self, run: WorkloadRun) -> tuple[Hashable, Sequence[Narrowing] | None]:
        return options_in_tree(self.workloads.get(run.spec.workload_id), self.workloads.values(), self.config,
                               self.tree)


def options_in_tree(wl: AdmissionWorkload | None, workloads: Iterable[AdmissionWorkload], config: QueueConfig,
                    tree: QuotaTree) -> tuple[Hashable, Sequence[Narrowing] | None]:
    """`placement_options` for `wl`, the other waiting workloads gathered from its cohort
    tree (those that could hold quota at all: some flavor takes them on an empty tree)."""
    name = (wl.cluster_queue if wl is not None else None) or ""
    spec = config.cluster_queues.get(name)
    if spec is None:
        return placement_options(wl, None, None, config.flavors, config.topologies)
    node = tree.queue(name)
    others = []
    for other in workloads:
        other_queue = other.cluster_queue or ""
        if other is wl or not still_waiting(other) or other_queue not in config.cluster_queues:
            continue
        other_node = tree.queue(other_queue)
        if other_node.root() is node.root() and placement_options(
                other, config.cluster_queues[other_queue], other_node, config.flavors, config.topologies)[1]:
            others.append((other, other_node))
    return placement_options(wl, spec, node, config.flavors, config.topologies, others)


def still_waiting(wl: AdmissionWorkload) -> bool:
    """Kueue manages `wl` and may still admit or hold it."""
    return wl.state not in _FOR_GOOD and wl.state is not State.UNMANAGED and not wl.run.done


def placement_options(wl: AdmissionWorkload | None, spec: ClusterQueue | None, queue: QuotaNode | None,
                      flavors: Mapping[str, ResourceFlavor], topologies: Mapping[str, Topology],
                      others: Sequence[tuple[AdmissionWorkload, QuotaNode]] = ()
                      ) -> tuple[Hashable, Sequence[Narrowing] | None]:
    """(a token of the admission state the answer depends on, the narrowings); None: Kueue
    does not manage the workload, placement sees its own request. `others`: the other
    workloads of the cohort tree that are still waiting, with their ClusterQueues."""
    if wl is None or wl.state is State.UNMANAGED:
        return None, None
    token = (wl.state, len(others))
    if wl.state in _FOR_GOOD or spec is None or queue is None:
        return token, ()
    covered = {r for group in spec.resource_groups for r in group.covered_resources}
    if any(resource not in covered for resource in wl.requests):
        return token, ()
    narrowing_group: list[ResourceFlavor] | None = None
    tas = tas_flavors(spec, flavors)
    for group in spec.resource_groups:
        requested = [r for r in group.covered_resources if r in wl.requests]
        if not requested:
            continue
        possible: list[ResourceFlavor] = []
        for flavor_quotas in group.flavors:
            flavor = flavors[flavor_quotas.flavor]
            if not _possible(wl, queue, flavor, requested) or (tas is not TasFlavors.NONE and topology_mismatch(
                    wl.run.original_spec, flavor, topologies, implied=tas is TasFlavors.ALL) is not None):
                continue
            possible.append(flavor)
            if _always_fits(wl, queue, flavor.name, requested, others, spec.flavor_fungibility.try_next_when_borrowing):
                break  # the search never gets past this flavor
        if not possible:
            return token, ()
        if narrowing_group is None or GPU_RESOURCE in requested:
            narrowing_group = possible
    narrowings = []
    for flavor in narrowing_group or ():
        product = flavor.labels.get(GPU_PRODUCT_LABEL)
        narrowings.append(((product,) if product is not None else wl.run.original_spec.gpu_models, flavor.selector))
    return token, tuple(narrowings)


def _possible(wl: AdmissionWorkload, queue: QuotaNode, flavor: ResourceFlavor, requested: list[str]) -> bool:
    if untolerated(flavor.node_taints, flavor.tolerations) is not None:
        return False
    if not flavor_accepts(flavor, wl.models):
        return False
    smallest = max(1, wl.min_count)
    return all(wl.requests[r] * smallest // max(1, wl.pods) <= queue.potential_available((flavor.name, r))
               for r in requested)



def _always_fits(wl: AdmissionWorkload, queue: QuotaNode, flavor: str, requested: list[str],
                 others: Sequence[tuple[AdmissionWorkload, QuotaNode]], try_next_when_borrowing: bool) -> bool:
    """Would `flavor` hold `wl` even with every other waiting workload on it at once (their
    real usage taken out first, so none counts twice)? A what-if on the tree, undone after."""
    changes: list[tuple[QuotaNode, FlavorResource, int]] = []  # (+) added, (-) removed
    for other, node in (*others, (wl, queue)):
        for fr, value in other.usage.items():
            node.remove_usage(fr, value)
            changes.append((node, fr, -value))
    for other, node in others:
        for resource, value in other.requests.items():
            fr = (flavor, resource)
            if fr in node.nominal:
                node.add_usage(fr, value)
                changes.append((node, fr, value))
    try:
        for resource in requested:
            fr, value = (flavor, resource), wl.requests[resource]
            if value > queue.available(fr) or (try_next_when_borrowing and queue.borrowing_with(fr, value)):
                return False
        return True
    finally:
        for node, fr, value in reversed(changes):
            if value > 0:
                node.remove_usage(fr, value)
            else:
                node.add_usage(fr, -value)
