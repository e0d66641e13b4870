"""The workloads an admission cycle preempted so far, and Kueue's `fits` over them.

Kueue's `fits` (scheduler.go) asks, for each preempting head, whether its usage still fits
its ClusterQueue with every workload preempted earlier in the cycle and its own targets
gone: upstream takes each of them off the snapshot (`SimulateWorkloadRemoval`), asks `Fits`
and puts them back, so a cycle with many preempting heads does work quadratic in them.

What one workload's removal does to the tree depends only on how much leaves its queue:
a queue hands up to its parent what it used beyond its guarantee, and removing amounts one
after another hands up, in total, exactly what removing their sum at once does (the
parent's share telescopes to (U - G)⁺ - (U - V - G)⁺ either way); a parent receives its
children's removals the same way. So the tree with a set of workloads gone is the tree with
their usage summed per queue gone, and the cycle keeps those sums as it goes: a check takes
one removal per queue and flavor-resource, however many victims the cycle has. The check
does not even write the tree: the removals walk an overlay of the usage they would leave
(`quota.usage_after_removing`), and the queue's available quota is read through it.

`replay --verify` removes every workload one by one beside each answer
(`fits_removing_each`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    usage_after_removing,
)
from scheduler.admission.workloads import AdmissionWorkload

UsageByQueue = dict[QuotaNode, dict[FlavorResource, int]]


class CycleVictims:
    """This cycle's victims by name, and their usage summed per ClusterQueue."""

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self.by_name: dict[str, AdmissionWorkload] = {}
        self.usage_by_queue: UsageByQueue = {}

    def overlaps(self, names: Iterable[str]) -> bool:
        return not self.by_name.keys().isdisjoint(names)

    def sums_of(self, targets: Iterable[AdmissionWorkload]) -> UsageByQueue:
        """`targets`' usage summed per ClusterQueue: what `fits_without` reads and, once they
        are this cycle's victims, what `add` adds (summed once for both)."""
        of_targets: UsageByQueue = {}
        add_usage_by_queue(self.tree, of_targets, targets)
        return of_targets

    def add(self, victims: Mapping[str, AdmissionWorkload], of_victims: UsageByQueue) -> None:
        """`victims` are this cycle's too; `of_victims` is `sums_of(victims.values())`."""
        self.by_name.update(victims)
        for queue, summed in of_victims.items():
            into = self.usage_by_queue.setdefault(queue, {})
            for fr, value in summed.items():
                into[fr] = into.get(fr, 0) + value

    def fits_without(self, node: QuotaNode, usage: Usage, of_targets: UsageByQueue) -> bool:
        """Whether `usage` fits in `node` with this cycle's victims and the targets summed in
        `of_targets` (`sums_of`) gone, the cycle's admissions and reservations counted;
        computed on an overlay of the usage the removals would leave (`usage_after_removing`),
        the tree never written."""
        for fr, value in usage.items():
            leaving = [(queue, summed[fr]) for sums in (self.usage_by_queue, of_targets)
                       for queue, summed in sums.items() if summed.get(fr, 0)]
            if value > max(0, node.available(fr, usage_after_removing(fr, leaving))):
                return False
        return True

    def fits_removing_each(self, node: QuotaNode, usage: Usage, targets: Iterable[AdmissionWorkload]) -> bool:
        """The same answer the plain way: every workload taken off on its own."""
        each = [(self.tree.queue(wl.cluster_queue or ""), wl.usage) for wl in [*self.by_name.values(), *targets]]
        return _fits_once_removed(self.tree, node, usage, each)


def add_usage_by_queue(tree: QuotaTree, sums: UsageByQueue,
                       workloads: Iterable[AdmissionWorkload]) -> None:
    for wl in workloads:
        summed = sums.setdefault(tree.queue(wl.cluster_queue or ""), {})
        for fr, value in wl.usage.items():
            summed[fr] = summed.get(fr, 0) + value


def _fits_once_removed(tree: QuotaTree, node: QuotaNode, usage: Usage,
                       removals: Iterable[tuple[QuotaNode, Usage]]) -> bool:
    removed = list(removals)
    for queue, part in removed:
        tree.remove(queue, part)
    try:
        return all(value <= max(0, node.available(fr)) for fr, value in usage.items())
    finally:
        for queue, part in removed:
            tree.add(queue, part)
