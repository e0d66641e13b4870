"""Fair sharing's admission order: a tournament up the cohort tree, one winner at a time.

Source: kueue pkg/scheduler/fair_sharing_iterator.go (semantics reference §4.7). At every
cohort, the children (sub-cohort winners and ClusterQueue heads) compete with their share
computed *after* adding the candidate's usage. With PrioritizePreemptorWorkloads a workload
waiting for its preemptions wins first; then a child that would not borrow on the
flavor-resources it asks for (FairSharingPrioritizeNonBorrowing), then the lower share,
higher priority, older timestamp. The shares are recomputed after every admission:
the caller admits between two yields.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

from scheduler.admission.fair_shares import FairShares
from scheduler.admission.quota import QuotaNode, Usage


class Contender(Protocol):
    """What the tournament needs of an admission candidate (the admitter's entries)."""

    @property
    def queue(self) -> QuotaNode: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def priority(self) -> int: ...

    @property
    def timestamp(self) -> float: ...

    @property
    def is_preemptor(self) -> bool: ...


C = TypeVar("C", bound=Contender)


def tournament_order(shares: FairShares, entries: Sequence[C], *, preemptors_first: bool = False) -> Iterator[C]:
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
        keys = _tournament_keys(shares, root, remaining, preemptors_first)
        winner = _run_tournament(root, remaining, keys)
        del remaining[id(winner.queue)]
        yield winner


def _tournament_keys(shares: FairShares, root: QuotaNode, remaining: dict[int, C],
                     preemptors_first: bool) -> dict[tuple[int, int], tuple[object, ...]]:
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
                    preemptors_first and not entry.is_preemptor,
                    share.borrowing_on(entry.usage), share.key, -entry.priority, entry.timestamp,
                )
                node = ancestor
        finally:
            for fr, value in entry.usage.items():
                queue.remove_usage(fr, value)
    return keys


def _run_tournament(cohort: QuotaNode, remaining: dict[int, C], keys: dict[tuple[int, int], tuple[object, ...]]) -> C:
    candidates = []
    for child in cohort.child_cohorts:
        winner = _run_tournament_or_none(child, remaining, keys)
        if winner is not None:
            candidates.append(winner)
    candidates.extend(remaining[id(q)] for q in cohort.child_queues if id(q) in remaining)
    return min(candidates, key=lambda e: keys[(id(cohort), id(e))])


def _run_tournament_or_none(cohort: QuotaNode, remaining: dict[int, C], keys: dict[tuple[int, int], tuple[object, ...]]) -> C | None:
    if not _has_entries(cohort, remaining):
        return None
    return _run_tournament(cohort, remaining, keys)


def _has_entries(cohort: QuotaNode, remaining: dict[int, C]) -> bool:
    return any(id(q) in remaining for q in cohort.child_queues) or any(
        _has_entries(c, remaining) for c in cohort.child_cohorts
    )
