"""Fair sharing: dominant resource shares (DRS) and the admission tournament.

Source: kueue pkg/cache/scheduler/fair_sharing.go and pkg/scheduler/fair_sharing_iterator.go
(semantics reference §4.7).

    DRS(node, extra) = 0 at a root; else for each FlavorResource the node borrows
                       (usage + extra − subtree quota > 0), summed per resource, divided by
                       what the parent could lend of that resource (Σ over flavors of
                       potential_available(parent)), × 1000; the largest ratio, ÷ weight.
                       Weight 0 while borrowing is an infinite share.

Admission order (the tournament): at every cohort, the children (sub-cohort winners and
ClusterQueue heads) compete with their share computed *after* adding the candidate's usage;
a child that would not borrow on the flavor-resources it asks for wins first
(FairSharingPrioritizeNonBorrowing), then the lower share, higher priority, older timestamp.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

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


class Entry(Protocol):
    """What the tournament needs of an admission candidate."""

    @property
    def queue(self) -> QuotaNode: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def priority(self) -> int: ...

    @property
    def timestamp(self) -> float: ...


def tournament_order(shares: FairShares, entries: Sequence[Entry]) -> Iterator[Entry]:
    """Yield entries one at a time, each the winner given the usage admitted so far
    (the caller admits between yields, and the shares are recomputed)."""
    remaining = {id(e.queue): e for e in entries}
    order = list(entries)
    while remaining:
        first = next(e for e in order if id(e.queue) in remaining)
        if first.queue.parent is None:
            del remaining[id(first.queue)]
            yield first
            continue
        root = first.queue.root()
        keys = _tournament_keys(shares, root, remaining)
        winner = _run_tournament(root, remaining, keys)
        del remaining[id(winner.queue)]
        yield winner


def _tournament_keys(shares: FairShares, root: QuotaNode, remaining: dict[int, Entry]) -> dict[tuple[int, int], tuple[object, ...]]:
    """(cohort, entry) -> comparison key of the entry's child node under that cohort."""
    keys: dict[tuple[int, int], tuple[object, ...]] = {}
    for entry in remaining.values():
        queue = entry.queue
        if queue.root() is not root:
            continue
        for fr, value in entry.usage.items():  # simulate the admission
            queue.add_usage(fr, value)
        try:
            node = queue
            for ancestor in queue.ancestors():
                share = shares.share(node)
                keys[(id(ancestor), id(entry))] = (
                    share.borrowing_on(entry.usage), share.key, -entry.priority, entry.timestamp,
                )
                node = ancestor
        finally:
            for fr, value in entry.usage.items():
                queue.remove_usage(fr, value)
    return keys


def _run_tournament(cohort: QuotaNode, remaining: dict[int, Entry], keys: dict[tuple[int, int], tuple[object, ...]]) -> Entry:
    candidates = []
    for child in cohort.child_cohorts:
        winner = _run_tournament_or_none(child, remaining, keys)
        if winner is not None:
            candidates.append(winner)
    candidates.extend(remaining[id(q)] for q in cohort.child_queues if id(q) in remaining)
    return min(candidates, key=lambda e: keys[(id(cohort), id(e))])


def _run_tournament_or_none(cohort: QuotaNode, remaining: dict[int, Entry], keys: dict[tuple[int, int], tuple[object, ...]]) -> Entry | None:
    if not _has_entries(cohort, remaining):
        return None
    return _run_tournament(cohort, remaining, keys)


def _has_entries(cohort: QuotaNode, remaining: dict[int, Entry]) -> bool:
    return any(id(q) in remaining for q in cohort.child_queues) or any(
        _has_entries(c, remaining) for c in cohort.child_cohorts
    )
