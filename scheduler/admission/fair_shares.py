"""Fair sharing: the dominant resource share (DRS) of a ClusterQueue or Cohort.

Source: kueue pkg/cache/scheduler/fair_sharing.go (semantics reference §4.7). Admission
order (`fair_sharing_order`) and fair preemption (`preemption.fair_sharing`) compare them.

    DRS(node, extra) = 0 at a root; else for each FlavorResource the node borrows
                       (usage + extra − subtree quota > 0), summed per resource, divided by
                       what the parent could lend of that resource (Σ over flavors of
                       potential_available(parent)), × 1000; the largest ratio, ÷ weight.
                       Weight 0 while borrowing is an infinite share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scheduler.admission.quota import FlavorResource, QuotaNode, QuotaTree, Usage


@dataclass(frozen=True, slots=True)
class Share:
    ratio: float  # max over resources of borrowed × 1000 / lendable, before the weight
    weight: float
    borrowed: frozenset[FlavorResource] = frozenset()

    @property
    def borrowing(self) -> bool:
        return bool(self.borrowed)

    @property
    def weighted(self) -> float:
        if self.weight == 0 and self.borrowing:
            return math.inf
        return 0.0 if self.ratio == 0 else self.ratio / self.weight

    @property
    def key(self) -> tuple[int, float]:
        """Kueue's CompareDRS as a sort key: lower is fairer to admit, higher to preempt."""
        if self.weight == 0 and self.borrowing:
            return (1, self.ratio)
        return (0, self.weighted)

    def borrowing_on(self, frs: Usage) -> bool:
        return any(frs.get(fr, 0) > 0 for fr in self.borrowed)


class FairShares:
    """DRS of any node of a tree; the lendable totals are cached (they depend on quotas
    alone, never on usage)."""

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self._lendable: dict[int, dict[str, int]] = {}

    def lendable(self, node: QuotaNode) -> dict[str, int]:
        cached = self._lendable.get(id(node))
        if cached is None:
            cached = {}
            for fr in node.root().subtree:
                cached[fr[1]] = cached.get(fr[1], 0) + node.potential_available(fr)
            self._lendable[id(node)] = cached
        return cached

    def share(self, node: QuotaNode, extra: Usage | None = None) -> Share:
        parent = node.parent
        if parent is None:
            return Share(0.0, node.weight)
        borrowed: dict[str, int] = {}
        frs = []
        usage = node.usage
        for fr, quota in node.subtree.items():
            amount = usage.get(fr, 0) + (extra.get(fr, 0) if extra else 0) - quota
            if amount > 0:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) + amount
                frs.append(fr)
        if not borrowed:
            return Share(0.0, node.weight)
        lendable = self.lendable(parent)
        ratio = 0.0
        for resource, amount in sorted(borrowed.items()):  # name order breaks ties
            lendable_amount = lendable.get(resource, 0)
            if lendable_amount > 0:
                value = amount * 1000.0 / lendable_amount
                if value > ratio:
                    ratio = value
        return Share(ratio, node.weight, frozenset(frs))
